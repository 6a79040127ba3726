"""How the per-frame truth tables are stored (SPEC §11): the one place that says which of their columns the files
hold and which :class:`simready.truth.reader.TruthReader` puts back on reading.

Every per-frame table of a tick has one row per visible sample of that tick's frame, in the same order (the
samples', ascending ``pixel``): ``<tick>.surface.parquet``, ``<tick>.motion.parquet``, ``<tick>.forward.parquet``
(tick → next frame: its source rows are this tick's samples) and ``<tick>.backward.parquet`` (tick → previous frame:
likewise). So:

* ``pixel`` (v·W + u, int32) is stored once, in the surface table; the motion and correspondence tables leave it
  out and the reader attaches the surface table's (:data:`PIXEL_FROM`).
* The surface table's per-body strings ``entity``, ``geometry_hash``, ``element`` are one int32 ``body`` column
  (the body's index in the scene, as the radar contributor tables' ``body``) with a legend of the bodies the frame
  sees in the metadata (``bodies``: :func:`bodies_legend`); the reader puts them back as dictionary columns where
  ``body`` stands.
* A correspondence's seven booleans are one ``flags`` uint8 column, one bit each (:data:`FLAG_BITS`; bit 7 unused,
  0): the reader returns them as the named boolean columns, each where it was.

=====  ====================================================
bit    forward / backward
=====  ====================================================
0      ``valid``
1      ``occluded`` (forward) / ``disoccluded`` (backward)
2      ``out_of_frame``
3      ``behind_camera``
4      ``beyond_range``
5      ``absent``
6      ``static``
=====  ====================================================

* A column held at a declared step (:data:`simready.truth.precision.DECLARED_STEPS`: the barycentrics, the pinhole
  flow, the motion field's image velocity) is stored as the int32 first differences of its multiples of the step
  (:func:`simready.measurement.writers.differenced` writes them: row i holds ``k[i] − k[i−1]``, ``k = value / step``,
  ``k[−1] = 0``; a NaN row is null and carries the previous multiple), which the reader sums back
  (:func:`undifferenced`) to the same float32 values (zero read back without its sign: −0.0 reads as 0.0). Neighbouring samples along a row lie on one surface, so the
  differences are small and their high bytes zero: byte-stream-split + LZ4 store them in a third of the bytes zstd
  took for the float32 values' byte planes, in half its time. A column with an infinite value or a multiple of 2³⁰
  steps or more stays float32 (the reader tells by the column's type).

Each table's Parquet metadata says the same: ``flags`` (name -> bit) on the correspondences, ``bodies`` on the
surface table, ``derived`` naming what each put-back column comes from, ``step_differences`` the columns stored as
differences. Files written before this layout (``pixel``, the strings and the booleans stored, the declared columns
as float32) read the same through the reader.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from simready.truth.precision import DECLARED_STEPS

#: The stored flag bits of a correspondence table, by direction: column names in bit order (bit 0 first).
FLAG_BITS: dict[str, tuple[str, ...]] = {
    direction: ("valid", hidden, "out_of_frame", "behind_camera", "beyond_range", "absent", "static")
    for direction, hidden in (("forward", "occluded"), ("backward", "disoccluded"))
}
#: The stored column that holds them.
FLAGS = "flags"
#: Bit values the fused flow kernel sets (:func:`simready.truth.kernels.flow.flow_of_samples`), as in :data:`FLAG_BITS`.
VALID, HIDDEN, OUT_OF_FRAME, BEHIND_CAMERA, BEYOND_RANGE, ABSENT, STATIC = (1 << k for k in range(7))
#: The surface table's column that stands for the per-body strings, and those strings (:func:`bodies_legend`).
BODY = "body"
BODY_COLUMNS = ("entity", "geometry_hash", "element")
#: Where a table of each kind (:data:`simready.truth.reader.FRAME_KINDS`) without its own ``pixel`` gets it: the
#: same tick's table of this kind (its rows are in the same order).
PIXEL_FROM: dict[str, str] = {"motion": "surface", "forward": "surface", "backward": "surface"}


#: A table's metadata key listing its columns stored as step differences
#: (:func:`simready.measurement.writers.differenced`).
STEP_DIFFERENCES = "step_differences"


def flag_bits(direction: str) -> dict[str, int]:
    """What a correspondence table's metadata records under ``flags``: column name -> bit."""
    return {name: k for k, name in enumerate(FLAG_BITS[direction])}


def pack_flags(direction: str, columns: Mapping[str, NDArray[np.bool_]]) -> NDArray[np.uint8]:
    """The ``flags`` column of a correspondence's named boolean ``columns`` (every name of :data:`FLAG_BITS`)."""
    names = FLAG_BITS[direction]
    out = np.zeros(len(columns[names[0]]), np.uint8)
    for k, name in enumerate(names):
        out |= np.asarray(columns[name], np.bool_).astype(np.uint8) << np.uint8(k)
    return out


def unpack_flags(direction: str, flags: NDArray[np.uint8]) -> dict[str, pa.BooleanArray]:
    """The named boolean columns of a correspondence's ``flags``, in bit order."""
    flags = np.ascontiguousarray(flags, np.uint8)
    return {name: bool_column((flags & np.uint8(1 << k)) != 0) for k, name in enumerate(FLAG_BITS[direction])}


def bodies_legend(body: list[int], entity: list[str], geometry_hash: list[str],
                  element: list[str]) -> dict[str, list[Any]]:
    """A surface table's legend of its bodies (its metadata ``bodies``): the body indices its ``body`` column holds
    and, at the same position, each one's ``entity``, ``geometry_hash`` and ``element``."""
    return {BODY: list(body), "entity": list(entity), "geometry_hash": list(geometry_hash), "element": list(element)}


def body_columns(body: NDArray[np.int32], legend: Mapping[str, list[Any]]) -> dict[str, pa.DictionaryArray]:
    """The per-body string columns of a surface table's ``body`` column through its ``legend``
    (:func:`bodies_legend`): dictionary columns whose dictionaries hold each distinct value once, sorted."""
    numbers = np.asarray(legend[BODY], np.int64)
    body = np.asarray(body, np.int64)
    size = int(numbers.max()) + 1 if len(numbers) else 0
    row_of = np.full(size, -1, np.int64)
    row_of[numbers] = np.arange(len(numbers))
    rows = np.full(len(body), -1, np.int64)
    known = (body >= 0) & (body < size)
    rows[known] = row_of[body[known]]
    if (rows < 0).any():
        raise ValueError(f"body {int(body[np.argmax(rows < 0)])} is not in the legend (metadata bodies)")
    out = {}
    for name in BODY_COLUMNS:
        distinct, index = np.unique(np.array(legend[name], dtype=object), return_inverse=True)
        out[name] = pa.DictionaryArray.from_arrays(pa.array(index.astype(np.int32)[rows]),
                                                   pa.array(distinct.tolist(), pa.string()))
    return out


def bool_column(values: NDArray[np.bool_]) -> pa.BooleanArray:
    """A boolean column from a numpy bool array, its bits packed by numpy (little bit order, Arrow's layout): the same
    array as ``pa.array(values)``, without pyarrow's element-by-element conversion of numpy bools (about 50 times
    slower on a full-resolution frame's 0.8 M samples)."""
    values = np.ascontiguousarray(values, np.bool_)
    bits = np.packbits(values, bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])


def stored(kind: str, table: pa.Table) -> pa.Table:
    """A per-frame table of ``kind`` as its file stores it: ``pixel`` left out but on the surface table, a
    correspondence's booleans packed into ``flags`` where the first of them stood (a table already so is returned
    as it is)."""
    if kind in PIXEL_FROM and "pixel" in table.column_names:
        table = table.drop_columns(["pixel"])
    names = FLAG_BITS.get(kind)
    if names is not None and names[0] in table.column_names:
        at = table.column_names.index(names[0])
        flags = pack_flags(kind, {n: table.column(n).to_numpy(zero_copy_only=False) for n in names})
        table = table.drop_columns(list(names)).add_column(at, FLAGS, pa.array(flags, pa.uint8()))
    return table


def expanded(kind: str, table: pa.Table, pixel: pa.Array | pa.ChunkedArray | NDArray[np.int32] | None = None,
             bodies: Mapping[str, list[Any]] | None = None, steps: Mapping[str, float] | None = None) -> pa.Table:
    """A stored per-frame table of ``kind`` with its columns put back: ``pixel`` first (``pixel``: the surface
    table's, where the table does not hold it; None leaves it out), a correspondence's ``flags`` as the named
    booleans in its place, and a surface table's ``body`` as ``entity``, ``geometry_hash``, ``element`` through
    its legend (``bodies``, :func:`bodies_legend`; None leaves ``body``), and the step-difference columns summed back
    (:func:`undifferenced`; ``steps``: column -> step, the declared ones by default); the inverse of :func:`stored`
    and :func:`simready.measurement.writers.differenced`. A table holding them already is returned as it is."""
    table = undifferenced(kind, table, steps)
    if BODY in table.column_names and kind == "surface" and bodies is not None:
        at = table.column_names.index(BODY)
        strings = body_columns(table.column(BODY).to_numpy(), bodies)
        table = table.drop_columns([BODY])
        for k, (name, column) in enumerate(strings.items()):
            table = table.add_column(at + k, name, column)
    if FLAGS in table.column_names and kind in FLAG_BITS:
        at = table.column_names.index(FLAGS)
        flags = table.column(FLAGS).to_numpy()
        table = table.drop_columns([FLAGS])
        for k, (name, column) in enumerate(unpack_flags(kind, flags).items()):
            table = table.add_column(at + k, name, column)
    if pixel is not None and "pixel" not in table.column_names and kind in PIXEL_FROM:
        if not isinstance(pixel, (pa.Array, pa.ChunkedArray)):
            pixel = pa.array(np.asarray(pixel, np.int32))
        if len(pixel) != table.num_rows:
            raise ValueError(f"the surface table's pixel has {len(pixel)} rows, the {kind} table {table.num_rows}")
        table = table.add_column(0, "pixel", pixel)
    return table


def differenced_columns(kind: str, table: pa.Table) -> list[str]:
    """The columns of a stored table of ``kind`` held as step differences (integer where the step's float32 was)."""
    return [name for name in DECLARED_STEPS.get(kind, {}) if name in table.column_names
            and pa.types.is_integer(table.schema.field(name).type)]


def undifferenced(kind: str, table: pa.Table, steps: Mapping[str, float] | None = None) -> pa.Table:
    """A stored table of ``kind`` with its step-difference columns (:func:`simready.measurement.writers.differenced`)
    summed back to the float32 values, NaN where null (``steps``: column -> step, as the file's metadata states them;
    the declared ones by default). A table without any is returned as it is."""
    steps = DECLARED_STEPS.get(kind, {}) if steps is None else steps
    for name in differenced_columns(kind, table):
        column = table.column(name)
        k = np.cumsum(column.fill_null(0).to_numpy(), dtype=np.int64)
        values = (k * steps[name]).astype(np.float32)  # k·step is exact in float64 and in float32 (k < 2³⁰)
        if column.null_count:
            values[column.is_null().to_numpy(zero_copy_only=False)] = np.nan
        table = table.set_column(table.column_names.index(name), name, pa.array(values, pa.float32()))
    return table
