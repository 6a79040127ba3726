"""Each sensor sample's files: the camera passes, a LiDAR sweep, a radar frame, and a camera frame's
perception truth (SPEC §10, §11), named by :class:`simready.artifacts.layout.ObservationDir`.

File formats (SPEC §10, encoded by :mod:`simready.sensors_hw.camera`): ``depth.f32.bin`` is raw
little-endian float32, H×W row-major, ``near_m / z_depth`` with 0 where nothing is seen; ``id.png`` is
8-bit RGB compact ids, id = R + 256·G + 65536·B; ``semantic.png`` is 8-bit RGB with the class id in the
blue channel (0 nothing, 255 the ontology's ignore class). Truth tables are Parquet (zstd; LZ4 for the columns of
:data:`LZ4_COLUMNS`), one row per visible sample, ``pixel`` = v·W + u (:func:`simready.truth.flow.dense`; stored in
the surface table only, the other tables of the tick share its rows), a correspondence's booleans one ``flags`` bit
field (:mod:`simready.truth.stored`), their metadata stating each column's declared precision and the columns
:class:`simready.truth.reader.TruthReader` derives instead of reading.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from numpy.typing import NDArray

from simready.artifacts.layout import ObservationDir
from simready.measurement.folder import OutputFolder
from simready.measurement.options import PNG_COMPRESS_LEVEL, ObserveOptions
from simready.sensors_hw.camera import (DEPTH_ZSTD_SUFFIX, FramePasses, depth_file_bytes, encode_depth, id_png_bytes,
                                        rgb_png_bytes, semantic_png_bytes)
from simready.sensors_hw.lidar import LidarScan, ply_bytes, ply_name
from simready.sensors_hw.models import Rig
from simready.sensors_hw.radar import RadarContributors, RadarDetections, contributors_parquet, radar_csv_bytes
from simready.sensors_hw.scene_build import BuiltScene
from simready.truth.correspondence import FrameView, Samples
from simready.truth.flow import flow_table_of
from simready.truth.motion_field import motion_field
from simready.truth.kernels.tables import step_differences
from simready.truth.precision import DECLARED_STEPS, declared_precision
from simready.truth.reader import DERIVED_COLUMNS
from simready.truth.stored import FLAG_BITS, PIXEL_FROM, STEP_DIFFERENCES, differenced_columns, flag_bits, stored
from simready.truth.tracks import TrackBuilder

#: Parquet codec for truth tables: zstd at its first fast level (-1), far smaller than raw. Against level 1 on a
#: 1280x720 street frame's four tables: 69 -> 64 ms of encoding, 5.63 -> 5.65 MB (the byte-stream-split floats'
#: noisy low bytes are where both spend their time, and neither finds much there).
TRUTH_COMPRESSION = ("zstd", -1)

#: Rows the Parquet writer hands its column encoders at a time (Arrow's default: 1 024). A frame's table is
#: 10^5-10^6 rows; in batches of 65 536 the four tables of a 1280x720 street frame took 56 -> 51 ms to encode, the
#: same bytes (a page still closes at the first batch past its 1 MB, which fixed-width columns reach on a multiple
#: of both batch sizes).
WRITE_BATCH_ROWS = 65536

#: Integer columns of the per-frame truth tables stored PLAIN instead of delta-coded: identities and rows jump
#: from pixel to pixel, where delta coding was slower and larger than compressing the plain values (zstd then, LZ4
#: now: :data:`LZ4_COLUMNS`; with zstd on a 1280x720 street frame: compact_id 5.2 -> 1.6 ms and 28 -> 9 KB,
#: triangle 4.4 -> 1.2 ms and 29 -> 18 KB, target_row 4.5 -> 1.6 ms and 16 -> 12 KB). ``pixel`` runs in order and
#: stays delta-coded (6 KB).
PLAIN_INTEGERS = {"surface": ("compact_id", "body", "triangle"), "forward": ("target_row", "flags"),
                  "backward": ("target_row", "flags")}

#: Columns of the per-frame truth tables compressed with LZ4 (Arrow's LZ4_RAW codec) instead of zstd: those whose
#: values are mostly runs (identities, rows, the flags, the ordered pixel, and the scene displacement and depth rate,
#: exactly zero on static geometry), where LZ4 finds nearly what zstd does in about half its time (a 1280x720 street
#: frame: compact_id, body, triangle, target_row, flags, disp_*, ddepth_dt_mps 1.2-1.5 -> 0.4-0.7 ms each for
#: +11-25 KB; pixel delta-coded 3.0 -> 2.5 ms for +2 KB); the declared-step columns, stored as step differences
#: (:func:`differenced`: small integers, byte-stream-split; zstd on their byte planes took
#: 2-3x LZ4's time for 10-20 % fewer bytes); and the depths (``depth_m``, ``depth_target_m``: float32 noise in their
#: low byte planes, 4.2 -> 2.5 ms each for +130 KB).
LZ4_COLUMNS = {"surface": ("pixel", "compact_id", "body", "triangle", "bary_u", "bary_v", "depth_m"),
               "motion": ("du_dt_pxps", "dv_dt_pxps", "ddepth_dt_mps"),
               **{direction: ("target_row", "disp_x_m", "disp_y_m", "disp_z_m", "flags", "flow_du_px", "flow_dv_px",
                              "depth_target_m") for direction in ("forward", "backward")}}

frame_name = ObservationDir.frame_name


# --- encoders ---------------------------------------------------------------------------------


def write_parquet(where: Any, table: pa.Table, metadata: Mapping[str, Any] | None = None,
                  plain: Collection[str] = (), lz4: Collection[str] = (), split: Collection[str] = ()) -> None:
    """A truth table as Parquet: zstd, floats byte-stream-split and integers delta-coded (pixel-ordered
    samples make both compress several times better than plain) but those named in ``plain``
    (:data:`PLAIN_INTEGERS`), strings as dictionaries; the columns named in ``lz4`` compressed with LZ4 instead of
    zstd (:data:`LZ4_COLUMNS`); the integer columns named in ``split`` byte-stream-split (a truth table's step
    differences, small integers whose high bytes are zero: their planes compress to almost nothing); no column
    statistics (readers read whole frames; computing them was a fifth of the encoding time). A column without
    nulls (every truth column as computed) is stored as a required field: no definition levels to encode, which
    was about 30 % of the encoding time; a column holding nulls stays optional. Arrow's schema is stored beside
    only where Parquet's types would not give it back (:func:`_parquet_types_suffice`: dictionaries, ...)."""
    fields = [f.with_nullable(False) if f.nullable and col.null_count == 0 else f
              for f, col in zip(table.schema, table.columns)]
    meta = table.schema.metadata
    if metadata:
        meta = {b"simready.truth": json.dumps(metadata, sort_keys=True).encode()}
    table = pa.Table.from_arrays(table.columns, schema=pa.schema(fields, metadata=meta))  # no copy (a cast copies)
    encoding, dictionary = {}, []
    for f in table.schema:
        if pa.types.is_dictionary(f.type) or pa.types.is_string(f.type):
            dictionary.append(f.name)
        elif pa.types.is_floating(f.type):
            encoding[f.name] = "BYTE_STREAM_SPLIT"
        elif pa.types.is_integer(f.type):
            encoding[f.name] = ("BYTE_STREAM_SPLIT" if f.name in split else "PLAIN" if f.name in plain
                                else "DELTA_BINARY_PACKED")
    codec, level = TRUTH_COMPRESSION
    fast = [name for name in table.column_names if name in lz4]
    options: dict[str, Any] = dict(compression={name: "lz4" if name in fast else codec for name in table.column_names}
                                   if fast else codec,
                                   compression_level={name: level for name in table.column_names if name not in fast}
                                   if fast else level,
                                   use_dictionary=dictionary or False, column_encoding=encoding or None,
                                   write_statistics=False, write_batch_size=WRITE_BATCH_ROWS)
    if not _parquet_types_suffice(table.schema):
        pq.write_table(table, where, **options)
        return
    # pq.write_table without Arrow's schema would drop the key-value metadata too: written by hand here, as
    # pq.write_table does (a path it started is removed on failure).
    try:
        with pq.ParquetWriter(where, table.schema.remove_metadata(), store_schema=False, **options) as writer:
            writer.write_table(table)
            if meta:
                writer.add_key_value_metadata({k.decode(): v.decode() for k, v in meta.items()})
    except Exception:
        if isinstance(where, (str, os.PathLike)):
            Path(where).unlink(missing_ok=True)
        raise


def _parquet_types_suffice(schema: pa.Schema) -> bool:
    """Whether Parquet's own column types give ``schema`` back on reading (integers of every width and sign,
    float32/64, booleans, strings, nullability and the key-value metadata): then the file need not also hold Arrow's
    serialized schema, which repeats the metadata (a surface table's legend of bodies, twice over in every file)."""
    return all(pa.types.is_integer(t) or t in (pa.float32(), pa.float64(), pa.bool_(), pa.string())
               for t in schema.types)


def parquet_bytes(table: pa.Table, metadata: Mapping[str, Any] | None = None, plain: Collection[str] = (),
                  lz4: Collection[str] = (), split: Collection[str] = ()) -> bytes:
    """:func:`write_parquet` into memory."""
    sink = pa.BufferOutputStream()
    write_parquet(sink, table, metadata, plain, lz4, split)
    return sink.getvalue().to_pybytes()


def parquet_buffer(table: pa.Table, metadata: Mapping[str, Any] | None = None, plain: Collection[str] = (),
                   lz4: Collection[str] = (), split: Collection[str] = ()) -> memoryview:
    """:func:`write_parquet` into memory, without copying the result into a ``bytes``: what the writer thread hashes
    and writes in one go (a file written by the Parquet writer was read back to hash it)."""
    sink = pa.BufferOutputStream()
    write_parquet(sink, table, metadata, plain, lz4, split)
    return memoryview(sink.getvalue())


# --- sensor samples ---------------------------------------------------------------------------


def write_camera(folder: OutputFolder, camera: str, tick: int, frame: FramePasses, near_m: float,
                 depth_format: str = "f32", png_level: int = PNG_COMPRESS_LEVEL) -> None:
    """The camera passes of one frame that were rendered (``near_m``: the camera's near plane, which the depth
    file's encoding divides by; ``depth_format``: the published ``f32`` or the opt-in compressed ``f32.zst``,
    :data:`~simready.sensors_hw.camera.DEPTH_FORMATS`; ``png_level``: the PNGs' zlib level)."""
    if frame.rgb is not None:
        rgb = frame.rgb
        folder.put_later(frame_name(camera, tick, "rgb"), lambda: rgb_png_bytes(rgb, png_level), camera, tick, "rgb")
    if frame.depth is not None:
        h, w = frame.depth.shape
        raw = encode_depth(frame.depth, near_m)
        if depth_format == "f32":
            folder.put(frame_name(camera, tick, "depth"), depth_file_bytes(raw), camera, tick, "depth", shape=[h, w],
                       dtype="float32-le")
        else:  # compressed on the writer thread
            folder.put_later(frame_name(camera, tick, "depth") + DEPTH_ZSTD_SUFFIX,
                             lambda: depth_file_bytes(raw, depth_format), camera, tick, "depth", shape=[h, w],
                             dtype="float32-le")
    if frame.semantic is not None:
        semantic = frame.semantic
        folder.put_later(frame_name(camera, tick, "semantic"), lambda: semantic_png_bytes(semantic, png_level),
                         camera, tick, "semantic")
    if frame.id is not None:
        ids = frame.id
        folder.put_later(frame_name(camera, tick, "id"), lambda: id_png_bytes(ids, png_level), camera, tick,
                         "id")


def write_lidar(folder: OutputFolder, lidar: str, tick: int, sweep: LidarScan, options: ObserveOptions,
                **extra: Any) -> None:
    """One sweep as PLY (``options.lidar_format``; a compressed one as ``<tick>.ply.zst``), formatted and written
    on the writer thread like the camera passes (hashed from its bytes, not read back); ``extra``: its entry's
    time and pose."""
    rel, fmt = frame_name(lidar, tick, "lidar"), options.lidar_format
    folder.put_later(ply_name(rel, fmt), lambda: ply_bytes(sweep, fmt, with_time=options.lidar_time_column),
                     lidar, tick, "lidar", points=len(sweep), **extra)


def write_radar(folder: OutputFolder, radar: str, tick: int, det: RadarDetections,
                contributors: RadarContributors | None = None) -> None:
    """One radar frame's detections as CSV, and beside it the surfaces behind each (``<tick>.contributors.parquet``)."""
    folder.put(frame_name(radar, tick, "radar"), radar_csv_bytes(det), radar, tick, "radar", detections=len(det))
    if contributors is not None:
        # Encoded and written on the writer thread, like the camera passes.
        folder.put_later(frame_name(radar, tick, "radar.contributors"), lambda: contributors_parquet(contributors),
                         radar, tick, "radar.contributors", detections=len(det))


# --- perception truth -------------------------------------------------------------------------


class CameraTruth:
    """Per camera: the previous frame's samples (for the correspondence pair) and the track builder."""

    def __init__(self, built: BuiltScene, rig: Rig, camera: str, pool: ThreadPoolExecutor | None = None) -> None:
        self.built, self.rig, self.camera, self.pool = built, rig, camera, pool
        self.prev: tuple[Samples, NDArray[np.float64]] | None = None
        self.tracks = TrackBuilder(built.scene, camera, ignore=built.ignore)

    def frame(self, folder: OutputFolder, view: FrameView, frame: FramePasses) -> None:
        """Truth products of one frame: surface identity, motion field, both correspondences with the
        previous frame, and the frame's track observations."""
        scene = self.built.scene
        self.tracks.add(view, frame.hits)
        samples = Samples.of_hits(scene, view, frame.hits)
        meta = {"camera": self.camera, "tick": view.tick, "t0_s": view.t0_s,
                "line_time_s": 0.0 if view.global_shutter else view.model.line_time_s,
                "width_px": view.intrinsics.width_px, "height_px": view.intrinsics.height_px,
                "pixel": "v * width_px + u", "row_time": "t0_s + v * line_time_s"}
        surface, bodies = samples.table(scene), samples.legend(scene)
        folder.put_later(frame_name(self.camera, view.tick, "truth.surface"),
                         lambda: truth_parquet("surface", surface, {**meta, "bodies": bodies}), self.camera,
                         view.tick, "truth.surface")
        field = motion_field(scene, self.rig, samples)
        motion, dv_dt = stored("motion", field.table()), field.dv_dt_pxps  # pixel: the surface table's
        del field
        folder.put_later(frame_name(self.camera, view.tick, "truth.motion_field"),
                         lambda: truth_parquet("motion", motion, meta), self.camera, view.tick, "truth.motion_field")
        if self.prev is not None:
            (a, a_dv), b = self.prev, samples
            dt = b.view.t0_s - a.view.t0_s
            pairs = ((a, a_dv, b, "forward", 1.0), (b, dv_dt, a, "backward", -1.0))

            def table_of(src: Samples, src_dv: NDArray[np.float64], dst: Samples, direction: str,
                         sign: float) -> tuple[pa.Table, dict[str, int]]:
                # Where the motion field says each row goes starts the target-row iteration (speed only);
                # visibility is read from the target's own buffers, re-casting only what they cannot decide.
                return flow_table_of(scene, src, dst, direction, ignore=self.built.ignore, dv_dt_pxps=src_dv,
                                     dt_s=sign * dt)

            # The two directions are independent computations: with a pool the backward one runs on its
            # thread while this one does the forward (Embree and most numpy kernels release the GIL);
            # each projection is dropped once tabled.
            later = self.pool.submit(table_of, *pairs[1]) if self.pool is not None else None
            tables = [table_of(*pairs[0]), later.result() if later is not None else table_of(*pairs[1])]
            for (src, _, dst, direction, _), (table, counts) in zip(pairs, tables):
                m = {**meta, "tick": src.view.tick, "t0_s": src.view.t0_s, "target_tick": dst.view.tick,
                     "target_t0_s": dst.view.t0_s, "direction": direction, "visibility": counts}
                pass_name = f"truth.{direction}"
                folder.put_later(frame_name(self.camera, src.view.tick, pass_name),
                                 lambda table=table, m=m, kind=direction: truth_parquet(kind, table, m), self.camera,
                                 src.view.tick, pass_name, target_tick=dst.view.tick)
        self.prev = (samples, dv_dt)

    def finish(self, folder: OutputFolder) -> None:
        """The camera's whole-clip tables: tracks and track events."""
        meta = {"camera": self.camera, "track_id": "<entity id>#<life>"}
        folder.put(ObservationDir.truth_table_name(self.camera, "truth.tracks"),
                   parquet_bytes(self.tracks.tracks_table(), meta), self.camera, None, "truth.tracks")
        folder.put(ObservationDir.truth_table_name(self.camera, "truth.track_events"),
                   parquet_bytes(self.tracks.events_table(), meta), self.camera, None, "truth.track_events")


def truth_parquet(kind: str, table: pa.Table, metadata: Mapping[str, Any]) -> memoryview:
    """A per-frame truth table of ``kind`` as its file stores it, encoded (on the writer thread): its declared-step
    columns as step differences (:func:`differenced`), ``metadata`` and what the table
    states about its columns (:func:`declared`) beside its rows, each column's encoding and codec
    (:data:`PLAIN_INTEGERS`, :data:`LZ4_COLUMNS`, the step differences byte-stream-split)."""
    table = differenced(kind, table, _scratch(table.num_rows))
    return parquet_buffer(table, {**metadata, **declared(kind, table)}, PLAIN_INTEGERS.get(kind, ()),
                          LZ4_COLUMNS[kind], split=differenced_columns(kind, table))


def differenced(kind: str, table: pa.Table, scratch: Sequence[NDArray[np.int32]] = ()) -> pa.Table:
    """A per-frame table of ``kind`` with its declared-step float32 columns as int32 step differences, each in its
    place (null where the value is NaN); a column that cannot be (an infinite value, 2³⁰ steps or more) and every
    other column are left as they are. The inverse of :func:`simready.truth.stored.undifferenced`.

    ``scratch``: int32 arrays at least the table's length, one per declared column of ``kind`` in order, to hold the
    differences instead of new arrays (the table returned then views them: use it before they are written again; a
    frame-sized new array each call cost page faults, ~1 ms a column)."""
    for k, (name, step) in enumerate(DECLARED_STEPS.get(kind, {}).items()):
        if name not in table.column_names or table.schema.field(name).type != pa.float32():
            continue
        values = table.column(name).to_numpy()
        out = scratch[k] if k < len(scratch) else np.empty(len(values), np.int32)
        diff, nan, n_nan, ok = step_differences(values, step, out)
        if not ok:
            continue
        column = pa.array(diff, pa.int32(), mask=nan if n_nan else None)
        table = table.set_column(table.column_names.index(name), name, column)
    return table


_SCRATCH = threading.local()


def _scratch(n: int) -> tuple[NDArray[np.int32], NDArray[np.int32]]:
    """This thread's two int32 arrays for a table's step differences (:func:`truth_parquet`), at least ``n`` long,
    kept across tables: the table that views them is encoded before the thread's next table writes them."""
    held = getattr(_SCRATCH, "arrays", None)
    if held is None or len(held[0]) < n:
        held = (np.empty(n, np.int32), np.empty(n, np.int32))
        _SCRATCH.arrays = held
    return held


def declared(kind: str, table: pa.Table) -> dict[str, Any]:
    """What a truth table of ``kind`` states about its columns beside its rows: ``precision`` (the columns stored at
    a declared step, :mod:`simready.truth.precision`), ``step_differences`` (those of them stored as int32
    step differences, :func:`differenced`), ``derived`` (the columns not stored because
    :class:`simready.truth.reader.TruthReader` computes them, each with what it derives from: ``surface:pixel``
    the same tick's surface table's column, ``metadata:bodies`` the surface table's legend of its bodies (which the
    writer adds, :meth:`~simready.truth.correspondence.Samples.legend`), ``render.json:rig lens`` the camera's
    recorded lens), ``rows`` (whose
    rows these are) and on a correspondence ``flags`` (each boolean's bit in the stored ``flags`` column,
    :mod:`simready.truth.stored`)."""
    out: dict[str, Any] = {"precision": declared_precision(kind, table.column_names)}
    # The columns this table leaves to the reader: not in it, and what each derives from in it (or derived too).
    names, of_kind = set(table.column_names), DERIVED_COLUMNS.get(kind, {})
    derived = {name: sources for name, sources in of_kind.items()
               if name not in names and all(s in names or ":" in s or s in of_kind for s in sources)}
    if derived:
        out["derived"] = {name: {"from": list(sources), "by": "simready.truth.reader.TruthReader"}
                          for name, sources in derived.items()}
    if kind in PIXEL_FROM:
        out["rows"] = f"the {PIXEL_FROM[kind]} table's of this tick, in its order (its pixel column is theirs)"
    if kind in FLAG_BITS:
        out["flags"] = flag_bits(kind)
    steps = differenced_columns(kind, table)
    if steps:
        out[STEP_DIFFERENCES] = steps
    return out
