"""Tracks of entities through one camera's frames (SPEC §11).

A track is one *life* of an entity: ``<entity id>#<life>``, life 0 from the
first frame the entity is present, a new life each time it is present again
after being absent (despawn / respawn). Every observation (one per frame
while present) keeps two kinds of facts apart:

* **world facts** — presence, pose (position, quaternion ``[x, y, z, w]``)
  and twist (world velocity, world angular velocity) at the frame's start
  time t0, from the trajectory (the world state), whatever the camera sees;
* **camera facts** — exactly one ``status`` of ``visible`` (at least one
  pixel of the id pass), ``occluded`` (in frame and in range but no pixel),
  ``beyond_range`` (every part farther than the far plane), ``out_of_frame``
  (in front but projecting outside the image), ``behind_camera`` (every part
  behind the optical plane), with the same facts as booleans, the visible
  pixel count, the visible box and the amodal box.

Boxes are inclusive pixel bounds ``[u_min, v_min, u_max, v_max]`` with pixel
centres at integers (a continuous extent [a, b] covers pixels
round(a) … round(b)); −1 everywhere when there is none. The visible box is
the bounds of the entity's pixels in the id pass; the amodal box is the
projection of the body's bounding box (its 8 corners, each at the row time
that sees it), clipped to the image. Camera facts other than ``visible``
come from those corners; a body straddling the optical plane counts as in
frame. Pixels are evidence: an entity with pixels is visible, whatever its
corners say.

Lifecycle events per track: ``born``, ``died``, ``entered_frame``,
``exited_frame``, ``became_visible``, ``became_occluded``,
``went_beyond_range``, ``came_into_range`` — each with the frame's tick and
time; ``born`` carries the first status.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from simready.truth.correspondence.bodies import static_bodies
from simready.truth.correspondence.projection import project_body_points
from simready.truth.correspondence.view import FrameView
from simready.truth.kernels.tracks import body_pixel_boxes
from simready.raycast.geometry import Hits, SceneGeometry, box_corners

STATUSES = ("visible", "occluded", "beyond_range", "out_of_frame", "behind_camera")
IN_FRAME = ("visible", "occluded", "beyond_range")
NO_BOX = -1


def inclusive_box(u_lo: NDArray, v_lo: NDArray, u_hi: NDArray, v_hi: NDArray, width_px: int,
                  height_px: int) -> NDArray[np.int64]:
    """(N, 4) inclusive pixel bounds of continuous extents, clipped to the image (pixel centres at integers)."""
    box = np.stack([np.floor(u_lo + 0.5), np.floor(v_lo + 0.5), np.ceil(u_hi - 0.5), np.ceil(v_hi - 0.5)], axis=1)
    box = np.clip(np.nan_to_num(box), 0, [width_px - 1, height_px - 1, width_px - 1, height_px - 1])
    return box.astype(np.int64)


@dataclass
class FrameTrackFacts:
    """Per tracked body, one frame's facts (arrays over the builder's bodies)."""

    present: NDArray[np.bool_]
    status: NDArray[np.object_]
    visible_pixels: NDArray[np.int64]
    visible_box: NDArray[np.int64]
    amodal_box: NDArray[np.int64]
    min_depth_m: NDArray[np.float64]


def _box_corners_of(vertices: list[NDArray[np.float64]]) -> NDArray[np.float64]:
    """(8·B, 3) each body's :func:`box_corners` of its vertices' least and greatest coordinates, body after
    body: the bounds of all of them in one reduction over their vertices side by side (the same values)."""
    if not vertices:
        return np.zeros((0, 3))
    if any(len(v) == 0 for v in vertices):  # min/max of no vertex: what the per-body bounds would raise
        return np.concatenate([box_corners(v.min(axis=0), v.max(axis=0)) for v in vertices])
    every = np.concatenate(vertices).astype(np.float64, copy=False)
    start = np.cumsum([0] + [len(v) for v in vertices[:-1]])
    lo, hi = np.minimum.reduceat(every, start, axis=0), np.maximum.reduceat(every, start, axis=0)
    bounds = np.stack([lo, hi], axis=1)  # (B, 2, 3)
    # box_corners' order: x outermost, then y, then z, each (lo, hi).
    x, y, z = np.meshgrid([0, 1], [0, 1], [0, 1], indexing="ij")
    corners = np.stack([bounds[:, x.ravel(), 0], bounds[:, y.ravel(), 1], bounds[:, z.ravel(), 2]], axis=2)
    return corners.reshape(-1, 3)


@dataclass
class TrackBuilder:
    """Accumulates one camera's track observations frame by frame (a few arrays per frame; no images kept).

    Args:
        scene: the geometric authority; camera: sensor name.
        ignore: entities not tracked (the camera's carrier).
    """

    scene: SceneGeometry
    camera: str
    ignore: Iterable[str] = ()
    _bodies: NDArray[np.intp] = field(init=False)
    _rows: list[dict[str, Any]] = field(init=False, default_factory=list)
    _events: list[dict[str, Any]] = field(init=False, default_factory=list)
    _life: NDArray[np.int64] = field(init=False)
    #: Each body's status in the last frame (None: absent), whether it was present, and its current track id.
    _last_status: NDArray[np.object_] = field(init=False)
    _alive: NDArray[np.bool_] = field(init=False)
    _track_ids: list[str] = field(init=False)
    _entities: list[str] = field(init=False)
    _facts: dict[str, NDArray] = field(init=False)
    _varying: list[int] = field(init=False)

    def __post_init__(self) -> None:
        skip = set(self.ignore)
        self._bodies = np.array([i for i, e in enumerate(self.scene.entity_ids_of_body) if e not in skip], np.intp)
        n = len(self._bodies)
        self._life = np.full(n, -1, np.int64)
        self._last_status = np.full(n, None, object)
        self._alive = np.zeros(n, bool)
        self._entities = [self.scene.entity_ids_of_body[b] for b in self._bodies]
        self._track_ids = [""] * n
        self._corners = _box_corners_of([self.scene.bodies[i].mesh_vertices for i in self._bodies])
        self._static = static_bodies(self.scene)[self._bodies]
        # A one-sample track has the same state at every time (PoseTrack.sample): its row is taken once, here.
        self._facts = self._constant_facts([j for j, b in enumerate(self._bodies)
                                            if self.scene.bodies[b].track.is_constant])
        self._varying = [j for j, b in enumerate(self._bodies) if not self.scene.bodies[b].track.is_constant]

    def _sampled_facts(self, t_s: float, rows: list[int], into: dict[str, NDArray] | None) -> dict[str, NDArray]:
        """Each body's state at ``t_s`` in rows ``rows`` of ``into`` (new zero arrays when None)."""
        n = len(self._bodies)
        if into is None:
            into = {"present": np.zeros(n, bool), "position": np.zeros((n, 3)), "quat": np.zeros((n, 4)),
                    "velocity": np.zeros((n, 3)), "angular_velocity": np.zeros((n, 3))}
        pos, quat, vel, ang, present = (into[k] for k in ("position", "quat", "velocity", "angular_velocity",
                                                            "present"))
        for j in rows:
            smp = self.scene.bodies[self._bodies[j]].track.sample([t_s], clamp=True)
            pos[j], quat[j], vel[j], ang[j], present[j] = (smp.position_m[0], smp.quat_xyzw[0], smp.velocity_mps[0],
                                                          smp.angular_velocity_rps[0], smp.present[0])
        return into

    def _constant_facts(self, rows: list[int]) -> dict[str, NDArray]:
        """:meth:`_sampled_facts` of bodies with one-sample tracks (the same state at every time, the track's one
        row, which :meth:`PoseTrack.sample` repeats): read from the tracks, not sampled one by one (a street's
        thousands of static bodies)."""
        facts = self._sampled_facts(0.0, [], None)
        if rows:
            tracks = [self.scene.bodies[self._bodies[j]].track for j in rows]
            for key, name in (("position", "position_m"), ("quat", "quat_xyzw"), ("velocity", "velocity_mps"),
                              ("angular_velocity", "angular_velocity_rps"), ("present", "present")):
                facts[key][rows] = np.stack([getattr(tr, name)[0] for tr in tracks])
        return facts

    def _world_facts(self, t_s: float) -> dict[str, NDArray]:
        return self._sampled_facts(t_s, self._varying, {k: v.copy() for k, v in self._facts.items()})

    def _camera_facts(self, view: FrameView, hits: Hits, present: NDArray[np.bool_]) -> FrameTrackFacts:
        k = view.intrinsics
        w, h = k.width_px, k.height_px
        n = len(self._bodies)
        nb = len(self.scene.bodies)
        # Visible pixels and boxes from the id pass (the hits' owning bodies).
        hit = hits.hit_index
        counts_all, lo_u, lo_v, hi_u, hi_v = body_pixel_boxes(hit, hits.body_index, w, h, nb)  # one pass
        counts = counts_all[self._bodies]
        vis_box = np.stack([lo_u, lo_v, hi_u, hi_v], axis=1)[self._bodies]
        vis_box[counts == 0] = NO_BOX
        # Corners, each at the row time that sees it.
        proj = project_body_points(self.scene, view, np.repeat(self._bodies, 8), self._corners)
        z = proj.depth_m.reshape(n, 8)
        front = z > 0.0
        uv = proj.uv.reshape(n, 8, 2)
        lo = np.where(front[..., None], uv, np.inf).min(axis=1)  # +inf where every corner is behind
        hi = np.where(front[..., None], uv, -np.inf).max(axis=1)
        u_lo, v_lo, u_hi, v_hi = lo[:, 0], lo[:, 1], hi[:, 0], hi[:, 1]
        behind = ~front.any(axis=1)
        straddles = front.any(axis=1) & ~front.all(axis=1)
        overlaps = (u_hi >= -0.5) & (u_lo <= w - 0.5) & (v_hi >= -0.5) & (v_lo <= h - 0.5)
        out_of_frame = ~behind & ~straddles & ~overlaps
        beyond = ~behind & ~out_of_frame & (z.min(axis=1) > view.model.far_m)
        visible = counts > 0
        status = np.where(visible, "visible", np.where(behind, "behind_camera", np.where(
            out_of_frame, "out_of_frame", np.where(beyond, "beyond_range", "occluded")))).astype(object)
        amodal = np.full((n, 4), NO_BOX, np.int64)
        framed = np.flatnonzero(present & (visible | (~behind & ~out_of_frame)))
        if len(framed):
            amodal[framed] = inclusive_box(u_lo[framed], v_lo[framed], u_hi[framed], v_hi[framed], w, h)
        return FrameTrackFacts(present, status, counts, vis_box, amodal, z.min(axis=1))

    def add(self, view: FrameView, hits: Hits) -> FrameTrackFacts:
        """Observe one frame (its view and primary-ray hits); returns that frame's facts."""
        world = self._world_facts(view.t0_s)
        facts = self._camera_facts(view, hits, world["present"])
        present = world["present"]
        entity = self._entities
        status = facts.status
        # Only the bodies whose lifecycle moves this frame emit events (born, died, or a present one's status
        # changed; the others' _transitions are empty): found in one pass over the arrays rather than a Python
        # step per body (a street's thousands of static bodies), then taken in body order as before.
        moved = (present != self._alive) | (present & self._alive & (self._last_status != status))
        for j in np.flatnonzero(moved).tolist():
            last = self._last_status[j]
            if present[j] and last is None:
                self._life[j] += 1
                self._track_ids[j] = f"{entity[j]}#{self._life[j]}"
                self._event(j, entity[j], "born", view, status[j])
            elif not present[j] and last is not None:
                self._event(j, entity[j], "died", view, last)
            elif present[j]:
                for name in _transitions(last, status[j]):
                    self._event(j, entity[j], name, view, status[j])
        self._last_status = np.where(present, status, None)
        self._alive = present.copy()
        idx = np.flatnonzero(present)
        if len(idx):
            status = facts.status[idx]
            self._rows.append({
                "track_id": [self._track_ids[j] for j in idx],
                "entity": [entity[j] for j in idx],
                "life": self._life[idx].astype(np.int32),
                "tick": np.full(len(idx), view.tick, np.int32),
                "t_s": np.full(len(idx), view.t0_s),
                "compact_id": self.scene.compact_id_of_body[self._bodies[idx]],
                "class_id": self.scene.semantic_of_body[self._bodies[idx]],
                "present": present[idx],
                **{f"{c}": world["position"][idx, i] for i, c in enumerate("xyz")},
                **{f"q{c}": world["quat"][idx, i] for i, c in enumerate("xyzw")},
                **{f"v{c}": world["velocity"][idx, i] for i, c in enumerate("xyz")},
                **{f"w{c}": world["angular_velocity"][idx, i] for i, c in enumerate("xyz")},
                "static": self._static[idx],
                "status": list(status),
                **{name: status == name for name in STATUSES},
                "visible_pixels": facts.visible_pixels[idx].astype(np.int32),
                **{f"box_{c}": facts.visible_box[idx, i].astype(np.int16)
                   for i, c in enumerate(("u_min", "v_min", "u_max", "v_max"))},
                **{f"amodal_{c}": facts.amodal_box[idx, i].astype(np.int16)
                   for i, c in enumerate(("u_min", "v_min", "u_max", "v_max"))},
                "min_depth_m": facts.min_depth_m[idx].astype(np.float32),
            })
        return facts

    def _event(self, j: int, entity: str, name: str, view: FrameView, status: str) -> None:
        self._events.append({"track_id": f"{entity}#{self._life[j]}", "entity": entity, "event": name,
                             "tick": int(view.tick), "t_s": float(view.t0_s), "status": status})

    def tracks_table(self) -> pa.Table:
        """Every observation so far, one row per (frame, present entity), frames in order."""
        if not self._rows:
            return pa.table({"track_id": pa.array([], pa.string())})
        columns = {key: np.concatenate([np.asarray(r[key]) for r in self._rows]) for key in self._rows[0]}
        table = {k: (pa.array(v.tolist(), pa.string()).dictionary_encode() if v.dtype == object else v)
                 for k, v in columns.items()}
        return pa.table(table)

    def events_table(self) -> pa.Table:
        """Lifecycle events in frame order (then body order)."""
        keys = ("track_id", "entity", "event", "tick", "t_s", "status")
        return pa.table({k: [e[k] for e in self._events] for k in keys},
                        schema=pa.schema([("track_id", pa.string()), ("entity", pa.string()), ("event", pa.string()),
                                          ("tick", pa.int32()), ("t_s", pa.float64()), ("status", pa.string())]))

    @property
    def events(self) -> list[dict[str, Any]]:
        return list(self._events)


def _transitions(before: str, after: str) -> list[str]:
    """Lifecycle events between two statuses of a present entity."""
    if before == after:
        return []
    out = []
    was_in, is_in = before in IN_FRAME, after in IN_FRAME
    if is_in and not was_in:
        out.append("entered_frame")
    if was_in and not is_in:
        out.append("exited_frame")
    if after == "beyond_range":
        out.append("went_beyond_range")
    elif before == "beyond_range" and is_in:
        out.append("came_into_range")
    if after == "visible":
        out.append("became_visible")
    elif after == "occluded":
        out.append("became_occluded")
    return out
