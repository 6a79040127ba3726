"""A sweep's file (SPEC §10): PLY with columns ``x y z intensity instance_id`` (and ``t`` when asked), ASCII or
binary little-endian, each with its opt-in zstd variant; the writer's exact ``%.Nf`` ASCII body and the reader.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
import zstandard

from simready.artifacts.layout import ZSTD_SUFFIX
from simready.common.atomic import write_bytes_atomic
from simready.common.scoped import ScopedCache
from simready.common.scratch import work_array
from simready.sensors_hw.frames import SensorType, frame_declaration
from simready.sensors_hw.lidar.sweep import LidarScan


PLY_COLUMNS = ("x", "y", "z", "intensity", "instance_id")

_PLY_TYPES = {"x": ("float", "<f4"), "y": ("float", "<f4"), "z": ("float", "<f4"),
              "intensity": ("float", "<f4"), "instance_id": ("uint", "<u4"), "t": ("double", "<f8")}


def _columns(points: LidarScan | Mapping[str, Any], with_time: bool) -> dict[str, NDArray[Any]]:
    if isinstance(points, LidarScan):
        p = points.points_sensor
        cols = {"x": p[:, 0], "y": p[:, 1], "z": p[:, 2], "intensity": points.intensity,
                "instance_id": points.instance_id, "t": points.t_s - points.t0_s}
    else:
        cols = dict(points)
    names = PLY_COLUMNS + (("t",) if with_time else ())
    return {k: np.asarray(cols[k]) for k in names}


#: The PLY header's statement of the ``t`` column (SPEC §10).
TIME_COMMENT = ("comment t: seconds since the sweep's sampleTime (its start, results.json); each point is in the "
                "sensor frame at its beam's firing time; columns fire in azimuth order, counter-clockwise from +x "
                "seen from above")


def _header(fmt: str, count: int, names: Iterable[str]) -> str:
    props = "".join(f"property {_PLY_TYPES[k][0]} {k}\n" for k in names)
    time = f"{TIME_COMMENT}\n" if "t" in names else ""
    return (f"ply\nformat {fmt} 1.0\ncomment simready {frame_declaration(SensorType.lidar)}\n{time}"
            f"element vertex {count}\n{props}end_header\n")


#: ASCII columns: decimals of a fixed-point column (``%.Nf``), None for an integer one (``%d``).
_ASCII_DECIMALS = {"x": 4, "y": 4, "z": 4, "intensity": 4, "instance_id": None, "t": 6}


#: LiDAR file formats: ASCII PLY (SPEC §10, the default), binary little-endian PLY (same columns), and each
#: one's opt-in compressed variant ``<tick>.ply.zst``: the same PLY bytes as one zstd frame, so ``zstd -d``
#: gives the uncompressed format's file byte for byte (an ASCII sweep ~4x smaller).
LIDAR_FORMATS = ("ascii", "binary", "ascii.zst", "binary.zst")
#: The compressed variants' suffix, after the PLY's name.
PLY_ZSTD_SUFFIX = ZSTD_SUFFIX
#: zstd level of the compressed PLY: level 1 is ~4x on an ASCII sweep in ~30 ms; level 9 gains 6 % for 8x the time.
PLY_ZSTD_LEVEL = 1


def ply_bytes(points: LidarScan | Mapping[str, Any], fmt: str = "ascii", *, with_time: bool = False) -> bytes:
    """A sweep's file in :data:`LIDAR_FORMATS` ``fmt`` (the ``.zst`` ones compress the plain format's bytes)."""
    if fmt not in LIDAR_FORMATS:
        raise ValueError(f"LiDAR format must be one of {LIDAR_FORMATS}, got {fmt!r}")
    plain, _, zst = fmt.partition(".")
    cols = _columns(points, with_time)
    if plain == "ascii":
        header = _header("ascii", len(cols["x"]), cols).encode("ascii")
        data = _ascii_lines(cols, header)
    else:
        rec = np.empty(len(cols["x"]), dtype=[(k, _PLY_TYPES[k][1]) for k in cols])
        for k, v in cols.items():
            rec[k] = v
        data = _header("binary_little_endian", len(rec), cols).encode("ascii") + rec.tobytes()
    if not zst:
        return data

    return zstandard.ZstdCompressor(level=PLY_ZSTD_LEVEL).compress(data)


def ply_name(name: str, fmt: str) -> str:
    """The file name of a sweep published as ``name`` (``<tick>.ply``) in format ``fmt``."""
    return name + PLY_ZSTD_SUFFIX if fmt.endswith(".zst") else name


def write_ply_ascii(path: str | Path, points: LidarScan | Mapping[str, Any], *, with_time: bool = False) -> Path:
    """ASCII PLY with columns exactly ``x y z intensity instance_id`` (+ ``t``), SPEC §10: ``%.4f`` for
    coordinates and intensity, ``%d`` for the id, ``%.6f`` for the time, one space between, one line per point."""
    return write_bytes_atomic(path, ply_bytes(points, "ascii", with_time=with_time))


def ascii_body(cols: Mapping[str, NDArray[Any]]) -> bytes:
    """The ASCII body of :func:`write_ply_ascii`: each column's ``%d`` / ``%.Nf`` as integers in one compiled pass
    a column (:func:`simready.sensors_hw.lidar_kernels.fixed_point_parts`, the values float64 cannot round
    certainly from Python's own formatting), then every line written in one compiled pass
    (:func:`simready.sensors_hw.lidar_kernels.ascii_rows`).

    Why not a string per point: that was 3 of a sample's 19 s of observation; digit planes stacked and
    transposed by numpy were still 8 % of the default suite's observation; the columns' rounding as numpy passes
    (:func:`fixed_point_parts_numpy`) and the lines into a fresh worst-case buffer were still 4.2 ms of a
    default-suite sweep's 5.7. The same bytes as :func:`ascii_body_per_point`, which a test holds it to. Columns it
    cannot format exactly that way (non-finite numbers, ids that are not integers, magnitudes past 2**50 units of
    the last decimal) go to the per-point formatter.
    """
    return _ascii_lines(cols, b"")


def _ascii_lines(cols: Mapping[str, NDArray[Any]], prefix: bytes) -> bytes:
    """``prefix`` (a PLY's header) followed by :func:`ascii_body` of ``cols``, made in this thread's work arrays
    and copied once into the bytes returned."""
    from simready.sensors_hw.lidar_kernels import ascii_row_bytes, ascii_rows

    n = len(next(iter(cols.values())))
    if n == 0:
        return prefix
    magnitude = work_array("ply.magnitude", (len(cols), n), np.int64)
    negative = work_array("ply.negative", (len(cols), n), np.bool_)
    decimals = np.empty(len(cols), np.int64)
    for c, (name, values) in enumerate(cols.items()):
        places = _ASCII_DECIMALS[name]
        if places is None:
            parts = _integer_parts(values)
            if parts is None:
                return prefix + ascii_body_per_point(cols)
            magnitude[c], negative[c] = parts
        elif not _fixed_point_into(values, places, magnitude[c], negative[c]):
            return prefix + ascii_body_per_point(cols)
        decimals[c] = -1 if places is None else places
    out = work_array("ply.ascii", len(prefix) + n * ascii_row_bytes(magnitude, decimals), np.uint8)
    out[:len(prefix)] = np.frombuffer(prefix, np.uint8)
    end = ascii_rows(magnitude, negative, decimals, out, len(prefix))
    return out[:end].tobytes()


def _fixed_point_into(values: NDArray[Any], decimals: int, magnitude: NDArray[np.int64],
                      negative: NDArray[np.bool_]) -> bool:
    """:func:`fixed_point_parts_numpy` of a column into ``magnitude`` and ``negative`` (one compiled pass, the
    few values whose rounding float64 cannot decide from Python's formatting); False where it returns None."""
    from simready.sensors_hw.lidar_kernels import fixed_point_parts

    v = np.asarray(values)
    if v.dtype.kind not in "biuf":
        return False
    if v.dtype not in (np.float32, np.float64):
        v = v.astype(np.float64)
    v = np.ascontiguousarray(v)
    unsure = work_array("ply.unsure", len(v), np.int64)
    count = fixed_point_parts(v, float(10 ** decimals), magnitude, negative, unsure)
    if count < 0:
        return False
    for i in unsure[:count].tolist():
        magnitude[i] = int(("%.*f" % (decimals, abs(float(v[i])))).replace(".", ""))
    return True


def ascii_body_per_point(cols: Mapping[str, NDArray[Any]]) -> bytes:
    """The ASCII body formatted by Python, one string per point: the definition :func:`ascii_body` matches."""
    fmt = " ".join("%d" if _ASCII_DECIMALS[k] is None else f"%.{_ASCII_DECIMALS[k]}f" for k in cols) + "\n"
    return "".join(fmt % r for r in zip(*(np.asarray(v).tolist() for v in cols.values()))).encode("ascii")


def _integer_parts(values: NDArray[Any]) -> tuple[NDArray[np.int64], NDArray[np.bool_]] | None:
    """``%d`` of an integer column as (magnitude, negative), or None when the column is not integers that fit
    an int64."""
    v = np.asarray(values)
    if v.dtype.kind not in "biu" or (v.dtype.kind == "u" and v.dtype.itemsize >= 8 and v.max() > np.iinfo(np.int64).max):
        return None
    v = v.astype(np.int64)
    negative = v < 0
    if negative.any() and v.min() == np.iinfo(np.int64).min:
        return None
    return np.abs(v), negative


def fixed_point_parts_numpy(values: NDArray[Any], decimals: int) -> tuple[NDArray[np.int64], NDArray[np.bool_]] | None:
    """``%.<decimals>f`` of a numeric column as (its digits without the point as one integer, negative), or None
    when it holds a value this cannot format exactly: the bit reference of
    :func:`simready.sensors_hw.lidar_kernels.fixed_point_parts`, in numpy passes.

    ``%.Nf`` rounds the exact binary value half to even. ``|x|·10^N`` in float64 is within half an ulp of
    the exact product, so its rounding to an integer is certain unless the fraction lies within an ulp of
    one half; those few values (exact halves among them) take their digits from Python's own formatting.
    The sign is the sign bit, as ``%f`` prints ``-0.0000`` for -0.0 and for negatives that round to zero.
    """
    v = np.asarray(values)
    if v.dtype.kind not in "biuf":
        return None
    x = v.astype(np.float64)
    if not np.isfinite(x).all():
        return None
    a = np.abs(x)
    scaled = a * float(10 ** decimals)
    if scaled.max() >= 2.0 ** 50:
        return None
    whole = np.floor(scaled)
    frac = scaled - whole
    q = whole.astype(np.int64) + (frac > 0.5)
    unsure = np.flatnonzero(np.abs(frac - 0.5) <= np.spacing(scaled))
    for i in unsure.tolist():
        q[i] = int(("%.*f" % (decimals, a[i])).replace(".", ""))
    return q, np.signbit(x)


def write_ply_binary(path: str | Path, points: LidarScan | Mapping[str, Any], *, with_time: bool = False) -> Path:
    """Same columns as :func:`write_ply_ascii`, little-endian binary (much faster to write and read)."""
    return write_bytes_atomic(path, ply_bytes(points, "binary", with_time=with_time))


def read_ply(path: str | Path, columns: Sequence[str] | None = None) -> dict[str, NDArray[Any]]:
    """Columns of a PLY written by this module (ASCII or binary little-endian, or either one's ``.ply.zst``,
    by the name's suffix); only ``columns`` when given (an ASCII body's other columns are then not converted)."""
    if Path(path).name.endswith(PLY_ZSTD_SUFFIX):
        raw = zstandard.ZstdDecompressor().decompress(Path(path).read_bytes())
    else:
        raw = sweep_bytes(path)
    end = raw.index(b"end_header\n") + len(b"end_header\n")
    lines = raw[:end].decode("ascii").splitlines()
    if lines[0] != "ply":
        raise ValueError(f"{path}: not a PLY file")
    fmt = lines[1].split()[1]
    count = next(int(line.split()[2]) for line in lines if line.startswith("element vertex"))
    names = [line.split()[2] for line in lines if line.startswith("property")]
    dtype = [(k, _PLY_TYPES[k][1]) for k in names]
    wanted = [i for i, k in enumerate(names) if columns is None or k in columns]
    body = memoryview(raw)[end:]  # not a copy of the sweep's megabyte
    if fmt == "binary_little_endian":
        rec = np.frombuffer(body, dtype=dtype, count=count)
        return {names[i]: rec[names[i]].copy() for i in wanted}
    # Every column is numeric: one C-level parse of the whole body (float64 holds uint32 ids and the
    # printed float32 values exactly; the column is then cast as a per-value parse would be).
    table, at = ascii_columns(path, body, count, len(names), wanted)
    return {names[i]: table[:, j].astype(np.dtype(dtype[i][1])) for j, i in zip(at, wanted)}


#: Within :func:`shared_sweeps`: the ASCII bodies parsed (every column) and not yet taken by a second reader.
_SHARED = ScopedCache()


@contextmanager
def shared_sweeps() -> Iterator[None]:
    """Within it, an ASCII sweep read twice is parsed once: the first reader's parse of every column is kept
    until a second reader of the same file (path, size and modification time) takes it. For one sample's validity
    gate and review page, which read the same sweeps in turn (the parse was a third of their CPU time); the
    values are the same as a parse of their own."""
    with _SHARED.scope():
        yield


def _shared_key(path: str | Path) -> tuple[str, int, int]:
    """The file's version as :func:`shared_sweeps` keys its parse: path, size and modification time."""
    st = os.stat(path)
    return os.path.abspath(path), st.st_size, st.st_mtime_ns


def sweep_bytes(path: str | Path) -> bytes:
    """The bytes of the (uncompressed) PLY at ``path``; within :func:`shared_sweeps`, of a sweep whose parse a first
    reader left, only its header (through ``end_header``): :func:`ascii_columns` gives the body's table then, and
    the ~1 MB body is not read again."""
    shared = _SHARED.entries
    if shared is None or _shared_key(path) not in shared:
        return Path(path).read_bytes()
    head = b""
    with open(path, "rb") as f:
        while b"end_header\n" not in head:
            chunk = f.read(4096)
            if not chunk:
                break
            head += chunk
    end = head.find(b"end_header\n")
    return head if end < 0 else head[:end + len(b"end_header\n")]


def ascii_columns(path: str | Path, body: bytes | memoryview, count: int, columns: int,
                  wanted: list[int] | None = None) -> tuple[NDArray[np.float64], list[int]]:
    """The ``wanted`` columns (every one when None) of the ASCII body of the PLY at ``path``: a float64 table of
    ``count`` rows and where each wanted column lies in it (every column parsed, so the wanted ones are not copied
    out, unless only they parse): each printed number rounded correctly, as :func:`_ascii_table`; within
    :func:`shared_sweeps`, the parse of the file's first reader, kept for its second."""
    every = list(range(columns))
    wanted = every if wanted is None else wanted
    shared = _SHARED.entries
    if shared is None:
        return _whole_or_wanted(body, count, columns, wanted)
    key = _shared_key(path)
    kept: tuple[int, int, NDArray[np.float64]] | None = shared.pop(key, None)
    if kept is not None and kept[:2] == (count, columns):
        return kept[2], wanted
    if kept is not None or (count and not len(body)):  # the header alone (sweep_bytes) but not the parse it expected
        raw = Path(path).read_bytes()
        body = memoryview(raw)[raw.index(b"end_header\n") + len(b"end_header\n"):]
    try:
        table = _ascii_table(body, count, columns)
    except ValueError:  # a column this reader does not want may be what fails: its own parse decides
        return _ascii_table(body, count, columns, wanted), list(range(len(wanted)))
    shared[key] = (count, columns, table)
    return table, wanted


def _whole_or_wanted(body: bytes | memoryview, count: int, columns: int, wanted: list[int]) -> tuple[NDArray[np.float64], list[int]]:
    """:func:`ascii_columns` outside :func:`shared_sweeps`: the whole table when the compiled pass reads it, else
    the wanted columns as :func:`_ascii_table` parses them."""
    from simready.sensors_hw.lidar_kernels import ascii_table

    table: NDArray[np.float64]
    table, read = ascii_table(np.frombuffer(body, np.uint8), count, columns)
    if read:
        return table, wanted
    return _ascii_table(body, count, columns, wanted), list(range(len(wanted)))


def _ascii_table(body: bytes | memoryview, count: int, columns: int, wanted: list[int] | None = None) -> NDArray[np.float64]:
    """An ASCII PLY body as a (count, columns) float64 table (only the ``wanted`` columns, in order, when given).
    Arrow's CSV reader parses it ~3x faster than splitting (both round each number correctly, so the values are
    the same); a body it reads otherwise (extra spaces, a short line) is split instead, which fails on a wrong
    shape as before. What this project writes (``-?digits[.digits]``, one space between) is read first by a
    compiled pass (:func:`~simready.sensors_hw.lidar_kernels.ascii_table`, also correctly rounded), several
    times faster than Arrow's."""
    from simready.sensors_hw.lidar_kernels import ascii_table

    wanted = list(range(columns)) if wanted is None else wanted
    table: NDArray[np.float64]
    table, read = ascii_table(np.frombuffer(body, np.uint8), count, columns)
    if read:
        return table if wanted == list(range(columns)) else table[:, wanted]
    import pyarrow as pa  # heavy: pyarrow.csv (~85 ms), only for the CSV writer
    import pyarrow.csv as pcsv  # heavy: pyarrow.csv (~85 ms), only for the CSV writer

    try:
        names = [f"c{i}" for i in range(columns)]
        parsed = pcsv.read_csv(pa.py_buffer(body), read_options=pcsv.ReadOptions(column_names=names, use_threads=False),
                               parse_options=pcsv.ParseOptions(delimiter=" "),
                               convert_options=pcsv.ConvertOptions(column_types={n: pa.float64() for n in names},
                                                                   include_columns=[names[i] for i in wanted],
                                                                   null_values=[], strings_can_be_null=False))
        if parsed.num_rows == count and parsed.num_columns == len(wanted):
            return np.stack([c.to_numpy() for c in parsed.columns], axis=1) if count else np.zeros((0, len(wanted)))
    except (pa.ArrowInvalid, ValueError):
        pass
    return np.array(bytes(body).split(), dtype=np.float64).reshape(count, columns)[:, wanted]
