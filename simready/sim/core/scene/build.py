"""The compile step: a manifest resolved against its template and catalog into a :class:`~.model.Scene`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray
from shapely.ops import unary_union

from simready.common.errors import ManifestError
from simready.common.hashing import content_hash
from simready.common.memo import once_per_object
from simready.scenario.manifest import Actor, ScenarioManifest, canonicalize, manifest_hash
from simready.sim.core import constants as C
from simready.sim.core.reference_paths import ReferencePath, fixed_path, lane_path, walk_path
from simready.world.template import WorldTemplate, template_hash
from simready.sim.core.scene.actors import actor_table
from simready.sim.core.scene.ground import cached_ground_model
from simready.sim.core.scene.model import Scene, expand_walk
from simready.sim.core.scene.provenance import physics_config
from simready.sim.core.scene.signals import signal_table
from simready.sim.core.scene.validation import check_template, manifest_error, validate

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog

F = NDArray[np.float64]


#: Region types a pedestrian's kerb leads into.
ROAD_REGION_TYPES = ("drivable", "intersection")
#: A pose further than this from its route's lane centreline is not on that route (m).
MAX_ROUTE_OFFSET_M = 3.0


def _initial_path(m: ScenarioManifest, template: WorldTemplate, lane_index: dict[str, int], actor: Actor,
                  where: str) -> tuple[ReferencePath, float, float]:
    pose = actor.initial.pose
    if actor.role == "parked":
        return fixed_path(pose.x, pose.y, pose.yaw), 0.0, 0.0
    if actor.kind == "pedestrian":
        walk = actor.walk
        assert walk is not None  # a pedestrian has a walk block (the actor's validator)
        keep = float(walk.keep_right_m)
        # A pedestrian keeping right walks a line that far to the left of its pose (left of its heading).
        # (Rounded as the path's key rounds it, so that a path rebuilt from its key is this one.)
        start = (pose.x, pose.y) if not keep else (round(pose.x - keep * math.sin(pose.yaw), 9),
                                                   round(pose.y + keep * math.cos(pose.yaw), 9))
        p = walk_path(start, expand_walk(template, tuple(walk.route)), template.walk_graph.nodes,
                      tuple((v.x, v.y) for v in walk.via))
        return p, 0.0, -keep if keep else 0.0
    graph = template.lane_graph
    route = list(actor.behavior.route)
    ref = actor.initial.lane_ref
    if ref is not None:
        route = route[route.index(ref.lane):] if route else [ref.lane]
    elif not route:
        lane, _, _ = graph.nearest(pose.x, pose.y, pose.yaw, kinds=("driving", "turn"))
        route = [lane]
    p = lane_path(graph, route, lane_index)
    u, d = p.project(pose.x, pose.y)
    if abs(d) > MAX_ROUTE_OFFSET_M or u < -MAX_ROUTE_OFFSET_M:
        raise manifest_error(m, f"{where}.initial.pose", f"pose is {abs(d):.2f} m off its route's first lane {route[0]!r}")
    return p, u, d


def _static_edges(m: ScenarioManifest, template: WorldTemplate) -> tuple[F, F]:
    """Sight-line blocking edges: building regions and the manifest's box occluders."""
    e0: list[tuple[float, float]] = []
    e1: list[tuple[float, float]] = []
    for r in sorted(template.regions, key=lambda r: r.id):
        if r.type == "building":
            pts = list(r.polygon)
            for a, b in zip(pts, pts[1:] + pts[:1]):
                e0.append(a)
                e1.append(b)
    for occ in sorted(m.occluders, key=lambda o: o.id):
        if occ.pose is None or occ.dims is None:
            continue
        c, s = math.cos(occ.pose.yaw), math.sin(occ.pose.yaw)
        hl, hw = occ.dims.l / 2, occ.dims.w / 2
        pts = [(occ.pose.x + c * sx * hl - s * sy * hw, occ.pose.y + s * sx * hl + c * sy * hw)
               for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
        for a, b in zip(pts, pts[1:] + pts[:1]):
            e0.append(a)
            e1.append(b)
    return np.array(e0, dtype=np.float64).reshape(-1, 2), np.array(e1, dtype=np.float64).reshape(-1, 2)


#: Each template object's kerb regions (:func:`_kerb_regions`): a union of its road regions, ~3 ms a scene on an
#: imported street, the same for every scene built on it.
_KERB_REGIONS: dict[int, tuple[object, Any]] = {}


def _kerb_regions(template: WorldTemplate) -> Any:
    """The template's roads (drivable and intersection regions) as one shape, grown by 1 cm; None without roads."""
    roads = [r.shape for r in template.regions if r.type in ROAD_REGION_TYPES]
    return unary_union(roads).buffer(0.01) if roads else None


def build_scene(manifest: ScenarioManifest, template: WorldTemplate, *, backend: str, catalog: Catalog | None = None) -> Scene:
    """Validate and compile; any input problem raises :class:`ManifestError` before a single tick is stepped."""
    if backend not in C.BACKENDS:
        raise ManifestError(manifest.sample_id, "backend", f"unknown backend {backend!r}; known: {', '.join(C.BACKENDS)}")
    t_hash = template_hash(template)  # kept per template object (simready.world.template)
    # Validate in declaration order, so error paths index the user's own lists.
    check_template(manifest, template, t_hash)
    points = validate(manifest, template, catalog)
    m = canonicalize(manifest)
    actors = actor_table(m)
    lane_ids = tuple(template.lane_graph.lanes)
    lane_index = {lane: i for i, lane in enumerate(lane_ids)}
    by_id = {a.id: (i, a) for i, a in enumerate(manifest.actors)}
    paths, us, ds = [], [], []
    for actor_id in actors.ids:
        i, a = by_id[actor_id]
        p, u, d = _initial_path(m, template, lane_index, a, f"actors[{i}]")
        paths.append(p)
        us.append(u)
        ds.append(d)
    cfg = physics_config(backend, float(m.dt))
    scene = Scene(
        manifest=m,
        template=template,
        backend=backend,
        input_hash=manifest_hash(m),
        template_hash=t_hash,
        actors=actors,
        lane_ids=lane_ids,
        lane_widths=np.array([template.lane_graph.lanes[lane].width_m for lane in lane_ids]),
        initial_paths=tuple(paths),
        initial_u=np.array(us),
        initial_d=np.array(ds),
        signals=signal_table(m, template),
        static_edges=_static_edges(m, template),
        ground=cached_ground_model(template, t_hash, catalog),
        bounds=template.bounds,
        conflict_points=points,
        kerb_regions=once_per_object(_KERB_REGIONS, template, lambda: _kerb_regions(template)),
        catalog=catalog,
        config=cfg,
        config_hash=content_hash(cfg),
    )
    for p in paths:
        scene._paths.setdefault(p.key, p)
    return scene
