"""Heights: the road and sidewalk surfaces a map with elevation, superelevation or lane heights gives, and every
part of the street lifted and tilted onto them (``pitch_deg`` / ``roll_deg``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import shapely

from simready.world.street.policy import KERB_HEIGHT_M, NEAR_M, RAISED_MIN_M, TERRAIN_TILE_M
from simready.world.street.tiles import Placed
from simready.world.template_model import Region


class Surface:
    """Height (m) of a set of regions with per-vertex ``z``: linear on a triangulation of each region's polygon.

    A point inside a triangle gets its barycentric height; one outside every
    triangle gets the height of the nearest point of the nearest triangle
    (the surface continued level past its edge). Why triangles of the
    region's own vertices: the importer samples a lane's borders densely
    enough (every 2 m or less) that a crest's chord error is below a
    millimetre, and across a lane the height is linear (superelevation).
    """

    def __init__(self, regions: Iterable[Region]) -> None:
        with_z = [r for r in regions if r.z is not None]
        self.tris = np.zeros((0, 3, 3))
        self.tree: Any = None  # an STRtree over the triangles, once there are any
        if not with_z:
            return
        # Each triangle corner is one of its own region's vertices (the same bits): its height is looked up by
        # (region, x, y), so two regions meeting at a border at different heights (a kerb) keep their own.
        verts = np.concatenate([np.column_stack([np.full(len(r.polygon), k, dtype=np.float64),
                                                 np.asarray(r.polygon, dtype=np.float64)])
                                for k, r in enumerate(with_z)])
        heights = np.concatenate([np.asarray(r.z, dtype=np.float64) for r in with_z])
        parts, owner = shapely.get_parts(shapely.constrained_delaunay_triangles([r.shape for r in with_z]),
                                         return_index=True)
        rings = shapely.get_coordinates(shapely.get_exterior_ring(parts)).reshape(len(parts), 4, 2)[:, :3]
        corners = np.column_stack([np.repeat(owner.astype(np.float64), 3), rings.reshape(-1, 2)])
        keys = _row_keys(verts)
        order = np.argsort(keys, kind="stable")
        want = _row_keys(corners)
        at = np.minimum(np.searchsorted(keys[order], want), len(keys) - 1)
        found = (keys[order][at] == want).reshape(-1, 3).all(axis=1)
        zs = heights[order][at].reshape(-1, 3, 1)
        self.tris = np.concatenate([rings, zs], axis=2)[found]
        if len(self.tris):
            self.tree = shapely.STRtree(shapely.polygons(self.tris[:, :, :2]))

    def __bool__(self) -> bool:
        return self.tree is not None

    def covers(self, xy: np.ndarray) -> np.ndarray:
        """Whether each point of ``xy`` (n, 2) lies on one of the surface's triangles."""
        hit = np.zeros(len(xy), dtype=bool)
        if self.tree is not None and len(xy):
            hit[self.tree.query(shapely.points(np.asarray(xy, dtype=np.float64)), predicate="intersects")[0]] = True
        return hit

    def at(self, xy: np.ndarray) -> np.ndarray:
        """Heights at points ``xy`` (n, 2)."""
        return self.sample(xy)[0]

    def sample(self, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Heights at points ``xy`` (n, 2) and the surface's gradient there ``(dz/dx, dz/dy)`` (n, 2): the plane of
        the triangle under each point; a point off the surface gets the height of its nearest edge and no slope."""
        xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        points = shapely.points(xy)
        which = np.full(len(xy), -1, dtype=np.int64)
        inside, tri = self.tree.query(points, predicate="intersects")
        order = np.lexsort((tri, inside))  # per point, the lowest triangle index
        first = np.unique(inside[order], return_index=True)
        which[first[0]] = tri[order][first[1]]
        off = np.flatnonzero(which < 0)
        lost = off
        for reach in (NEAR_M, None):  # most points off the surface lie near it: a bounded search first
            if not len(lost):
                break
            near_pt, near_tri = self.tree.query_nearest(points[lost], max_distance=reach, all_matches=False)
            which[lost[near_pt]] = near_tri
            lost = np.flatnonzero(which < 0)
        if len(off):
            # The nearest point of that triangle (its edge), whose barycentric height continues the surface.
            polys = shapely.polygons(self.tris[which[off], :, :2])
            xy = xy.copy()
            xy[off] = shapely.get_coordinates(shapely.shortest_line(polys, points[off])).reshape(-1, 2, 2)[:, 0]
        t = self.tris[which]
        a, b, c = t[:, 0], t[:, 1], t[:, 2]
        v0, v1, v2 = b[:, :2] - a[:, :2], c[:, :2] - a[:, :2], xy - a[:, :2]
        den = v0[:, 0] * v1[:, 1] - v1[:, 0] * v0[:, 1]
        den = np.where(np.abs(den) < 1e-12, 1e-12, den)
        wb = (v2[:, 0] * v1[:, 1] - v1[:, 0] * v2[:, 1]) / den
        wc = (v0[:, 0] * v2[:, 1] - v2[:, 0] * v0[:, 1]) / den
        dz0, dz1 = b[:, 2] - a[:, 2], c[:, 2] - a[:, 2]
        out = a[:, 2] + wb * dz0 + wc * dz1
        # The plane's gradient g solves [v0; v1]·g = [dz0; dz1].
        grad = np.column_stack([(dz0 * v1[:, 1] - dz1 * v0[:, 1]) / den, (v0[:, 0] * dz1 - v1[:, 0] * dz0) / den])
        grad[off] = 0.0  # the surface continues level past its edge
        return out, grad


def _row_keys(a: np.ndarray) -> np.ndarray:
    """Each row of a float array as one opaque value (its bytes), for exact sorting and look-up."""
    a = np.ascontiguousarray(a, dtype=np.float64) + 0.0  # -0.0 and 0.0 the same bytes
    return a.view(np.dtype((np.void, a.dtype.itemsize * a.shape[1]))).ravel()


def tilts(grad: np.ndarray, yaw_deg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pitch and roll (degrees, intrinsic z-y'-x'') that lay a body with heading ``yaw_deg`` on a surface of gradient
    ``grad`` (n, 2).

    With slopes ``sa`` along the heading and ``sc`` across it (to the left),
    the body's x axis is tangent for pitch = −atan(sa) and its y axis for
    roll = atan(sc / √(1 + sa²)).
    """
    yaw = np.radians(yaw_deg)
    c, s = np.cos(yaw), np.sin(yaw)
    sa = grad[:, 0] * c + grad[:, 1] * s
    sc = -grad[:, 0] * s + grad[:, 1] * c
    return np.degrees(-np.arctan(sa)), np.degrees(np.arctan(sc / np.sqrt(1.0 + sa * sa)))


Lifted = tuple[str, float, float, float, float, float, float]  # asset, x, y, z, yaw_deg, pitch_deg, roll_deg


def lift(placed: Sequence[Placed], kind: str, road: Surface, walk: Surface) -> list[Lifted]:
    """``placed`` (flat, at z = 0) laid on the map's heights, by kind:

    * road tiles, lane markings, zebra bars: on the road surface (``road``:
      the drivable, parking and junction regions), tilted with it; a marking
      on a sidewalk and off the road on the sidewalk's top;
    * sidewalk tiles and kerbs: their top at the map's sidewalk height
      (``walk``) where it stands at least :data:`RAISED_MIN_M` above the road
      beside it, else :data:`KERB_HEIGHT_M` above the road (the flat maps'
      kerb), tilted with the sidewalk;
    * terrain tiles: tilted with the road surface under their centre (level off it) and lowered so
      that no part of the tile rises above the surface's own height there
      (sampled at its corners, edge midpoints and centre);
    * building blocks: level, standing on the lowest surface height under
      their corners.
    """
    if not placed:
        return []
    xy = np.array([[p[1], p[2]] for p in placed])
    yaw = np.array([p[4] for p in placed])
    z0 = np.array([p[3] for p in placed])
    pitch, roll = np.zeros(len(placed)), np.zeros(len(placed))
    if kind == "road":
        z, grad = road.sample(xy)
        z = z + z0
        pitch, roll = tilts(grad, yaw)
    elif kind in ("marking", "zebra"):
        z, grad = road.sample(xy)
        z = z + z0
        pitch, roll = tilts(grad, yaw)
        if walk:  # a line painted on a sidewalk (a map's mark on its outer edge) lies on the sidewalk's top
            on_walk = walk.covers(xy) & ~road.covers(xy)
            if on_walk.any():
                lifted = lift([placed[k] for k in np.flatnonzero(on_walk)], "kerb", road, walk)  # type: ignore[call-overload]
                z[on_walk] = [p[3] + KERB_HEIGHT_M for p in lifted]
                pitch[on_walk] = [p[5] for p in lifted]
                roll[on_walk] = [p[6] for p in lifted]
    elif kind in ("sidewalk", "kerb"):
        ground, grad = road.sample(xy)
        own, grad = walk.sample(xy) if walk else (ground, grad)
        top = np.where(own - ground >= RAISED_MIN_M, own, ground + KERB_HEIGHT_M)
        z = top - KERB_HEIGHT_M + z0
        pitch, roll = tilts(grad, yaw)
    elif kind == "terrain":
        z, grad = road.sample(xy)
        pitch, roll = tilts(grad, yaw)
        half = TERRAIN_TILE_M / 2
        offsets = np.array([(i, j) for i in (-half, 0.0, half) for j in (-half, 0.0, half)])
        samples = road.at((xy[:, None, :] + offsets[None]).reshape(-1, 2)).reshape(len(xy), -1)
        tan_p, tan_r = np.tan(np.radians(-pitch)), np.tan(np.radians(roll))
        plane = z[:, None] + tan_p[:, None] * offsets[None, :, 0] + tan_r[:, None] * offsets[None, :, 1]
        z = z - np.maximum((plane - samples).max(axis=1), 0.0) + z0
    else:
        raise ValueError(f"no height rule for street kind {kind!r}")
    return [(p[0], p[1], p[2], float(zi), p[4], float(pi), float(ri))
            for p, zi, pi, ri in zip(placed, z, pitch, roll)]
