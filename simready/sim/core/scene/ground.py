"""The ground height raster: the top of the highest ground asset (road, sidewalk, kerb, markings, terrain) per cell,
shared by the scenes of one world.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from simready.common.memo import once_per_object
from simready.world.template import WorldTemplate

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog

F = NDArray[np.float64]


#: Catalog semantic classes that are surfaces bodies stand on (their top is the ground height).
GROUND_CLASSES = frozenset({"road", "sidewalk", "curb", "crosswalk_marking", "lane_marking", "terrain"})
GROUND_RASTER_M = 0.1


@dataclass(frozen=True, eq=False)
class GroundModel:
    """Ground height (m) on a raster of :data:`GROUND_RASTER_M` cells: the top of the highest ground asset."""

    x0: float
    y0: float
    heights: F
    #: Whether any ground tile is tilted (a street laid on a map's heights): vehicles then pitch and roll with the
    #: ground (:func:`simready.sim.core.kinematics.tilt_on_ground`); a level world's bodies stay exactly as before.
    sloped: bool = False

    @cached_property
    def _lookup(self) -> tuple[F, NDArray[np.int64], F, NDArray[np.int64]]:
        origin = np.array([self.x0, self.y0])
        top = np.array([self.heights.shape[0] - 1, self.heights.shape[1] - 1], dtype=np.int64)
        strides = np.array([self.heights.shape[1], 1], dtype=np.int64)
        return origin, top, self.heights.reshape(-1), strides

    def at(self, xy: F) -> F:
        origin, top, flat, strides = self._lookup
        cell = ((xy - origin) * (1.0 / GROUND_RASTER_M)).astype(np.int64)
        # Integer clamping: np.maximum/np.minimum are np.clip without its Python-level dispatch.
        np.minimum(np.maximum(cell, 0, out=cell), top, out=cell)
        return flat.take(cell @ strides)

    def at_point(self, x: float, y: float) -> float:
        """:meth:`at` for one point, in scalar arithmetic (the same operations, so the same cell)."""
        fx, fy = (x - self.x0) * (1.0 / GROUND_RASTER_M), (y - self.y0) * (1.0 / GROUND_RASTER_M)
        if not (math.isfinite(fx) and math.isfinite(fy)):
            return float(self.at(np.array([[x, y]]))[0])
        nx, ny = self.heights.shape
        i = min(max(int(fx), 0), nx - 1)
        j = min(max(int(fy), 0), ny - 1)
        return float(self.heights[i, j])


_GROUND_CACHE: dict[Any, GroundModel] = {}
#: Each template object's distinct instance assets: an imported street has thousands of instances, ~1 ms a scene.
_INSTANCE_ASSETS: dict[int, tuple[object, frozenset[str]]] = {}


def _ground_key(template: WorldTemplate, t_hash: str, catalog: Catalog | None) -> Any:
    """Everything the ground raster depends on: the world (by content hash) and the ground assets' catalog data."""
    if catalog is None:
        return (t_hash, None)
    assets = []
    for asset in once_per_object(_INSTANCE_ASSETS, template, lambda: frozenset(i.asset for i in template.instances)):
        entry = catalog.entries.get(asset)
        if entry is not None and entry.semantic_class in GROUND_CLASSES:
            assets.append((asset, repr(entry.render_bounds_m)))
    return (t_hash, tuple(sorted(assets)))


def cached_ground_model(template: WorldTemplate, t_hash: str, catalog: Catalog | None) -> GroundModel:
    """:func:`_ground_model`, reused across scenes of the same world (the raster is read-only)."""
    key = _ground_key(template, t_hash, catalog)
    hit = _GROUND_CACHE.get(key)
    if hit is None:
        if len(_GROUND_CACHE) > 8:
            _GROUND_CACHE.clear()
        hit = _GROUND_CACHE[key] = _ground_model(template, catalog)
    return hit


def _ground_model(template: WorldTemplate, catalog: Catalog | None) -> GroundModel:
    xmin, ymin, xmax, ymax = template.bounds
    nx = int(math.ceil((xmax - xmin) / GROUND_RASTER_M)) + 1
    ny = int(math.ceil((ymax - ymin) / GROUND_RASTER_M)) + 1
    heights = np.zeros((nx, ny))
    sloped = False
    if catalog is not None:
        gx = xmin + (np.arange(nx) + 0.5) * GROUND_RASTER_M
        gy = ymin + (np.arange(ny) + 0.5) * GROUND_RASTER_M
        for inst in sorted(template.instances, key=lambda i: i.name):
            entry = catalog.entries.get(inst.asset)
            if entry is None or entry.semantic_class not in GROUND_CLASSES:
                continue
            (bx0, by0, _), (bx1, by1, bz1) = entry.render_bounds_m
            yaw = inst.pose.yaw_rad
            c, s = math.cos(yaw), math.sin(yaw)
            corners = [(inst.pose.x + c * x - s * y, inst.pose.y + s * x + c * y) for x in (bx0, bx1) for y in (by0, by1)]
            xs, ys = zip(*corners)
            ix = slice(max(int((min(xs) - xmin) / GROUND_RASTER_M), 0), min(int((max(xs) - xmin) / GROUND_RASTER_M) + 2, nx))
            iy = slice(max(int((min(ys) - ymin) / GROUND_RASTER_M), 0), min(int((max(ys) - ymin) / GROUND_RASTER_M) + 2, ny))
            px, py = np.meshgrid(gx[ix] - inst.pose.x, gy[iy] - inst.pose.y, indexing="ij")
            lx, ly = c * px + s * py, -s * px + c * py
            inside = (lx >= bx0) & (lx <= bx1) & (ly >= by0) & (ly <= by1)
            block = heights[ix, iy]
            if inst.pose.level:
                top = inst.pose.z + bz1
            else:
                sloped = True
                # A tile tilted onto a sloped road (simready.world.street): its top face's plane at each cell
                # (the footprint test above reads the tilt's projection as level: a second-order error).
                R = inst.pose.rotation()
                n = R[:, 2]
                p0 = np.array([inst.pose.x, inst.pose.y, inst.pose.z]) + R @ np.array([0.0, 0.0, bz1])
                top = p0[2] - (n[0] * (px + inst.pose.x - p0[0]) + n[1] * (py + inst.pose.y - p0[1])) / n[2]
            heights[ix, iy] = np.where(inside, np.maximum(block, top), block)
    heights.setflags(write=False)
    return GroundModel(xmin, ymin, heights, sloped)
