"""``dynamic-v1``: PyBullet rigid-body dynamics for every vehicle (SPEC §8).

World, built once per engine in a DIRECT client, in sorted order so the
call sequence (and so the result) is the same every time:

* **static** — every template instance, from its certified collision
  pieces (an axis-aligned box piece becomes an exact ``GEOM_BOX``, any
  other piece a convex ``GEOM_MESH``), mass 0. The ground floor is one slab
  over the whole map whose top is the height raster's floor (z = 0): flat
  road tiles at that height are part of it rather than colliders of their
  own, because a seam between two coplanar colliders is an internal edge —
  a tyre's faceted collider sliding across it meets the next tile's top
  edge as a kerb of its own contact penetration and is thrown up and back
  (the ego hopped with 11–17 m/s² spikes entering a junction slab from an
  approach arm). Raised ground (sidewalks) stays boxes, merged where they
  share a face. Each static collider is its own body (a contact or ray hit
  names its instance exactly), but bodies that share a shape and an
  orientation are created by one batched call, and what to create (the
  :class:`_WorldPlan`, pure data) is cached per template and catalog
  contract, and a convex mesh is read from a copy without its repeated face
  corners wherever that gives PyBullet the very same hull
  (:func:`_reduced_hulls`, a third of the hull's cost), so rebuilding a world
  in a restore costs a few milliseconds;
* **vehicles** — every vehicle actor is one dynamic rigid body with its
  certified mass, centre of mass and inertia tensor (principal axes, the
  :class:`Chassis`), contact friction 0 because the tyres are modelled
  explicitly, driven by forces and never by setting its pose, so a contact
  exchanges momentum:

  - the **ego**: a single-track (bicycle) model applies, at every 5 ms
    substep, the longitudinal force of the actuated command and the
    front/rear lateral tyre forces (linear in slip angle, cornering
    stiffness ∝ axle load, saturated by the friction circle μ·F_z);
    steering is pure pursuit of the offset path a preview distance ahead,
    rate- and angle-limited (:class:`~simready.sim.constants.DynamicSettings`);
  - the **agents** (other moving vehicles): the simpler *drive model* of
    :meth:`DynamicBackend._drive` — once a tick (a 50 Hz controller) a
    horizontal force and a yaw torque that bring the body to the end-of-tick
    velocity and heading its path controller plans, with a correction of the
    position and heading error, limited to what tyres deliver (μ·m·g, and
    μ·m·g·wheelbase/2 of yaw torque); free of contact they follow their
    paths to millimetres, and a harder contact pushes them. The road carries
    them through a support force (gravity balanced, height and tilt driven
    back to the ground's) rather than through contacts with the ground
    colliders, which cost a convex solve per wheel every substep: with four
    agents on the ground, stepping cost 3.8× the ego-only world, with the
    support model 1.1×. They still collide with the ego, with each other and
    with every static collider that is not ground (kerbs, poles, buildings);
  - **parked vehicles**: immovable (mass 0) while no moving vehicle body is
    within reach of them in a tick; once one is (:meth:`DynamicBackend._wake`)
    they get their mass for the rest of the rollout and are held by their
    parking brake (the drive model braking at μ·g), so a car that hits one
    shoves it, and it skids to rest.

  PyBullet supplies gravity, support and collisions.
* **pedestrians and cyclists** have no rigid body: their contacts come from
  their footprints, and a vehicle that strikes one has the inelastic impact
  of :mod:`simready.sim.impact` (the vehicle's momentum change follows the
  mass ratio; the road user is carried at the point of contact until the
  vehicle is at rest, never passed through).

After any contact between actors the drivers involved brake to a standstill
(:mod:`simready.sim.impact`); here that means the ego's wheels return to
straight and an agent's drive model brakes along the body's own motion
rather than steering back to its path. Absent vehicles are immovable and
collide with nothing, underground.

Determinism: sleeping off, ``deterministicOverlappingPairs=1``, fixed call
order; bit-identical for identical inputs in one process and across
processes, whether or not the in-process caches (world plans, collision
pieces, idle clients) were warm. Restoring a checkpoint rebuilds the world
from the engine's state copy (see :mod:`simready.sim.checkpoint` for the
replay tolerance).

Rollout checks collected while stepping (``metrics.rollout_checks``), for
the ego: tunnelling (its centre of mass crossing a non-ground collider
between ticks, or its origin falling below the ground), energy gain without
actuation, and angular explosion. The energy check is skipped on a tick that
ends with the ego touching another actor: momentum exchanged in a contact
(another vehicle's kinetic energy passing to the ego) is physics, not a
solver error. Static colliders excuse nothing (they supply no energy, so a
gain against them is a solver pop); an ego spawned interpenetrating an
agent is still caught by the physics settle stage
(:mod:`simready.sim.settle`), in which every other vehicle is held immovable.
"""

from __future__ import annotations

import atexit
import hashlib
import math
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pybullet as p

from simready.errors import CatalogError
from simready.sim import constants as C
from simready.sim.backend import COMMON_EXTRAS, Backend, StepOutcome
from simready.sim.controllers.lateral import preview_steer
from simready.sim import impact
from simready.sim.impact import post_crash
from simready.sim.kinematics import footprint_contacts, step_on_paths
from simready.sim.scene import GROUND_CLASSES, Scene, substeps_per_tick
from simready.sim.state import Bodies, PathCoords, SimState, frozen
from simready.world.frames import quat_from_matrix

S = C.DYNAMIC_SETTINGS
#: Collision groups (bits). A ``rayTest`` ray always carries group 1 and a body is hit only if its mask has
#: that bit, so no body is in group 1 and the (non-ground) statics' mask has it: the tunnelling ray sees them
#: and nothing else, and no new body pairs pass the broadphase filter. The ground meets only the ego: the
#: agents ride on their support model (:meth:`DynamicBackend._drive`).
RAY_GROUP, EGO_GROUP, AGENT_GROUP, STATIC_GROUP, GROUND_GROUP = 1, 2, 4, 8, 16
#: Each vehicle body's collision group and mask.
EGO_FILTER = (EGO_GROUP, STATIC_GROUP | GROUND_GROUP | AGENT_GROUP)
AGENT_FILTER = (AGENT_GROUP, STATIC_GROUP | EGO_GROUP | AGENT_GROUP)
#: Energy may grow by this much per tick without actuation before it counts as a gain (J, plus 0.5 %).
ENERGY_SLACK_J = 50.0
MAX_ANGULAR_RATE_RPS = 10.0
#: The tyre model's floor on the speed that divides the lateral velocity in a slip angle (m/s).
_SLIP_MIN_MPS = S.slip_min_speed_mps
#: A parked vehicle gets its mass when a moving vehicle body is this much nearer than both bounding radii plus
#: the mover's travel in a tick (m).
WAKE_MARGIN_M = 1.0
#: The agent drive model corrects a position error over this time (s) and a heading error over this one (s).
DRIVE_POSITION_TAU_S = 0.25
DRIVE_YAW_TAU_S = 0.25
#: The agents' support brings the origin to the ground height and the up axis to the vertical over this time (s).
SUPPORT_TAU_S = 0.1


def _box_piece(vertices: np.ndarray) -> tuple[list[float], list[float]] | None:
    """``(half extents, centre)`` when an 8-vertex mesh is an axis-aligned box, else None."""
    if len(vertices) != 8:
        return None
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    for k in range(3):
        if not np.all(np.isclose(vertices[:, k], lo[k], atol=1e-9) | np.isclose(vertices[:, k], hi[k], atol=1e-9)):
            return None
    return ((hi - lo) / 2).tolist(), ((hi + lo) / 2).tolist()


#: Collision pieces per (catalog folder, asset, contract hash): ("box", half extents, centre) or
#: ("mesh", catalog file, reduced file or None) (:func:`_reduced_hulls`).
_PIECES: dict[tuple[str, str, str], tuple[tuple[Any, ...], ...]] = {}
#: DIRECT clients whose worlds were reset and can be reused (connecting costs ~15 ms; a reset world is
#: indistinguishable from a new one: the same call sequence gives bit-identical results).
_IDLE_CLIENTS: list[int] = []
MAX_IDLE_CLIENTS = 4


def asset_pieces(catalog: Any, asset: str) -> tuple[tuple[Any, ...], ...]:
    """The certified collision pieces of an asset, each an exact box or a convex mesh file (cached)."""
    entry = catalog.entry(asset)
    key = (str(catalog.generated_dir), asset, entry.contract_sha256)
    hit = _PIECES.get(key)
    if hit is None:
        pieces: list[tuple[Any, ...]] = []
        meshes = []
        for ref, mesh in zip(entry.collision_geometry, catalog.collision_meshes(asset)):
            box = _box_piece(np.asarray(mesh.vertices, dtype=np.float64))
            if box is not None:
                pieces.append(("box", *box))
            else:
                meshes.append(str(catalog.entry_dir(asset) / ref.file))
                pieces.append(("mesh", meshes[-1], None))
        reduced = iter(_reduced_hulls(meshes))
        hit = _PIECES[key] = tuple(("mesh", pc[1], next(reduced)) if pc[0] == "mesh" else pc for pc in pieces)
    return hit


#: This process's folder of reduced hull files (:func:`_reduced_hulls`): made on first use, removed at exit.
_HULL_DIR: Path | None = None


def _reduced_obj(text: str) -> str | None:
    """The vertices ``text``'s faces use, each once, in file order (their lines verbatim), covered by triangles.

    PyBullet builds a mesh's convex hull from every face corner: a 96-triangle wheel lists each of its 50
    vertices ~6 times, and the hull of the 288 points costs ~3× the hull of the 50. None for a file with
    anything but vertices, faces and comments (objects, groups, materials: PyBullet splits a file by object)
    or with relative or malformed face indices.
    """
    verts: list[str] = []
    used: set[int] = set()
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if words[0] == "v":
            verts.append(line)
        elif words[0] == "f":
            try:
                used.update(int(w.split("/")[0]) for w in words[1:])
            except ValueError:
                return None
        else:
            return None
    if not used or min(used) < 1 or max(used) > len(verts) or len(used) < 4:
        return None
    keep = [verts[i - 1] for i in sorted(used)]
    n = len(keep)
    return "\n".join(keep + [f"f {k + 1} {(k + 1) % n + 1} {(k + 2) % n + 1}" for k in range(0, n, 3)]) + "\n"


def _reduced_hulls(files: list[str]) -> list[str | None]:
    """For each collision mesh file, a reduced copy (:func:`_reduced_obj`) that gives PyBullet the same hull, or None.

    The same hull means the same vertices in the same order (the order decides ties in support queries)
    and the same bounds, as PyBullet reports them (``getMeshData``, ``getAABB``): checked once per file
    (per process) in a pooled client, which is reset afterwards, so the worlds built are the same either
    way. Without the repeats, the hull of some cylinders lists its vertices in another order (6 of the
    catalog's 61 meshes: pole, signal head, pedestrian legs); those keep their catalog file.
    """
    global _HULL_DIR
    out: list[str | None] = [None] * len(files)
    candidates = []
    try:
        for k, source in enumerate(files):
            text = _reduced_obj(Path(source).read_text(encoding="utf-8"))
            if text is not None:
                if _HULL_DIR is None:
                    _HULL_DIR = Path(tempfile.mkdtemp(prefix="simready-hulls-"))
                    atexit.register(shutil.rmtree, _HULL_DIR, True)
                reduced = _HULL_DIR / f"{hashlib.sha256(text.encode('utf-8')).hexdigest()[:32]}.obj"
                reduced.write_text(text, encoding="utf-8")
                candidates.append((k, source, str(reduced)))
    except OSError:
        return out
    if candidates:
        w = _World()
        try:
            for k, source, reduced in candidates:
                seen = []
                try:
                    for f in (source, reduced):
                        body = w.call(p.createMultiBody, 0.0, w.call(p.createCollisionShape, p.GEOM_MESH, fileName=f))
                        seen.append((w.call(p.getMeshData, body), w.call(p.getAABB, body)))
                except p.error:
                    continue
                if seen[0][0][0] > 0 and seen[0] == seen[1]:
                    out[k] = reduced
        finally:
            w.close()
    return out


def _connect() -> int:
    """A new DIRECT client without its TinyRenderer plugin (~15–25 ms).

    Why: the renderer builds display meshes for every body created (about half
    of ``createMultiBody``'s cost); nothing renders these worlds, and physics
    never reads them.
    """
    client = p.connect(p.DIRECT)
    plugin = p.loadPlugin("tinyRendererPlugin", physicsClientId=client)
    if plugin >= 0:
        p.unloadPlugin(plugin, physicsClientId=client)
    return client


class _World:
    """The PyBullet client and the ids of everything in it."""

    def __init__(self) -> None:
        # Pooled clients were reset when they were given back; a new one starts empty.
        self.client = _IDLE_CLIENTS.pop() if _IDLE_CLIENTS else _connect()
        self.shapes: dict[str, int] = {}
        self.boxes: dict[tuple[float, float, float], int] = {}

    def call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(*args, physicsClientId=self.client, **kwargs)

    def shape(self, catalog: Any, asset: str) -> int:
        """One compound collision shape per asset (cached), in the asset body frame."""
        if asset in self.shapes:
            return self.shapes[asset]
        types, halves, files, frames = [], [], [], []
        for piece in asset_pieces(catalog, asset):
            if piece[0] == "box":
                types.append(p.GEOM_BOX)
                halves.append(piece[1])
                files.append("")
                frames.append(piece[2])
            else:
                types.append(p.GEOM_MESH)
                halves.append([0.0, 0.0, 0.0])
                # The reduced copy gives the catalog file's hull in a third of the time; it lives in a temporary
                # folder, so the catalog file stands in should anything have removed it.
                files.append(piece[2] if piece[2] is not None and os.path.exists(piece[2]) else piece[1])
                frames.append([0.0, 0.0, 0.0])
        sid = self.call(p.createCollisionShapeArray, types, halfExtents=halves, fileNames=files, collisionFramePositions=frames)
        self.shapes[asset] = sid
        return sid

    def box(self, half: tuple[float, float, float]) -> int:
        """One box shape per half-extents triple (m), cached per world."""
        sid = self.boxes.get(half)
        if sid is None:
            sid = self.boxes[half] = self.call(p.createCollisionShape, p.GEOM_BOX, halfExtents=list(half))
        return sid

    def batch(self, mass: float, shape: int, positions: Any, quat: Any) -> tuple[int, ...]:
        """Bodies of one shape and orientation at ``positions`` (m; a sequence of xyz sequences), created by one call
        (ids in position order).

        Why batched: each ``createMultiBody`` call costs ~0.1 ms of PyBullet
        bookkeeping; a batch pays it once. The bodies are the same as one call each.
        """
        ids = p.createMultiBody(mass, shape, -1, positions[0], quat, useMaximalCoordinates=True, batchPositions=positions,
                                physicsClientId=self.client)
        return tuple(ids) if isinstance(ids, (tuple, list)) else (ids,)

    def close(self) -> None:
        if self.client >= 0:
            if len(_IDLE_CLIENTS) < MAX_IDLE_CLIENTS:
                p.resetSimulation(physicsClientId=self.client)
                _IDLE_CLIENTS.append(self.client)
            else:
                p.disconnect(physicsClientId=self.client)
            self.client = -1


#: Top of the ground floor slab (m): the floor of the ground-height raster (:class:`~simready.sim.scene.GroundModel`).
GROUND_FLOOR_Z = 0.0
GROUND_SLAB_DEPTH_M = 1.0

#: Semantic classes whose colliders are paint: left out of the physics world (their millimetre
#: steps would act as kerbs on wheels that, in this model, do not roll).
DECAL_CLASSES = frozenset({"crosswalk_marking"})


def _world_boxes(catalog: Any, inst: Any) -> list[tuple[float, ...]] | None:
    """World-axis-aligned boxes ``(x0, x1, y0, y1, z0, z1)`` of an instance whose pieces are all boxes at a right-angle yaw."""
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
class _BodyGroup:
    """Static bodies sharing one collision shape and orientation: created in one batched ``createMultiBody`` call.

    ``shape`` is an asset id (its compound collider) or box half extents (m);
    ``positions`` are body origins (m, world); ``keys`` index
    :attr:`_WorldPlan.names` (one per body, in body order).
    """

    shape: str | tuple[float, float, float]
    quat: tuple[float, float, float, float]
    positions: tuple[tuple[float, float, float], ...]
    keys: tuple[int, ...]
    ground: bool


@dataclass(frozen=True)
class _WorldPlan:
    """What a scene's static world consists of: pure data, the same for every build of the scene.

    Computing it reads the catalog and merges the ground tiles (up to ~20 ms
    on a large template), so it is cached per template and catalog contract;
    the PyBullet calls made from it are the same whether it was cached or not.
    ``names``: static collider names sorted by instance name, then the ground
    boxes; a contact key is ``-1 - index`` into it.
    """

    groups: tuple[_BodyGroup, ...]
    names: tuple[str, ...]


#: World plans per (catalog folder, template hash, bounds, contract hashes of the assets used).
_PLANS: dict[tuple[Any, ...], _WorldPlan] = {}


def world_plan(scene: Scene) -> _WorldPlan:
    """The static world of ``scene`` as batched body groups (cached: see :class:`_WorldPlan`)."""
    cat = scene.catalog
    insts = sorted(scene.template.instances, key=lambda i: i.name)
    for inst in insts:
        if inst.asset not in cat.entries:
            raise CatalogError(cat.generated_dir, "entries", f"template instance {inst.name} uses {inst.asset}, not in the catalog")
    contracts = tuple(sorted({(i.asset, cat.entry(i.asset).contract_sha256) for i in insts}))
    key = (str(cat.generated_dir), scene.template_hash, scene.bounds, C.OUT_OF_BOUNDS_MARGIN_M, contracts)
    hit = _PLANS.get(key)
    if hit is None:
        hit = _PLANS[key] = _make_plan(scene, insts)
    return hit


def _make_plan(scene: Scene, insts: list[Any]) -> _WorldPlan:
    cat = scene.catalog
    names: list[str] = []
    bodies: dict[tuple[Any, ...], list[tuple[tuple[float, float, float], int]]] = {}
    ground: list[tuple[float, ...]] = []
    for inst in insts:
        entry = cat.entry(inst.asset)
        if entry.semantic_class in DECAL_CLASSES:
            continue
        is_ground = entry.semantic_class in GROUND_CLASSES and entry.family != "curb"
        if is_ground:
            boxes = _world_boxes(cat, inst)
            if boxes is not None:
                ground.extend(boxes)
                continue
        group = (inst.asset, tuple(_quat_yaw(inst.pose.yaw_rad)), is_ground)
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
    for k, (x0, x1, y0, y1, z0, z1) in enumerate(boxes):
        group = ((x1 - x0) / 2, (y1 - y0) / 2, (z1 - z0) / 2), (0.0, 0.0, 0.0, 1.0), True
        bodies.setdefault(group, []).append((((x0 + x1) / 2, (y0 + y1) / 2, (z0 + z1) / 2), len(names)))
        names.append(f"{scene.template.id}/ground:{k}")
    groups = tuple(_BodyGroup(shape, quat, tuple(pos for pos, _ in members), tuple(k for _, k in members), is_ground)
                   for (shape, quat, is_ground), members in sorted(bodies.items(), key=lambda kv: kv[1][0][1]))
    return _WorldPlan(groups, tuple(names))


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def principal_axes(inertia: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Principal moments and the rotation ``[x, y, z, w]`` from body to principal axes, kept next to the body axes.

    A diagonal tensor keeps its order and the identity rotation; otherwise
    each eigenvector is assigned to the body axis it is most aligned with, so
    the inertial frame differs from the body frame by the product-of-inertia tilt.
    """
    off = inertia - np.diag(np.diag(inertia))
    if np.abs(off).max() <= 1e-9 * max(float(np.abs(inertia).max()), 1.0):
        return np.diag(inertia).copy(), np.array([0.0, 0.0, 0.0, 1.0])
    moments, vecs = np.linalg.eigh(inertia)
    order = [int(np.argmax(np.abs(vecs[k, :]))) for k in range(3)]
    axes = vecs[:, order]
    moments = moments[order]
    for k in range(3):
        if axes[k, k] < 0:
            axes[:, k] = -axes[:, k]
    if np.linalg.det(axes) < 0:
        axes[:, 2] = -axes[:, 2]
    return moments, quat_from_matrix(axes)


_ORIGIN = (0.0, 0.0, 0.0)
_IDENTITY_QUAT = (0.0, 0.0, 0.0, 1.0)


def _heading_xy(q: Any) -> tuple[float, float]:
    """Entries (0, 0) and (1, 0) of the rotation matrix of quaternion ``q`` = [x, y, z, w].

    The same operations in the same order as Bullet's ``btMatrix3x3::setRotation``
    (what ``p.getMatrixFromQuaternion`` returns), so the result is bit-identical
    without the ~1 µs call (tested).
    """
    x, y, z, w = q
    s = 2.0 / (x * x + y * y + z * z + w * w)
    ys, zs = y * s, z * s
    return 1.0 - (y * ys + z * zs), x * ys + w * zs


def _quat_yaw(yaw: float) -> list[float]:
    return [0.0, 0.0, math.sin(0.5 * yaw), math.cos(0.5 * yaw)]


@dataclass(frozen=True, eq=False)
class Chassis:
    """Mass properties of one vehicle body, from its certified catalog entry (SI units, body frame).

    ``com``: centre of mass (m) from the body origin; ``inertia``: the tensor about it (body frame, kg·m²);
    ``inertia_diag``: principal moments (kg·m²);
    ``inertial_quat``: body → principal axes ``[x, y, z, w]`` (identity for a diagonal tensor), and
    ``inertial_inv`` its inverse; ``wheelbase``,
    ``lf``, ``lr``: axle distances (m), the axles from the centre of mass.
    """

    mass: float
    com: np.ndarray
    inertia: tuple[tuple[float, float, float], ...]
    inertia_diag: np.ndarray
    inertial_quat: np.ndarray
    inertial_inv: tuple[float, ...]
    identity_inertial: bool
    wheelbase: float
    lf: float
    lr: float
    restitution: float

    @classmethod
    def of(cls, entry: Any) -> Chassis:
        com = np.asarray(entry.center_of_mass_m, dtype=np.float64)
        inertia = np.asarray(entry.inertia_kg_m2, dtype=np.float64)
        diag, quat = principal_axes(inertia)
        params = entry.generator.params if entry.generator else {}
        wheelbase = float(params.get("wheelbase", 0.6 * entry.dimensions_m.length))
        inv = tuple(p.invertTransform([0, 0, 0], quat.tolist())[1])
        return cls(float(entry.mass_kg), com, tuple(tuple(float(v) for v in row) for row in inertia), diag, quat, inv, bool(quat[3] == 1.0), wheelbase,
                   wheelbase / 2 - float(com[0]), wheelbase / 2 + float(com[0]), float(entry.restitution))


class DynamicBackend(Backend):
    name: ClassVar[str] = "dynamic-v1"
    extras: ClassVar[tuple[str, ...]] = COMMON_EXTRAS + ("tyre_util",)

    def __init__(self, scene: Scene) -> None:
        super().__init__(scene)
        if scene.catalog is None:
            raise CatalogError("<catalog>", "", "dynamic-v1 needs the asset catalog")
        self.substeps = substeps_per_tick(scene.dt)
        self.h = scene.dt / self.substeps
        self.world: _World | None = None
        self.static_contact_names: dict[tuple[int, int], str] = {}
        self._violations: dict[str, list[str]] = {"tunnelling": [], "energy_gain": [], "explosion": []}
        a = scene.actors
        self.ego = a.ego
        # Vehicles are rigid bodies; pedestrians and cyclists have none (see the module docstring: a light road
        # user meeting a vehicle is the impact model's, :mod:`simready.sim.impact`).
        self.physical = a.is_vehicle.copy()
        self.vehicles = [i for i in range(len(a)) if self.physical[i]]
        self.agent_idx = [i for i in self.vehicles if i != self.ego and not a.parked[i]]
        self.parked_idx = [i for i in self.vehicles if a.parked[i]]
        self.chassis = {i: Chassis.of(scene.catalog.entry(a.asset_ids[i])) for i in self.vehicles}
        self._prev_com: list[float] = []
        self._prev_tick = -1
        self._hidden: set[int] = set()
        self._woken: frozenset[int] = frozenset()
        self._masses = [impact.road_user_mass(scene, i) for i in range(len(a))]
        self._ego_params()

    # --- construction --------------------------------------------------------------

    def _ego_params(self) -> None:
        if self.ego is None:
            return
        ch = self.chassis[self.ego]
        self.mass, self.com = ch.mass, ch.com
        self.inertia_diag, self.inertial_quat = ch.inertia_diag, ch.inertial_quat
        self._inertia_list = [float(x) for x in self.inertia_diag]
        self._inertial_inv = ch.inertial_inv
        self.wheelbase, self.lf, self.lr = ch.wheelbase, ch.lf, ch.lr

    def _build(self) -> None:
        """Create the PyBullet world: statics from the (cached) plan, then the vehicles in actor order."""
        scene = self.scene
        plan = world_plan(scene)
        # Collision pieces before the client: an asset's first look-up checks its reduced hull files in a pooled
        # client (:func:`_reduced_hulls`), which this world then takes instead of connecting another (~20 ms).
        a = scene.actors
        used = {g.shape for g in plan.groups if isinstance(g.shape, str)}
        used.update(a.asset_ids[i] for i in self.vehicles)
        for asset in sorted(used):
            asset_pieces(scene.catalog, asset)
        w = _World()
        self.world = w
        w.call(p.setGravity, 0.0, 0.0, -C.GRAVITY_MPS2)
        w.call(p.setPhysicsEngineParameter, fixedTimeStep=self.h, numSubSteps=0, numSolverIterations=S.solver_iterations,
               deterministicOverlappingPairs=S.deterministic_overlapping_pairs)
        self._build_statics(w, plan)
        self._build_vehicles(w)

    def _build_statics(self, w: _World, plan: _WorldPlan) -> None:
        """One batched ``createMultiBody`` per group of same-shape, same-orientation statics (~0.1 ms a call)."""
        cat, cid, names = self.scene.catalog, w.client, plan.names
        self.static_names: dict[int, str] = {}
        self.static_key: dict[int, int] = {}
        self.ground_bodies: set[int] = set()
        for g in plan.groups:
            shape = w.shape(cat, g.shape) if isinstance(g.shape, str) else w.box(g.shape)
            bodies = w.batch(0.0, shape, g.positions, g.quat)
            group, mask = (GROUND_GROUP, EGO_GROUP) if g.ground else (STATIC_GROUP, EGO_GROUP | AGENT_GROUP | RAY_GROUP)
            for body in bodies:
                p.setCollisionFilterGroupMask(body, -1, group, mask, physicsClientId=cid)
            self.static_key.update(zip(bodies, g.keys))
            self.static_names.update((body, names[k]) for body, k in zip(bodies, g.keys))
            if g.ground:
                self.ground_bodies.update(bodies)

    def _build_vehicles(self, w: _World) -> None:
        """Every vehicle a rigid body with its catalog mass, centre of mass and principal inertia, in actor order.

        Contact friction is 0 on every vehicle: tyre forces are applied explicitly (the ego's tyre model,
        the agents' drive model). A parked vehicle starts as an immovable body (mass 0, which PyBullet
        keeps out of its dynamics) until something comes near (:meth:`_wake`).
        """
        self.actor_body: dict[int, int] = {}
        self.body_actor: dict[int, int] = {}
        for i in self.vehicles:
            self._create(i, not self.scene.actors.parked[i], [0.0, 0.0, -100.0 - i], [0.0, 0.0, 0.0, 1.0])
        if self.ego is not None:
            self.ego_body = self.actor_body[self.ego]

    def _create(self, i: int, dynamic: bool, com_w: list[float], q_in: list[float]) -> int:
        """Vehicle ``i``'s body, dynamic with its chassis or immovable (mass 0), its centre of mass at ``com_w`` (world,
        m) with the inertial frame at ``q_in``."""
        w = self.world
        ch = self.chassis[i]
        mass = ch.mass if dynamic else 0.0
        body = w.call(p.createMultiBody, mass, w.shape(self.scene.catalog, self.scene.actors.asset_ids[i]), -1, com_w, q_in,
                      baseInertialFramePosition=ch.com.tolist(), baseInertialFrameOrientation=ch.inertial_quat.tolist(),
                      useMaximalCoordinates=True)
        if dynamic:
            # Mass must be passed with the inertia: PyBullet 3.2.7 zeroes a maximal-coordinate body's mass otherwise.
            w.call(p.changeDynamics, body, -1, mass=ch.mass, localInertiaDiagonal=ch.inertia_diag.tolist(), lateralFriction=0.0,
                   spinningFriction=0.0, rollingFriction=0.0, restitution=ch.restitution,
                   linearDamping=0.0, angularDamping=0.0, activationState=p.ACTIVATION_STATE_DISABLE_SLEEPING)
        else:
            w.call(p.changeDynamics, body, -1, lateralFriction=0.0, spinningFriction=0.0, rollingFriction=0.0,
                   restitution=ch.restitution)
        w.call(p.setCollisionFilterGroupMask, body, -1, *(EGO_FILTER if i == self.ego else AGENT_FILTER))
        self.actor_body[i] = body
        self.body_actor[body] = i
        return body

    def _make_dynamic(self, i: int, bodies: Bodies) -> None:
        """A parked vehicle woken: its immovable body replaced by a dynamic one at the engine's pose and twist.

        Why replaced: PyBullet cannot turn a body created with mass 0 into a dynamic one, and one created
        dynamic costs a contact solve every substep even at mass 0.
        """
        old = self.actor_body[i]
        del self.body_actor[old]
        self.world.call(p.removeBody, old)
        self._create(i, True, [0.0, 0.0, -100.0 - i], [0.0, 0.0, 0.0, 1.0])
        self._place(i, bodies)

    # --- state exchange -----------------------------------------------------------------

    def _set_mass(self, i: int, on: bool) -> None:
        """A vehicle's body dynamic (its catalog mass) or immovable (mass 0), without moving it."""
        ch = self.chassis[i]
        if on:
            self.world.call(p.changeDynamics, self.actor_body[i], -1, mass=ch.mass, localInertiaDiagonal=ch.inertia_diag.tolist())
        else:
            self.world.call(p.changeDynamics, self.actor_body[i], -1, mass=0.0)

    def hold_agents(self) -> None:
        """Every vehicle but the ego immovable where it stands (the settle stage: only the ego's spawn is in question,
        and no drive force holds the agents up)."""
        for i in self.agent_idx:
            self._set_mass(i, False)

    def _dynamic(self, i: int) -> bool:
        """Whether vehicle ``i``'s body currently moves under forces (not parked-and-asleep, not absent)."""
        return i not in self._hidden and (not self.scene.actors.parked[i] or i in self._woken)

    def _place(self, i: int, bodies: Bodies) -> None:
        """Put vehicle ``i``'s body at the engine's pose and twist (origin → centre of mass)."""
        w = self.world
        ch = self.chassis[i]
        q = bodies.quat[i]
        R = np.array(p.getMatrixFromQuaternion(q.tolist())).reshape(3, 3)
        com_w = bodies.pos[i] + R @ ch.com
        v_com = bodies.vel[i] + _cross(bodies.omega[i], R @ ch.com)
        q_in = np.array(p.multiplyTransforms([0, 0, 0], q.tolist(), [0, 0, 0], ch.inertial_quat.tolist())[1])
        body = self.actor_body[i]
        w.call(p.resetBasePositionAndOrientation, body, com_w.tolist(), q_in.tolist())
        if self._dynamic(i):
            w.call(p.resetBaseVelocity, body, v_com.tolist(), bodies.omega[i].tolist())
        # A reset moves the body without clearing its contact manifolds; re-registering it does.
        w.call(p.setCollisionFilterGroupMask, body, -1, *(EGO_FILTER if i == self.ego else AGENT_FILTER))

    def _place_ego(self, bodies: Bodies) -> None:
        self._place(self.ego, bodies)

    def _hide(self, i: int) -> None:
        """An absent vehicle: immovable, colliding with nothing, underground."""
        if i in self._hidden:
            return
        self._hidden.add(i)
        self._set_mass(i, False)
        body = self.actor_body[i]
        self.world.call(p.setCollisionFilterGroupMask, body, -1, 0, 0)
        self.world.call(p.resetBasePositionAndOrientation, body, [0.0, 0.0, -100.0 - i], _IDENTITY_QUAT)

    def _show(self, i: int, bodies: Bodies) -> None:
        """A vehicle that (re)appears: back to its mass, at the engine's pose and twist."""
        self._hidden.discard(i)
        if self._dynamic(i):
            self._set_mass(i, True)
        self._place(i, bodies)

    def _read(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[float, float, float]]:
        """Vehicle ``i``'s body origin position, quaternion [x,y,z,w], origin velocity, angular velocity (world),
        rotation matrix, and the lever arm from the origin to the centre of mass (world, m)."""
        cid = self.world.client
        ch = self.chassis[i]
        body = self.actor_body[i]
        com_w, q_in = p.getBasePositionAndOrientation(body, physicsClientId=cid)
        lin, (wx, wy, wz) = p.getBaseVelocity(body, physicsClientId=cid)
        q = q_in if ch.identity_inertial else p.multiplyTransforms(_ORIGIN, q_in, _ORIGIN, ch.inertial_inv)[1]
        if q[3] < 0:
            q = tuple(-x for x in q)
        R = np.array(p.getMatrixFromQuaternion(q)).reshape(3, 3)
        # The lever arm stays a numpy product (its bits are BLAS's); the rest is the same IEEE arithmetic
        # on Python floats that numpy would do element by element.
        rx, ry, rz = (R @ ch.com).tolist()
        pos = np.array([com_w[0] - rx, com_w[1] - ry, com_w[2] - rz])
        vel = np.array([lin[0] - (wy * rz - wz * ry), lin[1] - (wz * rx - wx * rz), lin[2] - (wx * ry - wy * rx)])
        return pos, np.array(q), vel, np.array([wx, wy, wz]), R, (rx, ry, rz)

    def _read_ego(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[float, float, float]]:
        return self._read(self.ego)

    def start(self, state: SimState) -> StepOutcome:
        if self.world is None:
            self._build()
        self._woken = frozenset(state.world.woken)
        for i in sorted(self._woken):
            self._make_dynamic(i, state.bodies)
        for i in self.vehicles:
            if state.bodies.present[i]:
                self._place(i, state.bodies)
            else:
                self._hide(i)
        return StepOutcome(state.bodies, state.coords, state.world.contacts, {})

    # --- stepping -------------------------------------------------------------------------------

    def _tyre_setup(self, steer: float, friction: float) -> tuple[float, ...]:
        """The per-tick constants of :meth:`_tyre_forces`, each the same expression it used to evaluate per substep.

        ``(m, lf, lr, k·Fz_f, k·Fz_r, μ·Fz_f, μ·Fz_r, cos δ, sin δ, μ·m·g, h)``: mass (kg),
        axle distances from the centre of mass (m), the axles' cornering
        stiffness (N/rad) and friction limits (N), the steering angle's
        cosine and sine, the holding-force limit (N) and the substep (s).
        """
        m, g = self.mass, C.GRAVITY_MPS2
        lf, lr = self.lf, self.lr
        fz_f, fz_r = m * g * lr / (lf + lr), m * g * lf / (lf + lr)
        k = S.cornering_stiffness_per_load
        return (m, lf, lr, k * fz_f, k * fz_r, friction * fz_f, friction * fz_r, math.cos(steer), math.sin(steer),
                friction * m * g, self.h)

    def _tyre_forces(self, steer: float, a_cmd: float, friction: float, setup: tuple[float, ...] | None = None) -> float:
        """Apply this substep's tyre forces to the ego; returns the tyre utilisation (``setup``: :meth:`_tyre_setup`).

        Runs every 5 ms substep, so it is scalar Python with two PyBullet reads
        and two force calls; the heading is PyBullet's own quaternion-to-matrix
        arithmetic (:func:`_heading_xy`), without the call.
        """
        if setup is None:
            setup = self._tyre_setup(steer, friction)
        m, lf, lr, kf, kr, limit_f, limit_r, cs, sn, hold, h = setup
        cid = self.world.client
        body = self.ego_body
        com_w, q_in = p.getBasePositionAndOrientation(body, physicsClientId=cid)
        lin, ang = p.getBaseVelocity(body, physicsClientId=cid)
        # Body axes in world (inertial frame == body frame for principal-aligned assets; otherwise close enough
        # for the planar tyre model, which only needs the heading): x = (hx, hy), y = (-hy, hx).
        r0, r3 = _heading_xy(q_in)
        norm = math.hypot(r0, r3) or 1.0
        hx, hy = r0 / norm, r3 / norm
        lx, ly = lin[0], lin[1]
        vx = lx * hx + ly * hy
        vy = lx * -hy + ly * hx
        r = ang[2]
        big_v = max(abs(vx), _SLIP_MIN_MPS)
        fy_f = kf * (steer - math.atan2(vy + lf * r, big_v))
        fy_r = kr * -math.atan2(vy - lr * r, big_v)
        if vx <= C.STANDSTILL_MPS and a_cmd <= 0.0:
            # At rest, or pushed backwards, with no drive demand: the brakes (or rolling resistance) hold it.
            fx = max(min(-m * vx / h, hold), -hold)
        else:
            fx = m * a_cmd
        fx_f = fx_r = 0.5 * fx
        total = math.hypot(fx_f, fy_f)
        util = max(0.0, total / limit_f if limit_f > 0 else 0.0)
        if total > limit_f > 0:
            sc = limit_f / total
            fx_f, fy_f = fx_f * sc, fy_f * sc
        total = math.hypot(fx_r, fy_r)
        util = max(util, total / limit_r if limit_r > 0 else 0.0)
        if total > limit_r > 0:
            sc = limit_r / total
            fx_r, fy_r = fx_r * sc, fy_r * sc
        # Front wheel frame: longitudinal rotated by the steering angle.
        fwx, fwy = hx * cs + -hy * sn, hy * cs + hx * sn
        cx, cy, cz = com_w
        p.applyExternalForce(body, -1, [fwx * fx_f + -fwy * fy_f, fwy * fx_f + fwx * fy_f, 0.0],
                             [cx + hx * lf, cy + hy * lf, cz], p.WORLD_FRAME, physicsClientId=cid)
        p.applyExternalForce(body, -1, [hx * fx_r + -hy * fy_r, hy * fx_r + hx * fy_r, 0.0],
                             [cx - hx * lr, cy - hy * lr, cz], p.WORLD_FRAME, physicsClientId=cid)
        return util

    def _energy_now(self) -> float:
        """Kinetic + potential energy of the ego (J), from PyBullet's centre-of-mass state (scalar maths)."""
        cid = self.world.client
        com, q = p.getBasePositionAndOrientation(self.ego_body, physicsClientId=cid)
        lin, ang = p.getBaseVelocity(self.ego_body, physicsClientId=cid)
        R = p.getMatrixFromQuaternion(q)
        # Angular velocity in the principal (inertial) frame: R^T ω.
        wx = R[0] * ang[0] + R[3] * ang[1] + R[6] * ang[2]
        wy = R[1] * ang[0] + R[4] * ang[1] + R[7] * ang[2]
        wz = R[2] * ang[0] + R[5] * ang[1] + R[8] * ang[2]
        ix, iy, iz = self._inertia_list
        kinetic = 0.5 * self.mass * (lin[0] ** 2 + lin[1] ** 2 + lin[2] ** 2) + 0.5 * (ix * wx * wx + iy * wy * wy + iz * wz * wz)
        return kinetic + self.mass * C.GRAVITY_MPS2 * com[2]

    def _steer(self, state: SimState, route: Any, plan: Any, crashed: bool) -> float:
        """The ego's steering angle for this tick: pure pursuit of its path, or straight after a crash (rate-limited)."""
        e = self.ego
        if crashed:
            want = 0.0
        else:
            path = route.paths.paths[e]
            c = state.coords
            v = float(c.v[e])
            look = max(S.preview_min_m, S.preview_gain_s * v)
            x, y = state.bodies.pos[e, 0], state.bodies.pos[e, 1]
            yaw = float(c.yaw[e])
            rear_x, rear_y = x - math.cos(yaw) * self.lr, y - math.sin(yaw) * self.lr
            tx, ty = path.point(float(c.u[e]) + look, float(plan.d_ref[e]))
            want = preview_steer(rear_x, rear_y, yaw, tx, ty, self.wheelbase)
            want = max(min(want, S.max_steer_rad), -S.max_steer_rad)
        step = S.max_steer_rate_rps * self.scene.dt
        prev = state.control.steer_rad
        return prev + max(min(want - prev, step), -step)

    def _wake(self, state: SimState) -> None:
        """Give a parked vehicle its mass once a moving vehicle body is near enough to touch it within a tick.

        Near: centre distance below both bounding radii, the other's travel in a tick and
        :data:`WAKE_MARGIN_M`. From then on it is a dynamic body held by its parking brake
        (:meth:`_drive`), pushed when something pushes harder than μ·m·g.
        """
        a = self.scene.actors
        b = state.bodies
        sleeping = [i for i in self.parked_idx if i not in self._woken and b.present[i]]
        if not sleeping:
            return
        movers = [j for j in self.vehicles if self._dynamic(j) and b.present[j]]
        woken = set(self._woken)
        for i in sleeping:
            for j in movers:
                reach = float(a.radius[i] + a.radius[j]) + WAKE_MARGIN_M + float(np.hypot(*b.vel[j, :2])) * self.scene.dt
                if math.hypot(float(b.pos[i, 0] - b.pos[j, 0]), float(b.pos[i, 1] - b.pos[j, 1])) < reach:
                    woken.add(i)
                    self._woken = frozenset(woken)
                    self._make_dynamic(i, b)
                    break
        self._woken = frozenset(woken)

    def _drive(self, i: int, state: SimState, kin: Bodies, yaw: np.ndarray, plan: Any, stop: bool) -> tuple[float, ...]:
        """The agent drive model: this tick's force (N) and torque (N·m) on vehicle ``i`` (world frame).

        Held for the tick (a 50 Hz controller) and applied at the centre of
        mass every substep.

        * **Tyres** (horizontal force, yaw torque). Following its path, the
          body's origin velocity is driven to the path controller's end-of-tick
          velocity plus a correction of the position error over
          :data:`DRIVE_POSITION_TAU_S`, and its yaw rate to the path's plus a
          heading correction over :data:`DRIVE_YAW_TAU_S`. Stopping (after a
          crash, or a parked vehicle's brake) the velocity is driven towards
          zero along the body's own motion at the planner's braking (μ·g for a
          parked car) and the yaw rate towards zero. Either way the force is
          limited to the friction circle μ·m·g and the yaw torque to
          μ·m·g·wheelbase/2: what tyres can deliver, so a harder contact pushes
          the body.
        * **Support** (vertical force, roll and pitch torques). The road carries
          the agent instead of a contact with the ground colliders (each
          vehicle–ground contact costs a convex solve every substep, most of
          the physics): gravity is balanced, the origin's height is driven to
          the ground height under it and the body's up axis to the vertical,
          both over :data:`SUPPORT_TAU_S`. A crash that lifts or tilts the
          body is thus undone like by a stiff, damped suspension.
        """
        dt = self.scene.dt
        ch = self.chassis[i]
        b = state.bodies
        mu_g = state.world.friction * C.GRAVITY_MPS2
        x, y, z = b.pos[i].tolist()
        vx, vy, vz = b.vel[i].tolist()
        wx, wy, wz = b.omega[i].tolist()
        if stop:
            decel = mu_g if self.scene.actors.parked[i] else min(max(-float(plan.accel[i]), 0.0), mu_g) or mu_g
            speed = math.hypot(vx, vy)
            keep = max(1.0 - decel * dt / speed, 0.0) if speed > 0.0 else 0.0
            ax, ay = (keep - 1.0) * vx / dt, (keep - 1.0) * vy / dt
            w_des = 0.0
        else:
            tx, ty = float(kin.vel[i, 0]), float(kin.vel[i, 1])
            ex = float(kin.pos[i, 0]) - (x + 0.5 * (vx + tx) * dt)
            ey = float(kin.pos[i, 1]) - (y + 0.5 * (vy + ty) * dt)
            ax = (tx + ex / DRIVE_POSITION_TAU_S - vx) / dt
            ay = (ty + ey / DRIVE_POSITION_TAU_S - vy) / dt
            wt = float(kin.omega[i, 2])
            head = (float(yaw[i]) - (float(state.coords.yaw[i]) + 0.5 * (wz + wt) * dt) + math.pi) % (2 * math.pi) - math.pi
            w_des = wt + head / DRIVE_YAW_TAU_S
        acc = math.hypot(ax, ay)
        if acc > mu_g:
            ax, ay = ax * mu_g / acc, ay * mu_g / acc
        az = C.GRAVITY_MPS2 + ((self.scene.ground.at_point(x, y) - z) / SUPPORT_TAU_S - vz) / dt
        R = p.getMatrixFromQuaternion(b.quat[i].tolist())
        # The body's up axis (R's third column) turned to the vertical: the rotation vector up × e_z.
        dwx, dwy, dwz = R[5] / SUPPORT_TAU_S - wx, -R[2] / SUPPORT_TAU_S - wy, w_des - wz
        # Torque = R·I·Rᵀ·Δω / dt, I the body-frame inertia tensor.
        rx = (R[0] * dwx + R[3] * dwy + R[6] * dwz) / dt
        ry = (R[1] * dwx + R[4] * dwy + R[7] * dwz) / dt
        rz = (R[2] * dwx + R[5] * dwy + R[8] * dwz) / dt
        I = ch.inertia
        ix, iy, iz = (I[0][0] * rx + I[0][1] * ry + I[0][2] * rz, I[1][0] * rx + I[1][1] * ry + I[1][2] * rz,
                      I[2][0] * rx + I[2][1] * ry + I[2][2] * rz)
        tqx, tqy, tqz = R[0] * ix + R[1] * iy + R[2] * iz, R[3] * ix + R[4] * iy + R[5] * iz, R[6] * ix + R[7] * iy + R[8] * iz
        limit = ch.mass * mu_g * 0.5 * ch.wheelbase
        tqz = max(min(tqz, limit), -limit)
        cx, cy, cz = ch.com.tolist()
        com = (x + R[0] * cx + R[1] * cy + R[2] * cz, y + R[3] * cx + R[4] * cy + R[5] * cz, z + R[6] * cx + R[7] * cy + R[8] * cz)
        m = ch.mass
        return (self.actor_body[i], m * ax, m * ay, m * az, tqx, tqy, tqz, *com, vx, vy, vz)

    def advance(self, state: SimState, route: Any, plan: Any) -> StepOutcome:
        scene = self.scene
        a = scene.actors
        c = state.coords
        present = state.bodies.present
        step = step_on_paths(scene, route.paths, state.bodies, c.yaw, c.u, c.v, plan.accel, plan.d_ref, plan.d_rate,
                             plan.d_acc)
        kin, yaw, slip, accel = step.bodies, step.yaw, step.slip, step.accel
        goals = state.control.longitudinal
        for i in self.vehicles:
            if not present[i]:
                self._hide(i)
            elif i in self._hidden:
                self._show(i, kin)
        self._wake(state)
        e = self.ego if self.ego is not None and present[self.ego] else None
        steer = 0.0
        util = 0.0
        # The energy check only applies to a tick without actuation; reading the energy changes nothing.
        e_before = self._energy_now() if e is not None and plan.throttle[e] <= 0.0 and plan.accel[e] <= 0.0 else None
        drives = [self._drive(i, state, kin, yaw, plan, post_crash(goals[i]) or bool(a.parked[i]))
                  for i in self.vehicles if i != self.ego and present[i] and self._dynamic(i)]
        if e is not None:
            steer = self._steer(state, route, plan, post_crash(goals[e]))
            a_cmd, friction = float(plan.accel[e]), state.world.friction
            setup = self._tyre_setup(steer, friction)
        cid = self.world.client
        force, torque, world = p.applyExternalForce, p.applyExternalTorque, p.WORLD_FRAME
        h = self.h
        for k in range(self.substeps):
            for body, fx, fy, fz, tx, ty, tz, cx, cy, cz, vx, vy, vz in drives:
                force(body, -1, [fx, fy, fz], [cx + vx * h * k, cy + vy * h * k, cz + vz * h * k], world, physicsClientId=cid)
                torque(body, -1, [tx, ty, tz], world, physicsClientId=cid)
            if e is not None:
                util = max(util, self._tyre_forces(steer, a_cmd, friction, setup))
            p.stepSimulation(physicsClientId=cid)
        pos, quat, vel, omega = (np.array(x) for x in (kin.pos, kin.quat, kin.vel, kin.omega))
        yaw = np.array(yaw)
        u_out, d_out, v_out = np.array(step.u), np.array(plan.d_ref), np.array(step.v)
        slip = np.array(slip)
        extras = {"accel_mps2": accel, "throttle": plan.throttle, "brake": plan.brake,
                  "steer_rad": np.zeros(len(a)), "slip_rad": slip, "tyre_util": np.zeros(len(a))}
        lever = (0.0, 0.0, 0.0)
        for i in self.vehicles:
            if not present[i]:
                continue
            if not self._dynamic(i):
                pos[i], quat[i], vel[i], omega[i] = state.bodies.pos[i], state.bodies.quat[i], 0.0, 0.0
                yaw[i], u_out[i], d_out[i], v_out[i] = c.yaw[i], c.u[i], c.d[i], 0.0
                continue
            bp, bq, bv, bo, R, arm = self._read(i)
            if i == e:
                lever = arm
            pos[i], quat[i], vel[i], omega[i] = bp, bq, bv, bo
            heading = math.atan2(R[1, 0], R[0, 0])
            yaw[i] = heading
            u_out[i], d_out[i] = route.paths.paths[i].project_near(float(bp[0]), float(bp[1]), float(c.u[i]))
            v_out[i] = max(float(bv[0] * math.cos(heading) + bv[1] * math.sin(heading)), 0.0)
            vdir = math.atan2(bv[1], bv[0]) if math.hypot(bv[0], bv[1]) > 0.1 else heading
            slip[i] = (vdir - heading + math.pi) % (2 * math.pi) - math.pi
        if e is not None:
            extras["steer_rad"][e] = steer
            extras["tyre_util"][e] = util
        contacts, impacts = self._contacts(state, pos, yaw, present)
        struck, hit = self._strike(state, contacts, pos, quat, vel, omega, yaw)
        for i in impact.struck_actors(struck):
            u_out[i], d_out[i], v_out[i] = c.u[i], c.d[i], 0.0
        for user, vehicle in hit:
            impacts.setdefault((min(user, vehicle), max(user, vehicle)), (float(pos[user, 0]), float(pos[user, 1])))
        if e is not None:
            touching = any(e in pair and pair[0] + pair[1] - e >= 0 for pair in contacts)
            self._check(state, pos[e], vel[e], omega[e], lever, e_before, plan, touching or any(e == v for _, v in hit))
        coords = PathCoords(c.path_keys, frozen(u_out), frozen(d_out), frozen(plan.d_rate), frozen(v_out), frozen(accel),
                            frozen(yaw))
        bodies = Bodies(frozen(pos), frozen(quat), frozen(vel), frozen(omega), present)
        return StepOutcome(bodies, coords, frozenset(contacts), extras, impacts=impacts, struck=struck, woken=self._woken)

    def _contacts(self, state: SimState, pos: np.ndarray, yaw: np.ndarray,
                  present: np.ndarray) -> tuple[set[tuple[int, int]], dict[tuple[int, int], tuple[float, float]]]:
        """This tick's contacts and the impact point (world x, y) of each new one.

        Between vehicles, and between a vehicle and a static collider other
        than the ground: PyBullet's contact points. Any pair with a
        pedestrian or cyclist (no rigid body): their footprints at the
        tick's final poses.
        """
        out: set[tuple[int, int]] = set()
        points: dict[tuple[int, int], tuple[float, float]] = {}
        body_actor, statics = self.body_actor, self.static_names
        for cp in p.getContactPoints(physicsClientId=self.world.client):
            ba, bb = cp[1], cp[2]
            i, j = body_actor.get(ba), body_actor.get(bb)
            if i is None and j is None:
                continue
            if i is None or j is None:
                other = bb if i is not None else ba
                if other in self.ground_bodies or other not in statics:
                    continue
                actor = i if i is not None else j
                pair = (actor, -1 - self.static_key[other])
                self.static_contact_names[pair] = statics[other]
            else:
                pair = (min(i, j), max(i, j))
            if pair not in out:
                out.add(pair)
                points[pair] = (round(float(cp[5][0]), 6), round(float(cp[5][1]), 6))
        phys = self.physical
        for pair in footprint_contacts(self.scene, pos, yaw, present):
            if not (phys[pair[0]] and phys[pair[1]]):
                out.add(pair)
        before = state.world.contacts
        return out, {k: v for k, v in points.items() if k not in before}

    def _strike(self, state: SimState, contacts: set[tuple[int, int]], pos: np.ndarray, quat: np.ndarray, vel: np.ndarray,
                omega: np.ndarray, yaw: np.ndarray) -> tuple[tuple[impact.Struck, ...], list[tuple[int, int]]]:
        """Carry the struck road users and strike new ones (:mod:`simready.sim.impact`); rows are written in place."""
        b = state.bodies
        struck = impact.carry(state.control.struck, b.pos, b.quat, pos, quat, vel, omega, yaw)
        hit = impact.new_strikes(self.scene, frozenset(contacts), state.world.contacts, struck, b.present)
        if not hit:
            return struck, hit
        new = list(struck)
        for user, vehicle in hit:
            if self._dynamic(vehicle):
                dv = impact.impact_dv(self.chassis[vehicle].mass, self._masses[user], vel[vehicle], vel[user])
                lin, ang = self.world.call(p.getBaseVelocity, self.actor_body[vehicle])
                self.world.call(p.resetBaseVelocity, self.actor_body[vehicle], [lin[0] + dv[0], lin[1] + dv[1], lin[2]], ang)
                vel[vehicle, :2] += dv
            new.append(impact.strike(user, vehicle, pos, yaw))
        struck = impact.carry(tuple(sorted(new)), b.pos, b.quat, pos, quat, vel, omega, yaw)
        return struck, hit

    def _check(self, state: SimState, pos: np.ndarray, vel: np.ndarray, omega: np.ndarray, lever: tuple[float, float, float],
               e_before: float | None, plan: Any, touching: bool = False) -> None:
        """Note this tick's tunnelling, angular explosion and energy gain without actuation (see the module docstring).

        ``lever``: the origin-to-centre-of-mass arm :meth:`_read_ego` computed (world, m).

        ``e_before``: the ego's energy (J) before the tick, None when it was
        actuated; ``touching``: the ego touches another actor at the end of the
        tick (or struck one), which skips the energy comparison — momentum
        exchanged in a contact is not a solver error.
        """
        scene = self.scene
        e = self.ego
        ground = scene.ground.at_point(float(pos[0]), float(pos[1]))
        prev_com = self._prev_com if self._prev_tick == state.tick else (
            state.bodies.pos[e] + np.array(p.getMatrixFromQuaternion(state.bodies.quat[e].tolist())).reshape(3, 3) @ self.com).tolist()
        # pos + lever, as numpy's elementwise sum would give it.
        com = [x + r for x, r in zip(pos.tolist(), lever)]
        self._prev_com, self._prev_tick = com, state.tick + 1
        hit = p.rayTest(prev_com, com, collisionFilterMask=STATIC_GROUP, physicsClientId=self.world.client)[0]
        if hit[0] >= 0 and hit[0] != self.ego_body and hit[0] not in self.ground_bodies and hit[0] in self.static_names:
            self._note("tunnelling", f"t={self._t(state)}: ego centre of mass crossed {self.static_names[hit[0]]}")
        if pos[2] < ground - 0.3:
            self._note("tunnelling", f"t={self._t(state)}: ego origin {pos[2]:.2f} m is below the ground ({ground:.2f} m)")
        rate = max(map(abs, omega.tolist()))
        if rate > MAX_ANGULAR_RATE_RPS:
            self._note("explosion", f"t={self._t(state)}: ego angular rate {rate:.1f} rad/s")
        if e_before is not None and not touching and plan.throttle[e] <= 0.0 and plan.accel[e] <= 0.0:
            e_after = self._energy_now()
            if e_after > e_before * 1.005 + ENERGY_SLACK_J:
                self._note("energy_gain", f"t={self._t(state)}: ego energy rose {e_after - e_before:.0f} J without actuation")

    def _t(self, state: SimState) -> float:
        """Scenario time (s) at the end of the tick from ``state`` (what a finding is stamped with)."""
        return round((state.tick + 1 - self.scene.warmup_ticks) * self.scene.dt, 9)

    def _note(self, check: str, detail: str) -> None:
        """Keep the first four findings of ``check`` and the latest one (marked "and more" once there are more)."""
        if len(self._violations[check]) < 5:
            self._violations[check].append(detail)
        else:
            self._violations[check][-1] = detail + " (and more)"

    def rollout_checks(self) -> list[dict[str, Any]]:
        return [{"check": name, "passed": not found, "detail": "; ".join(found) if found else "none"}
                for name, found in sorted(self._violations.items())]

    def substep_s(self) -> float:
        return self.h

    def close(self) -> None:
        if self.world is not None:
            self.world.close()
            self.world = None
