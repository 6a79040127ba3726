"""The truth tables' declared precision and their reader (issue 29 item 3): a column stored at a declared step reads
back within half of it, the files say so in their metadata, and the reader computes the columns the files no longer
store (the RGB image's distorted flow) from the stored ones and the lens that ``render.json`` records."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simready.measurement.observe import observe
from simready.measurement.options import ObserveOptions
from simready.measurement.writers import LZ4_COLUMNS, PLAIN_INTEGERS, declared, differenced, parquet_bytes
from simready.testing.street import street_sample
from simready.truth.flow import distorted_flow
from simready.truth.precision import DECLARED_STEPS, FLOW_STEP_PX, quantized
from simready.truth.reader import DERIVED_COLUMNS, FRAME_KINDS, TruthReader, TruthReadError
from simready.truth.stored import (FLAG_BITS, FLAGS, BODY_COLUMNS, PIXEL_FROM, STEP_DIFFERENCES, differenced_columns,
                                   expanded, flag_bits, pack_flags, stored, undifferenced, unpack_flags)

SMALL = {"width_px": 96, "height_px": 48, "line_time_s": 1e-5, "azimuth_steps": 64, "channels": 4}
STEPS = sorted({step for columns in DECLARED_STEPS.values() for step in columns.values()})


@settings(max_examples=60, deadline=None)
@given(step=st.sampled_from(STEPS), data=st.data())
def test_a_declared_column_reads_back_within_half_its_step(step, data):
    """Rounded to the step, stored as float32 in Parquet (byte-stream-split + zstd) and read back: exactly the
    rounded value, within step / 2 of the computed float64 one, for every magnitude below 2**24 steps (the
    range :mod:`simready.truth.precision` declares: barycentrics < 16, flow < 16 384 px, motion < 65 536 px/s)."""
    limit = 2.0 ** 24 * step - step
    x = np.array(data.draw(st.lists(st.floats(-limit, limit), min_size=1, max_size=50)), np.float64)
    q = quantized(x, step)
    back = pq.read_table(pa.BufferReader(parquet_bytes(pa.table({"v": q})))).column("v").to_numpy()
    assert back.dtype == np.float32 and np.array_equal(back, q)
    assert np.all(np.abs(back.astype(np.float64) - x) <= step / 2)
    assert np.array_equal(np.isnan(quantized(np.array([np.nan, 1.0]), step)), [True, False])


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(sorted(DECLARED_STEPS)), data=st.data())
def test_declared_columns_stored_as_step_differences_read_back_the_same_values(kind, data):
    """A declared-step column is stored as int32 differences of its multiples of the step (NaN null, carrying the
    previous multiple) and summed back on reading to the same float32 values, bit for bit but zero's sign (−0.0
    reads as 0.0); a column with an infinite value or a multiple of 2³⁰ steps or more stays float32."""
    names = list(DECLARED_STEPS[kind])
    columns, rows = {}, data.draw(st.integers(1, 60))
    for name in names:
        step = DECLARED_STEPS[kind][name]
        limit = 2.0 ** 29 * step  # float32 keeps it below 2³⁰ steps
        values = data.draw(st.lists(st.one_of(st.floats(-limit, limit), st.just(np.nan), st.just(-0.0)),
                                    min_size=rows, max_size=rows))
        columns[name] = quantized(np.array(values), step)
    table = pa.table(columns)
    stored_table = differenced(kind, table)
    assert differenced_columns(kind, stored_table) == names
    assert all(stored_table.schema.field(n).type == pa.int32() for n in names)
    written = parquet_bytes(stored_table, None, (), names, split=names)
    back = undifferenced(kind, pq.read_table(pa.BufferReader(written)))
    for name in names:
        a, b = table.column(name).to_numpy(), back.column(name).to_numpy()
        assert b.dtype == np.float32 and np.array_equal(a, b, equal_nan=True), name
        assert np.array_equal(np.signbit(a) & (a != 0), np.signbit(b) & (b != 0)), name
    # An infinite value or a multiple too large for int32 differences: that column as it was.
    step = DECLARED_STEPS[kind][names[0]]
    for odd in (np.inf, 2.0 ** 31 * step):
        wide = table.set_column(0, names[0], pa.array(np.append(table.column(0).to_numpy()[1:], odd), pa.float32()))
        kept = differenced(kind, wide)
        assert kept.schema.field(names[0]).type == pa.float32() and differenced_columns(kind, kept) == names[1:]
        assert _bytes(undifferenced(kind, kept), names[0]) == _bytes(wide, names[0])


def test_observed_tables_store_their_declared_columns_as_step_differences(folders):
    """In the files: int32 differences, byte-stream-split, named in the metadata; through the reader: float32."""
    reader = TruthReader(folders[0.0])
    for kind, steps in DECLARED_STEPS.items():
        path = reader.path("front_camera", 1, kind)
        raw = pq.read_table(path)
        assert reader.metadata("front_camera", 1, kind)[STEP_DIFFERENCES] == list(steps)
        enc = _encodings(path)
        for name in steps:
            assert raw.schema.field(name).type == pa.int32() and "BYTE_STREAM_SPLIT" in enc[name], (kind, name)
            values = reader.table("front_camera", 1, kind, [name]).column(name)
            assert values.type == pa.float32()
            assert _bytes(values, None) == _bytes(undifferenced(kind, raw), name)
            assert _bytes(values, None) == _bytes(reader.table("front_camera", 1, kind), name)


def _bytes(table_or_column, name):
    """A float column's values as bytes (NaN and all): what equal means for them."""
    column = table_or_column if name is None else table_or_column.column(name)
    return column.to_numpy().tobytes()


def test_each_table_states_its_precision_and_derived_columns():
    table = pa.table({"flow_du_px": pa.array([0.0], pa.float32()), "flow_dv_px": pa.array([0.0], pa.float32()),
                      "depth_target_m": pa.array([1.0], pa.float32()), "flags": pa.array([1], pa.uint8())})
    said = declared("forward", table)
    assert said["precision"] == {c: {"step": FLOW_STEP_PX, "max_abs_error": FLOW_STEP_PX / 2}
                                 for c in ("flow_du_px", "flow_dv_px")}
    assert set(said["derived"]) == set(DERIVED_COLUMNS["forward"])
    assert said["flags"] == {"valid": 0, "occluded": 1, "out_of_frame": 2, "behind_camera": 3, "beyond_range": 4,
                             "absent": 5, "static": 6}
    # what a table stores itself is not derived: a table of the earlier layout (pixel, the booleans) names the
    # distorted flow only
    earlier = table.drop_columns(["flags"]).add_column(0, "pixel", pa.array([0], pa.int32()))
    assert set(declared("forward", earlier)["derived"]) == {"flow_du_distorted_px", "flow_dv_distorted_px"}
    assert "derived" not in declared("surface", pa.table({"bary_u": [0.5]}))
    assert set(declared("surface", pa.table({"body": pa.array([0], pa.int32())}))["derived"]) == {
        "entity", "geometry_hash", "element"}


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """The street observed with a strong lens and with none (the rig's lens set by override, as users set it)."""
    built, rig, trace = street_sample(0.17, **SMALL)
    out = {}
    for k1 in (-0.2, 0.0):
        out[k1] = tmp_path_factory.mktemp("truth") / "obs"
        observe(built, rig, trace, out[k1], options=ObserveOptions(passes=("id", "truth"), video=False),
                overrides={"front_camera.distortion_k1": k1, "front_camera.distortion_k2": 0.0})
    return out


def test_the_reader_derives_the_distorted_flow_through_the_recorded_lens(folders):
    lens, flat = TruthReader(folders[-0.2]), TruthReader(folders[0.0])
    assert lens.camera("front_camera").distortion_k1 == -0.2 and flat.camera("front_camera").distortion_k1 == 0.0
    for direction in ("forward", "backward"):
        stored = pq.read_table(lens.path("front_camera", 1, direction))
        assert not any("distorted" in c for c in stored.column_names)  # not in the file
        t = lens.table("front_camera", 1, direction)
        at = stored.column_names.index(FLAGS)
        assert t.column_names == (["pixel"] + stored.column_names[:at] + list(FLAG_BITS[direction])
                                  + stored.column_names[at + 1:] + ["flow_du_distorted_px", "flow_dv_distorted_px"])
        want = distorted_flow(lens.camera("front_camera"), *(t.column(c).to_numpy()
                                                            for c in ("pixel", "flow_du_px", "flow_dv_px")))
        got = np.stack([t.column("flow_du_distorted_px").to_numpy(), t.column("flow_dv_distorted_px").to_numpy()], 1)
        np.testing.assert_array_equal(got, want)
        pinhole = np.stack([t.column("flow_du_px").to_numpy(), t.column("flow_dv_px").to_numpy()], 1)
        assert np.nanmax(np.abs(got - pinhole)) > 0.01  # the lens matters
        f = flat.table("front_camera", 1, direction, ["flow_du_distorted_px", "flow_du_px"])
        np.testing.assert_array_equal(f.column(0).to_numpy(), f.column(1).to_numpy().astype(np.float64))
        assert lens.metadata("front_camera", 1, direction)["precision"]["flow_du_px"]["step"] == FLOW_STEP_PX
    only = lens.table("front_camera", 1, "forward", ["flow_dv_distorted_px"])
    assert only.column_names == ["flow_dv_distorted_px"]
    assert only.column(0).equals(lens.table("front_camera", 1, "forward").column("flow_dv_distorted_px"))
    surface = lens.table("front_camera", 1, "surface")
    assert lens.metadata("front_camera", 1, "surface")["precision"]["bary_u"]["max_abs_error"] == 2.0 ** -21
    image = lens.dense("front_camera", 1, "surface", "depth_m")
    assert image.shape == (48, 96) and np.isfinite(image).sum() == surface.num_rows
    assert lens.clip_table("front_camera", "truth.tracks").num_rows > 0


def test_a_missing_column_or_file_is_one_line_naming_it(folders):
    reader = TruthReader(folders[0.0])
    with pytest.raises(TruthReadError, match=r"forward\.parquet.*flow_du_distorted"):
        reader.table("front_camera", 1, "forward", ["flow_du_distorted"])
    with pytest.raises(TruthReadError, match="00000099.surface.parquet"):
        reader.table("front_camera", 99, "surface")
    with pytest.raises(TruthReadError, match="rig.roof_lidar"):
        reader.camera("roof_lidar")


def test_columns_without_nulls_are_stored_required_and_read_back_equal():
    table = pa.table({"pixel": pa.array([0, 1, 5], pa.int32()), "flow_du_px": pa.array([0.5, -1.0, 2.0], pa.float32()),
                      "valid": [True, False, True], "entity": pa.array(["a", "b", "a"]).dictionary_encode(),
                      "gap": pa.array([1.0, None, 3.0], pa.float32())})
    back = pq.read_table(pa.BufferReader(parquet_bytes(table, {"camera": "c"})))
    assert [f.nullable for f in back.schema] == [False, False, False, False, True]
    assert [f.nullable for f in pq.read_schema(pa.BufferReader(parquet_bytes(table)))] == [False] * 4 + [True]
    for name in table.column_names:
        assert back.column(name).to_pylist() == table.column(name).to_pylist(), name
    assert back.schema.metadata[b"simready.truth"] == b'{"camera": "c"}'


def _encodings(path_or_buffer) -> dict[str, set[str]]:
    meta = pq.ParquetFile(path_or_buffer).metadata
    return {meta.schema.column(i).name: set(meta.row_group(0).column(i).encodings) for i in range(meta.num_columns)}


def test_integer_columns_named_plain_are_stored_plain_and_read_back_equal():
    """Identities and rows that jump between pixels are stored PLAIN (zstd finds their runs), the ordered
    ``pixel`` delta-coded, floats byte-stream-split: same values either way."""
    rng = np.random.default_rng(7)
    table = pa.table({"pixel": pa.array(np.arange(0, 3000, 3), pa.int32()),
                      "triangle": pa.array(rng.integers(0, 50, 1000), pa.int32()),
                      "bary_u": pa.array(rng.random(1000), pa.float32())})
    data = parquet_bytes(table, plain=("triangle",))
    enc = _encodings(pa.BufferReader(data))
    assert "DELTA_BINARY_PACKED" in enc["pixel"] and "PLAIN" in enc["triangle"] and "BYTE_STREAM_SPLIT" in enc["bary_u"]
    assert "DELTA_BINARY_PACKED" in _encodings(pa.BufferReader(parquet_bytes(table)))["triangle"]
    assert pq.read_table(pa.BufferReader(data)).equals(pq.read_table(pa.BufferReader(parquet_bytes(table))))


def test_observed_truth_tables_store_their_plain_integers_plain(folders):
    reader = TruthReader(folders[0.0])
    assert "DELTA_BINARY_PACKED" in _encodings(reader.path("front_camera", 1, "surface"))["pixel"]
    for kind, plain in PLAIN_INTEGERS.items():
        enc = _encodings(reader.path("front_camera", 1, kind))
        for name in plain:
            assert "PLAIN" in enc[name] and "DELTA_BINARY_PACKED" not in enc[name], (kind, name)


def _codecs(path_or_buffer) -> dict[str, str]:
    meta = pq.ParquetFile(path_or_buffer).metadata
    return {meta.schema.column(i).name: meta.row_group(0).column(i).compression for i in range(meta.num_columns)}


def test_columns_named_lz4_are_compressed_so_and_read_back_equal(folders):
    """The run-like columns of :data:`LZ4_COLUMNS` are LZ4-compressed (Arrow writes Parquet's LZ4_RAW codec and reads
    its name back as ``LZ4``), the others (if any) zstd; a table encoded with those columns LZ4 and with every column
    zstd
    reads back bit for bit the table it was, runs, NaN and -0.0 included."""
    reader = TruthReader(folders[0.0])
    rng = np.random.default_rng(3)
    for kind, fast in LZ4_COLUMNS.items():
        path = reader.path("front_camera", 1, kind)
        codecs = _codecs(path)
        assert {c for name, c in codecs.items() if name in fast} == {"LZ4"}, kind
        assert {c for name, c in codecs.items() if name not in fast} <= {"ZSTD"}, kind
        # The file's columns, each with a stretch of random values of its type (and NaN, -0.0 in the floats) spliced
        # in, so the codecs see both the runs they are chosen for and values without any.
        table = pq.read_table(path).replace_schema_metadata(None)
        columns = []
        for column in table.columns:
            values = column.to_numpy().copy()
            k = len(values) // 3
            if values.dtype.kind == "f":
                values[k:2 * k] = rng.normal(size=k).astype(values.dtype)
                values[k], values[k + 1] = np.nan, -0.0
            else:
                values[k:2 * k] = rng.integers(0, 200, size=k).astype(values.dtype)
            columns.append(pa.array(values, type=column.type))
        made = pa.Table.from_arrays(columns, schema=table.schema)
        plain = PLAIN_INTEGERS.get(kind, ())
        for lz4 in (fast, ()):
            back = pq.read_table(pa.BufferReader(parquet_bytes(made, None, plain, lz4)))
            others = {"ZSTD"} if set(made.column_names) - set(lz4) else set()
            assert set(_codecs(pa.BufferReader(parquet_bytes(made, None, plain, lz4))).values()) == (
                {"LZ4"} | others if lz4 else {"ZSTD"}), kind
            for name in made.column_names:
                assert back.column(name).to_numpy().tobytes() == made.column(name).to_numpy().tobytes(), (kind, name)


def test_pixel_is_stored_once_per_tick_and_the_flags_as_bits_and_both_read_back(folders):
    """Every table of a tick has the surface table's rows: ``pixel`` is stored there only, and a correspondence's
    seven booleans are one uint8 ``flags`` column whose bits the metadata names; the reader returns ``pixel`` and the
    named booleans, each bit exactly."""
    reader = TruthReader(folders[0.0])
    pixel = reader.table("front_camera", 1, "surface", ["pixel"]).column("pixel")
    assert pixel.type == pa.int32() and len(pixel) > 100
    for kind in ("motion", "forward", "backward"):
        raw = pq.read_table(reader.path("front_camera", 1, kind))
        assert "pixel" not in raw.column_names and PIXEL_FROM[kind] == "surface"
        assert reader.table("front_camera", 1, kind).column("pixel").equals(pixel)
        assert reader.table("front_camera", 1, kind, ["pixel"]).column_names == ["pixel"]
        meta = reader.metadata("front_camera", 1, kind)
        assert "surface" in meta["rows"] and meta["derived"]["pixel"]["from"] == ["surface:pixel"]
    # Parquet's own types give every per-frame table's schema back: Arrow's serialized schema (which would repeat the
    # metadata, the legend of bodies included) is not stored beside it.
    for kind in FRAME_KINDS:
        file = pq.ParquetFile(reader.path("front_camera", 1, kind))
        assert set(file.metadata.metadata) == {b"simready.truth"}, kind
    # The surface table's strings: one int32 body index per sample, named by the frame's legend in the metadata.
    raw = pq.read_table(reader.path("front_camera", 1, "surface"))
    legend = reader.metadata("front_camera", 1, "surface")["bodies"]
    assert raw.column("body").type == pa.int32() and not any(c in raw.column_names for c in BODY_COLUMNS)
    assert set(raw.column("body").to_numpy()) == set(legend["body"]) and len(set(legend["entity"])) > 3
    surface = reader.table("front_camera", 1, "surface")
    assert surface.column_names == ["pixel", "compact_id", *BODY_COLUMNS, "triangle", "bary_u", "bary_v", "depth_m"]
    row = {p: k for k, p in enumerate(legend["body"])}
    for name in BODY_COLUMNS:
        assert surface.column(name).type == pa.dictionary(pa.int32(), pa.string())
        want = [legend[name][row[p]] for p in raw.column("body").to_numpy()]
        assert surface.column(name).to_pylist() == want, name
    assert reader.table("front_camera", 1, "surface", ["element", "pixel"]).column_names == ["element", "pixel"]
    with pytest.raises(TruthReadError, match="no such column"):
        reader.table("front_camera", 1, "surface", ["body"])  # read as what it stands for
    for direction in ("forward", "backward"):
        raw = pq.read_table(reader.path("front_camera", 1, direction))
        flags = raw.column(FLAGS).to_numpy()
        assert raw.column(FLAGS).type == pa.uint8() and not any(c in raw.column_names for c in FLAG_BITS[direction])
        assert reader.metadata("front_camera", 1, direction)["flags"] == flag_bits(direction)
        t = reader.table("front_camera", 1, direction)
        for bit, name in enumerate(FLAG_BITS[direction]):
            assert t.column(name).type == pa.bool_()
            np.testing.assert_array_equal(t.column(name).to_numpy(), (flags >> bit) & 1 == 1, err_msg=name)
        assert not (flags & 0x80).any()
        valid, hidden = t.column("valid").to_numpy(), t.column(FLAG_BITS[direction][1]).to_numpy()
        assert valid.any() and not (valid & hidden).any()
        only = reader.table("front_camera", 1, direction, ["static", "flow_dv_distorted_px"])
        assert only.column_names == ["static", "flow_dv_distorted_px"] and only.column(0).equals(t.column("static"))


def test_files_of_the_earlier_layout_read_the_same(folders, tmp_path):
    """A folder written before (``pixel`` in every table, the booleans as columns) reads as this one does."""
    import shutil
    reader = TruthReader(folders[0.0])
    old = tmp_path / "old"
    shutil.copytree(folders[0.0], old)
    earlier = TruthReader(old)
    for kind, some in (("motion", "pixel"), ("forward", "valid"), ("backward", "valid"), ("surface", "entity")):
        whole = reader.table("front_camera", 1, kind)
        plain = whole.drop_columns([c for c in whole.column_names if "distorted" in c])
        pq.write_table(plain.replace_schema_metadata(pq.read_schema(reader.path("front_camera", 1, kind)).metadata),
                       earlier.path("front_camera", 1, kind))
        assert earlier.table("front_camera", 1, kind).equals(whole), kind
        assert earlier.table("front_camera", 1, kind, [some]).equals(whole.select([some]))


def test_stored_and_expanded_are_inverse_and_a_wrong_pixel_column_is_refused(folders, tmp_path):
    rng = np.random.default_rng(3)
    n = 1000
    bools = {name: rng.random(n) < 0.3 for name in FLAG_BITS["backward"]}
    flags = pack_flags("backward", bools)
    assert flags.dtype == np.uint8 and flags.max() < 128
    for name, column in unpack_flags("backward", flags).items():
        np.testing.assert_array_equal(column.to_numpy(zero_copy_only=False), bools[name])
    logical = pa.table({"pixel": pa.array(np.arange(n) * 2, pa.int32()), "flow_du_px": pa.array(rng.random(n),
                                                                                                  pa.float32()),
                        **{k: pa.array(v) for k, v in bools.items()}})
    packed = stored("backward", logical)
    assert packed.column_names == ["flow_du_px", FLAGS]
    assert expanded("backward", packed, logical.column("pixel").to_numpy()).equals(logical)
    assert stored("backward", packed).equals(packed) and expanded("backward", logical).equals(logical)
    with pytest.raises(ValueError, match="999 rows"):
        expanded("backward", packed, np.arange(999, dtype=np.int32))
    # A surface table that is not the tick's (another row count): one line naming the file.
    import shutil
    broken = tmp_path / "broken"
    shutil.copytree(folders[0.0], broken)
    reader = TruthReader(broken)
    surface = pq.read_table(reader.path("front_camera", 1, "surface"))
    pq.write_table(surface.slice(1), reader.path("front_camera", 1, "surface"))
    with pytest.raises(TruthReadError, match=r"00000001\.forward\.parquet.*rows"):
        reader.table("front_camera", 1, "forward")
    reader.path("front_camera", 1, "surface").unlink()
    with pytest.raises(TruthReadError, match=r"00000001\.surface\.parquet.*missing"):
        reader.table("front_camera", 1, "motion", ["pixel"])
    assert reader.table("front_camera", 1, "forward", ["flow_du_px", "valid"]).num_rows > 0  # needs no pixel
    assert set(FRAME_KINDS) == {"surface", *PIXEL_FROM}
    # A body the legend does not name: one line naming the file.
    surface = pq.read_table(reader.path("front_camera", 1, "forward").with_name("00000002.surface.parquet"))
    bad = surface.set_column(surface.column_names.index("body"), "body",
                             pa.array(np.full(surface.num_rows, 10 ** 6, np.int32)))
    pq.write_table(bad, reader.path("front_camera", 2, "surface"))
    with pytest.raises(TruthReadError, match=r"00000002\.surface\.parquet.*body 1000000 is not in the legend"):
        reader.table("front_camera", 2, "surface", ["entity"])
