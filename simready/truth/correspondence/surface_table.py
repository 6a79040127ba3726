"""The surface identity table (SPEC §11): one row per visible sample of a frame — its pixel, the owner entity,
geometry hash and element of the body it is on, the triangle (source order), the rounded barycentrics and the
depth — and the per-scene dictionaries its string columns are built from.

The string columns are dictionary columns whose dictionaries hold each distinct value once, sorted: no
repeats, or the Parquet bytes would depend on the writer's hashing.
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

#: The table's columns per sample as one compiled pass yields them
#: (:func:`simready.truth.kernels.tables.surface_columns`): compact id, (3, M) the string columns' dictionary
#: indices, triangle, ``bary_u``, ``bary_v``, ``depth_m``.
SurfaceColumns = tuple[Any, ...]

_DICTIONARIES: "weakref.WeakKeyDictionary[SceneGeometry, tuple[NDArray, list[list[str]], NDArray[np.int32]]]" = \
    weakref.WeakKeyDictionary()


def surface_dictionaries(scene: SceneGeometry) -> tuple[NDArray, list[list[str]], NDArray[np.int32]]:
    """The surface table's per-body facts, cached per scene: the compact id per body, the distinct values of the
    string columns (``entity``, ``geometry_hash``, ``element``; sorted each) and (3, B) each body's index among them."""
    if scene not in _DICTIONARIES:
        names = (scene.entity_ids_of_body, [b.geometry_hash for b in scene.bodies], [b.element for b in scene.bodies])
        distinct, index_of_body = zip(*(_distinct(v) for v in names))
        _DICTIONARIES[scene] = (scene.compact_id_of_body, list(distinct), np.stack(index_of_body))
    return _DICTIONARIES[scene]


def _distinct(values: list[str]) -> tuple[list[str], NDArray[np.int32]]:
    """A per-body string's distinct values, sorted, and each body's index among them (a dictionary column's
    dictionary and the indices to gather; no repeats, or the Parquet bytes would depend on the writer's hashing)."""
    distinct, index_of_body = np.unique(np.array(values, dtype=object), return_inverse=True)
    return distinct.tolist(), index_of_body.astype(np.int32)


def _dictionary(body: NDArray[np.intp], values: list[str]) -> pa.DictionaryArray:
    """A per-body string as a dictionary column (one copy of each distinct string per file; the
    dictionary must hold no repeats, or the Parquet bytes would depend on the writer's hashing)."""
    distinct, index_of_body = _distinct(values)
    return pa.DictionaryArray.from_arrays(pa.array(np.take(index_of_body, body)), pa.array(distinct, pa.string()))


def surface_table(scene: SceneGeometry, pixel32: NDArray[np.int32], body: NDArray[np.intp], triangle: NDArray[np.int64],
                  barycentric_uv: NDArray[np.float64], point_camera: NDArray[np.float64],
                  columns: SurfaceColumns | None = None) -> pa.Table:
    """Surface identity per visible sample (SPEC §11), one row per hit pixel (M rows, the samples' order).

    Columns: ``pixel`` (v·W + u), ``compact_id``, ``entity``,
    ``geometry_hash``, ``element``, ``triangle`` (source order),
    ``bary_u``, ``bary_v`` (float32 at the precision :mod:`simready.truth.precision` declares), ``depth_m``
    (float32 z-depth). The sample time is the pixel row's (``t0 + v·line_time``).

    ``columns``: the per-sample columns when the samples pass already computed them for ``scene``; else one
    compiled pass here (:func:`simready.truth.kernels.tables.surface_columns`). Either is bitwise the gathers, casts
    and :func:`simready.truth.precision.quantized` one by one (:func:`surface_table_numpy`).
    """
    compact_of_body, distinct, index_of_body = surface_dictionaries(scene)
    if columns is None:
        columns = surface_columns(body, triangle, barycentric_uv, point_camera, compact_of_body, index_of_body,
                                  BARYCENTRIC_STEP)
    compact, index, tri, bu, bv, depth = columns
    strings = {name: pa.DictionaryArray.from_arrays(pa.array(index[k]), pa.array(distinct[k], pa.string()))
               for k, name in enumerate(("entity", "geometry_hash", "element"))}
    return pa.table({"pixel": pixel32, "compact_id": compact, **strings, "triangle": tri, "bary_u": bu,
                     "bary_v": bv, "depth_m": depth})


def surface_table_numpy(scene: SceneGeometry, pixel32: NDArray[np.int32], body: NDArray[np.intp],
                        triangle: NDArray[np.int64], barycentric_uv: NDArray[np.float64],
                        depth_m: NDArray[np.float64]) -> pa.Table:
    """:func:`surface_table` column by column in numpy: its bit reference."""
    return pa.table({
        "pixel": pixel32,
        "compact_id": scene.compact_id_of_body[body],
        "entity": _dictionary(body, scene.entity_ids_of_body),
        "geometry_hash": _dictionary(body, [b.geometry_hash for b in scene.bodies]),
        "element": _dictionary(body, [b.element for b in scene.bodies]),
        "triangle": triangle.astype(np.int32),
        "bary_u": quantized32(barycentric_uv[:, 0], BARYCENTRIC_STEP),  # precision.quantized, compiled
        "bary_v": quantized32(barycentric_uv[:, 1], BARYCENTRIC_STEP),
        "depth_m": depth_m.astype(np.float32),
    })
