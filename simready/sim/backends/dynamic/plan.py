"""The static world of a ``dynamic-v1`` scene: what to create, as pure data (:class:`WorldPlan`).

Every template instance is built from its certified collision pieces
(:mod:`~simready.sim.backends.dynamic.pieces`), mass 0. The ground floor is
one slab over the whole map whose top is the height raster's floor (z = 0):
flat road tiles at that height are part of it rather than colliders of their
own, because a seam between two coplanar colliders is an internal edge — a
tyre's faceted collider sliding across it meets the next tile's top edge as a
kerb of its own contact penetration and is thrown up and back (the ego hopped
with 11–17 m/s² spikes entering a junction slab from an approach arm). Raised
ground (sidewalks) stays boxes, merged where they share a face. Each static
collider is its own body (a contact or ray hit names its instance exactly),
but bodies that share a shape and an orientation are created by one batched
call; the plan is cached per template and catalog contract, so rebuilding a
world in a restore costs a few milliseconds.

Where the street is tilted onto a map's heights (:mod:`simready.world.street`),
the slab gives way to one height field (:class:`Terrain`) sampled from the
road and terrain tiles' top faces, for the same reason: one body, no seams
between tiles; sidewalks, kerbs and blocks are bodies at their full
orientation (yaw, pitch, roll).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from simready.common.errors import CatalogError
from simready.sim.core import constants as C
from simready.sim.backends.dynamic.pieces import asset_pieces
from simready.sim.core.scene import GROUND_CLASSES
from simready.world.frames import quat_from_matrix

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog
    from simready.world.template import WorldTemplate
    from simready.world.template_model import Instance, Pose

#: Top of the ground floor slab (m): the floor of the ground-height raster (:class:`~simready.sim.core.scene.GroundModel`).
GROUND_FLOOR_Z = 0.0
GROUND_SLAB_DEPTH_M = 1.0

#: Semantic classes whose colliders are paint: left out of the physics world (their millimetre
#: steps would act as kerbs on wheels that, in this model, do not roll).
DECAL_CLASSES = frozenset({"crosswalk_marking", "lane_marking"})


#: Cell of the sloped ground's height field (m), and the most cells it may have (coarser cells beyond).
TERRAIN_CELL_M = 0.25
MAX_TERRAIN_CELLS = 4_000_000
#: Semantic classes whose tilted tiles make up the sloped ground (the road surface and the open ground).
FLOOR_CLASSES = frozenset({"road", "terrain"})


@dataclass(frozen=True, eq=False)
class Terrain:
    """The ground of a map with heights: one height field (a PyBullet ``GEOM_HEIGHTFIELD``) in place of the slab.

    ``heights[i, j]`` (m) is the top of the highest road or terrain tile at
    ``(x0 + i·cell, y0 + j·cell)``, or :data:`GROUND_SLAB_DEPTH_M` below the
    lowest tile where none lies; one body, so a tyre meets no seam between
    tiles (as on the slab), only the field's own triangles.
    """

    x0: float
    y0: float
    cell: float
    heights: Any

    @cached_property
    def field(self) -> list[float]:
        """The heights in PyBullet's order (x fastest), built once per plan (a world is rebuilt on every restore)."""
        ordered: list[float] = self.heights.T.reshape(-1).tolist()
        return ordered


class PlanSource(Protocol):
    """What a world plan is made of: a :class:`~simready.sim.core.scene.Scene`, or :class:`TemplateWorld` (the same
    fields without a scenario, to plan a template's world before any of its scenes is built)."""

    @property
    def template(self) -> WorldTemplate: ...
    @property
    def template_hash(self) -> str: ...
    @property
    def bounds(self) -> tuple[float, float, float, float]: ...
    @property
    def catalog(self) -> Catalog | None: ...


@dataclass(frozen=True)
class TemplateWorld:
    """A template's static world as a :class:`PlanSource` (a scene's ``bounds`` are its template's)."""

    template: WorldTemplate
    template_hash: str
    bounds: tuple[float, float, float, float]
    catalog: Catalog | None


def _terrain(scene: PlanSource, floor: list[Any]) -> Terrain:
    """The height field under ``floor`` (tilted road and terrain tiles), over the map and its out-of-bounds margin."""
    cat = scene.catalog
    assert cat is not None  # DynamicBackend refuses a scene without its catalog
    xmin, ymin, xmax, ymax = scene.bounds
    mgn = C.OUT_OF_BOUNDS_MARGIN_M
    x0, y0, x1, y1 = xmin - mgn, ymin - mgn, xmax + mgn, ymax + mgn
    cell = TERRAIN_CELL_M
    while ((x1 - x0) / cell + 1) * ((y1 - y0) / cell + 1) > MAX_TERRAIN_CELLS:
        cell *= 2.0
    nx, ny = int(math.ceil((x1 - x0) / cell)) + 1, int(math.ceil((y1 - y0) / cell)) + 1
    gx, gy = x0 + np.arange(nx) * cell, y0 + np.arange(ny) * cell
    heights = np.full((nx, ny), -np.inf)
    for inst in floor:
        (bx0, by0, _), (bx1, by1, bz1) = cat.entry(inst.asset).render_bounds_m
        R = inst.pose.rotation()
        corners = [R @ np.array([x, y, 0.0]) for x in (bx0, bx1) for y in (by0, by1)]
        xs = [inst.pose.x + c[0] for c in corners]
        ys = [inst.pose.y + c[1] for c in corners]
        ix = slice(max(int((min(xs) - x0) / cell), 0), min(int((max(xs) - x0) / cell) + 2, nx))
        iy = slice(max(int((min(ys) - y0) / cell), 0), min(int((max(ys) - y0) / cell) + 2, ny))
        px, py = np.meshgrid(gx[ix] - inst.pose.x, gy[iy] - inst.pose.y, indexing="ij")
        # Local coordinates of each cell's point on the tile's plane (R is orthonormal: local = Rᵀ·world).
        n = R[:, 2]
        top0 = R @ np.array([0.0, 0.0, bz1])
        pz = top0[2] - (n[0] * (px - top0[0]) + n[1] * (py - top0[1])) / n[2]
        lx = R[0, 0] * px + R[1, 0] * py + R[2, 0] * pz
        ly = R[0, 1] * px + R[1, 1] * py + R[2, 1] * pz
        inside = (lx >= bx0) & (lx <= bx1) & (ly >= by0) & (ly <= by1)
        block = heights[ix, iy]
        heights[ix, iy] = np.where(inside, np.maximum(block, inst.pose.z + pz), block)
    known = np.isfinite(heights)
    low = float(heights[known].min()) - GROUND_SLAB_DEPTH_M if known.any() else GROUND_FLOOR_Z
    heights = np.where(known, heights, low)
    heights.setflags(write=False)
    return Terrain(float(x0), float(y0), float(cell), heights)


def _world_boxes(catalog: Catalog, inst: Instance) -> list[tuple[float, ...]] | None:
    """World-axis-aligned boxes ``(x0, x1, y0, y1, z0, z1)`` of an instance whose pieces are all boxes at a right-angle yaw."""
    if not inst.pose.level:
        return None
    quarter = inst.pose.yaw_deg / 90.0
    if abs(quarter - round(quarter)) > 1e-9:
        return None
    yaw = math.radians(90.0 * round(quarter))
    c, s_ = round(math.cos(yaw)), round(math.sin(yaw))
    out = []
    for piece in asset_pieces(catalog, inst.asset):
        if piece[0] != "box":
            return None
        (hx, hy, hz), (cx, cy, cz) = piece[1], piece[2]
        wx, wy = inst.pose.x + c * cx - s_ * cy, inst.pose.y + s_ * cx + c * cy
        ex, ey = abs(c) * hx + abs(s_) * hy, abs(s_) * hx + abs(c) * hy
        out.append(tuple(round(v, 9) for v in (wx - ex, wx + ex, wy - ey, wy + ey, inst.pose.z + cz - hz, inst.pose.z + cz + hz)))
    return out


def merge_boxes(boxes: list[tuple[float, ...]]) -> list[tuple[float, ...]]:
    """Merge axis-aligned boxes that share a full face (same z range, same extent across the face): one exact union.

    Why: adjacent tiles are one flat surface, but as separate colliders their
    seams are internal edges that catch a sliding wheel; the union has none.
    """
    items = sorted(set(boxes))
    merged = True
    while merged:
        merged = False
        for i in range(len(items)):
            for j in range(i + 1, len(items)):
                a, b = items[i], items[j]
                if a[4:] != b[4:]:
                    continue
                if a[2:4] == b[2:4] and (a[1] == b[0] or b[1] == a[0]):
                    new = (min(a[0], b[0]), max(a[1], b[1]), a[2], a[3], a[4], a[5])
                elif a[0:2] == b[0:2] and (a[3] == b[2] or b[3] == a[2]):
                    new = (a[0], a[1], min(a[2], b[2]), max(a[3], b[3]), a[4], a[5])
                else:
                    continue
                items = sorted(set(items[:i] + items[i + 1 : j] + items[j + 1 :] + [new]))
                merged = True
                break
            if merged:
                break
    return items


@dataclass(frozen=True)
class BodyGroup:
    """Static bodies sharing one collision shape and orientation: created in one batched ``createMultiBody`` call.

    ``shape`` is an asset id (its compound collider) or box half extents (m);
    ``positions`` are body origins (m, world); ``keys`` index
    :attr:`WorldPlan.names` (one per body, in body order).
    """

    shape: str | tuple[float, float, float]
    quat: tuple[float, float, float, float]
    positions: tuple[tuple[float, float, float], ...]
    keys: tuple[int, ...]
    ground: bool


@dataclass(frozen=True)
class WorldPlan:
    """What a scene's static world consists of: pure data, the same for every build of the scene.

    Computing it reads the catalog and merges the ground tiles (up to ~20 ms
    on a large template), so it is cached per template and catalog contract;
    the PyBullet calls made from it are the same whether it was cached or not.
    ``names``: static collider names sorted by instance name, then the ground
    boxes; a contact key is ``-1 - index`` into it.
    """

    groups: tuple[BodyGroup, ...]
    names: tuple[str, ...]
    #: The sloped ground where the template's street is tilted (a map with heights), else None (the slab).
    terrain: Terrain | None = None


#: World plans per (catalog folder, template hash, bounds, contract hashes of the assets used).
_PLANS: dict[tuple[Any, ...], WorldPlan] = {}


#: The sorted instances and the contract hashes of their assets per (template, catalog) object pair, the objects
#: kept beside them (checked with ``is``: an id is reused only once its object is gone): both are frozen, so these
#: are what :func:`world_plan` would read from them again (~10 ms over a map's thousands of instances, per scene).
_CONTRACTS: dict[tuple[int, int], tuple[WorldTemplate, Catalog, list[Any], tuple[tuple[str, str], ...]]] = {}


def _template_contracts(template: WorldTemplate, cat: Catalog) -> tuple[list[Any], tuple[tuple[str, str], ...]]:
    hit = _CONTRACTS.get((id(template), id(cat)))
    if hit is not None and hit[0] is template and hit[1] is cat:
        return hit[2], hit[3]
    insts = sorted(template.instances, key=lambda i: i.name)
    for inst in insts:
        if inst.asset not in cat.entries:
            raise CatalogError(cat.generated_dir, "entries", f"template instance {inst.name} uses {inst.asset}, not in the catalog")
    contracts = tuple(sorted({(i.asset, cat.entry(i.asset).contract_sha256) for i in insts}))
    if len(_CONTRACTS) > 16:
        _CONTRACTS.clear()
    _CONTRACTS[(id(template), id(cat))] = (template, cat, insts, contracts)
    return insts, contracts


def world_plan(scene: PlanSource) -> WorldPlan:
    """The static world of ``scene`` as batched body groups (cached: see :class:`WorldPlan`)."""
    cat = scene.catalog
    assert cat is not None  # DynamicBackend refuses a scene without its catalog
    insts, contracts = _template_contracts(scene.template, cat)
    key = (str(cat.generated_dir), scene.template_hash, scene.bounds, C.OUT_OF_BOUNDS_MARGIN_M, contracts)
    hit = _PLANS.get(key)
    if hit is None:
        hit = _PLANS[key] = _make_plan(scene, insts)
    return hit


def _make_plan(scene: PlanSource, insts: list[Any]) -> WorldPlan:
    cat = scene.catalog
    assert cat is not None  # DynamicBackend refuses a scene without its catalog
    names: list[str] = []
    bodies: dict[tuple[Any, ...], list[tuple[tuple[float, float, float], int]]] = {}
    ground: list[tuple[float, ...]] = []
    # A street tilted onto a map's heights (simready.world.street): its road and terrain tiles become one height
    # field instead of the flat slab; everything else is built as on a flat map, at its full orientation.
    sloped = any(not inst.pose.level for inst in insts)
    floor: list[Any] = []
    for inst in insts:
        entry = cat.entry(inst.asset)
        if entry.semantic_class in DECAL_CLASSES:
            continue
        is_ground = entry.semantic_class in GROUND_CLASSES and entry.family != "curb"
        if sloped and entry.semantic_class in FLOOR_CLASSES:
            floor.append(inst)
            continue
        if not sloped and is_ground and inst.pose.z + entry.render_bounds_m[1][2] <= GROUND_FLOOR_Z + 1e-9:
            continue  # the floor slab is this tile's surface, at any yaw (an imported map's road strips)
        if is_ground:
            boxes = _world_boxes(cat, inst)
            if boxes is not None:
                ground.extend(boxes)
                continue
        quat = _quat_yaw(inst.pose.yaw_rad) if inst.pose.level else _quat_pose(inst.pose)
        group = (inst.asset, tuple(quat), is_ground)
        bodies.setdefault(group, []).append(((inst.pose.x, inst.pose.y, inst.pose.z), len(names)))
        names.append(scene.template.instance_id(inst.name))
    # The ground floor: one slab whose top is the ground model's floor (z = 0, what the height raster
    # reads wherever no tile is higher), covering the map and its out-of-bounds margin. Tiles whose
    # top is at (or below) the floor are part of it; only raised ones (sidewalks) stay boxes.
    xmin, ymin, xmax, ymax = scene.bounds
    mgn = C.OUT_OF_BOUNDS_MARGIN_M
    slab = (round(xmin - mgn, 9), round(xmax + mgn, 9), round(ymin - mgn, 9), round(ymax + mgn, 9),
            GROUND_FLOOR_Z - GROUND_SLAB_DEPTH_M, GROUND_FLOOR_Z)
    boxes = [slab] + [b for b in merge_boxes(ground) if b[5] > GROUND_FLOOR_Z + 1e-9]
    terrain = None
    if sloped:
        terrain = _terrain(scene, floor)
        boxes = merge_boxes(ground)
    for k, (x0, x1, y0, y1, z0, z1) in enumerate(boxes):
        group = ((x1 - x0) / 2, (y1 - y0) / 2, (z1 - z0) / 2), (0.0, 0.0, 0.0, 1.0), True
        bodies.setdefault(group, []).append((((x0 + x1) / 2, (y0 + y1) / 2, (z0 + z1) / 2), len(names)))
        names.append(f"{scene.template.id}/ground:{k}")
    groups = tuple(BodyGroup(shape, quat, tuple(pos for pos, _ in members), tuple(k for _, k in members), is_ground)
                   for (shape, quat, is_ground), members in sorted(bodies.items(), key=lambda kv: kv[1][0][1]))
    if terrain is not None:
        names.append(f"{scene.template.id}/ground:terrain")
    return WorldPlan(groups, tuple(names), terrain)


def _quat_yaw(yaw: float) -> list[float]:
    return [0.0, 0.0, math.sin(0.5 * yaw), math.cos(0.5 * yaw)]


def _quat_pose(pose: Pose) -> list[float]:
    """``[x, y, z, w]`` of a tilted pose (yaw, pitch, roll: :meth:`~simready.world.template_model.Pose.rotation`)."""
    return [float(v) for v in quat_from_matrix(pose.rotation())]

