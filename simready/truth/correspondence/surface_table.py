"""The surface identity table (SPEC §11): one row per visible sample of a frame — its pixel, the compact id, the
body it is on (its owner entity, geometry hash and element through the frame's legend), the triangle
(source order), the rounded barycentrics and the depth — and the per-scene tables its columns are gathered from.

The table is built as its file stores it (:mod:`simready.truth.stored`): the per-body strings ``entity``,
``geometry_hash``, ``element`` are one int32 ``body`` column (the scene's body index) beside a legend of the bodies
the frame sees (:func:`surface_bodies`, the file's metadata ``bodies``), from which
:func:`simready.truth.stored.expanded` (and :class:`simready.truth.reader.TruthReader`) puts them back as
dictionary columns whose dictionaries hold each distinct value once, sorted.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from simready.raycast.geometry import SceneGeometry
from simready.truth.kernels.tables import quantized32, surface_columns
from simready.truth.precision import BARYCENTRIC_STEP
from simready.truth.stored import BODY, bodies_legend

#: The table's columns per sample as one compiled pass yields them
#: (:func:`simready.truth.kernels.tables.surface_columns`): compact id, (1, M) the body, triangle, ``bary_u``,
#: ``bary_v``, ``depth_m``.
SurfaceColumns = tuple[Any, ...]

_BODY_TABLES: "weakref.WeakKeyDictionary[SceneGeometry, tuple[NDArray, NDArray[np.int32]]]" = \
    weakref.WeakKeyDictionary()


def surface_body_tables(scene: SceneGeometry) -> tuple[NDArray, NDArray[np.int32]]:
    """The surface table's per-body columns, cached per scene: the compact id per body and (1, B) each body's index
    (int32): what the samples pass gathers per sample."""
    if scene not in _BODY_TABLES:
        _BODY_TABLES[scene] = (scene.compact_id_of_body, np.arange(len(scene.bodies), dtype=np.int32)[None, :])
    return _BODY_TABLES[scene]


def surface_bodies(scene: SceneGeometry, seen: NDArray[np.bool_]) -> dict[str, list[Any]]:
    """The legend of a frame's bodies (the file's metadata ``bodies``, :func:`simready.truth.stored.bodies_legend`):
    each body ``seen`` ((B,) bool) by its index, with its owner entity, geometry hash and element."""
    index = np.flatnonzero(seen)
    bodies = scene.bodies
    return bodies_legend(index.tolist(), [scene.entity_ids_of_body[b] for b in index],
                         [bodies[b].geometry_hash for b in index], [bodies[b].element for b in index])


def surface_table(scene: SceneGeometry, pixel32: NDArray[np.int32], body: NDArray[np.intp], triangle: NDArray[np.int32],
                  barycentric_uv: NDArray[np.float64], point_camera: NDArray[np.float64],
                  columns: SurfaceColumns | None = None) -> pa.Table:
    """Surface identity per visible sample (SPEC §11), one row per hit pixel (M rows, the samples' order), as its file
    stores it.

    Columns: ``pixel`` (v·W + u), ``compact_id``, ``body`` (int32: the scene's body index, whose ``entity``,
    ``geometry_hash`` and ``element`` the frame's legend gives, :func:`surface_bodies`), ``triangle`` (source order),
    ``bary_u``, ``bary_v`` (float32 at the precision :mod:`simready.truth.precision` declares), ``depth_m``
    (float32 z-depth). The sample time is the pixel row's (``t0 + v·line_time``).

    ``columns``: the per-sample columns when the samples pass already computed them for ``scene``; else one
    compiled pass here (:func:`simready.truth.kernels.tables.surface_columns`). Either is bitwise the gathers, casts
    and :func:`simready.truth.precision.quantized` one by one (:func:`surface_table_numpy`).
    """
    compact_of_body, part_of_body = surface_body_tables(scene)
    if columns is None:
        columns = surface_columns(body, triangle, barycentric_uv, point_camera, compact_of_body, part_of_body,
                                  BARYCENTRIC_STEP)
    compact, index, tri, bu, bv, depth = columns
    return pa.table({"pixel": pixel32, "compact_id": compact, BODY: index[0], "triangle": tri, "bary_u": bu,
                     "bary_v": bv, "depth_m": depth})


def surface_table_numpy(scene: SceneGeometry, pixel32: NDArray[np.int32], body: NDArray[np.intp],
                        triangle: NDArray[np.int32], barycentric_uv: NDArray[np.float64],
                        depth_m: NDArray[np.float64]) -> pa.Table:
    """:func:`surface_table` column by column in numpy: its bit reference."""
    return pa.table({
        "pixel": pixel32,
        "compact_id": scene.compact_id_of_body[body],
        BODY: body.astype(np.int32),
        "triangle": triangle.astype(np.int32),
        "bary_u": quantized32(barycentric_uv[:, 0], BARYCENTRIC_STEP),  # precision.quantized, compiled
        "bary_v": quantized32(barycentric_uv[:, 1], BARYCENTRIC_STEP),
        "depth_m": depth_m.astype(np.float32),
    })
