"""Scene geometry: the one geometric authority every sensor and label casts against.

Why one authority: camera pixels, LiDAR beams, radar rays and surface-identity
labels must agree on which triangle of which entity a ray meets, at which
distance, at the ray's own time. They all go through ``SceneGeometry.cast``.

How time is handled without rebuilding acceleration structures:

* Static bodies (constant tracks) are put into one Embree scene once, in
  world coordinates.
* Every moving body has its own Embree scene, built once in its *body*
  frame. A ray at time t is moved into the body frame with the body's pose at
  t (``T_body_world(t)``) and cast there; a rigid transform keeps ray
  parameters, so the distance is the world distance.
* Only rays whose segment can meet the body's world bounds *swept over the
  rays' time window* are transformed (a vectorized slab test), because
  transforming every ray into every body was the measured cost of the naive
  version (NOTES.md: ~490 ms a frame, numpy not Embree). A sensor may pass a
  ``prefilter`` that finds a superset of those rays from its own structure
  without touching every ray (the camera projects the box per row, the
  LiDAR takes its azimuth arc per column); the slab test still decides.
* Each moving cast is limited to the nearest distance found so far, so
  Embree itself keeps the nearest hit across static and moving bodies.

Precision and the float64 refinement: :mod:`simready.raycast.hits`. The other rooms: the bodies
(:mod:`simready.raycast.body`), the rays as cast (:mod:`simready.raycast.rays`), the triangle tables, Embree scenes
and the static-scene cache (:mod:`simready.raycast.meshes`).

Conventions: world frame x east, y north, z up; body frames as in
:mod:`simready.world.frames`; quaternions (inside tracks) are ``[x, y, z, w]``.
Barycentrics ``(u, v)`` weight the triangle's second and third vertex:
``p = (1 − u − v)·v0 + u·v1 + v·v2`` (Embree's convention). Triangle indices
are positions in the body's ``faces`` array (source order). Normals are
geometric face normals ``(v1 − v0) × (v2 − v0)``, unit length, outward for
counter-clockwise winding; they are not flipped toward the ray.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from functools import cached_property

import embreex.rtcore_scene as embree_scene
import numpy as np
from numpy.typing import ArrayLike, NDArray

from simready.common.scratch import work_array
from simready.raycast.body import Body, box_corners, read_obj_triangles
from simready.raycast.hits import Hits
from simready.raycast.embree_direct import intersect_query, ray_packet, scene_handle
from simready.raycast.kernels import (cast_static_rows, direction_candidates, direction_grid, mover_hits,
                                     rays_to_body, slab_select, spin_cast_static, spin_rays_into, static_box_shapes,
                                     static_hits, swept_box, swept_boxes)
from simready.raycast.meshes import TriangleTable, embree_scene_of, static_scene_of, static_world_vertices
from simready.raycast.rays import RayBatch, RayGroups, RayPrefilter, rows_f32, segment_starts, unique_inverse
from simready.world.identity import NOTHING_HIT, compact_ids
from simready.world.motion import _H, _PHI, _Q0, TIME_EPS_S
from simready.world.motion_kernels import planar_hermites, planar_poses, planar_window_samples

#: Names callers import from here (their owners: body, hits, rays).
__all__ = ["Body", "Hits", "RayPrefilter", "SceneGeometry", "box_corners", "read_obj_triangles"]

#: Largest gap, seconds, between the poses sampled to bound a body's sweep.
SWEEP_SAMPLE_S = 0.005
#: Safety factor on the motion allowed between two sampled poses.
SWEEP_PAD_FACTOR = 2.0
#: Absolute padding of swept bounds, metres (float32 slab-test slack).
SWEEP_PAD_M = 1e-3
#: ``slab_select``'s candidates when every ray is one.
_ALL = np.zeros(0, np.int64)
#: ``mover_hits``' cosines when a cast has none, and its hit flags and distances when the hits derive them.
_NO_COS = np.zeros(0, np.float32)
_NO_HIT = np.zeros(0, np.bool_)
_NO_DIST = np.zeros(0, np.float64)
#: Cells along each side of a direction's grid of the static bodies' boxes (:meth:`SceneGeometry._direction_grid`).
DIRECTION_GRID_CELLS = 256
#: Widening of a static body's box for the shadow rays' cull, metres, and relative to the largest coordinate of the
#: box or of the ray's origin: far beyond Embree's float32 rounding (a few ulps, ~1e-7 each), so a ray the widened
#: boxes' slab test rules out is one Embree would not see blocked either.
CULL_PAD_M = 1e-4
CULL_PAD_REL = 1e-6
#: How far inside a box-shaped static body's box (beyond that widening) a shadow ray must pass to be blocked without a
#: cast, metres.
CULL_INSIDE_M = 1e-3
#: What :meth:`SceneGeometry._mover_rays` returns when no ray can meet the body.
_NO_RAYS = (np.zeros(0, np.intp), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 4, 4)), np.zeros(0, np.int64))


class SceneGeometry:
    """All bodies of one world, ready to cast rays at any time inside their tracks.

    Bodies are ordered by ``(entity_id, element)`` so body indices do not
    depend on the caller's order. ``separate`` names entities cast on their
    own even when static (e.g. a parked ego), so a sensor can ignore its
    carrier body.
    """

    def __init__(self, bodies: Iterable[Body], *, separate: Iterable[str] = ()) -> None:
        self.bodies: list[Body] = sorted(bodies, key=lambda b: (b.entity_id, b.element))
        keys = [(b.entity_id, b.element) for b in self.bodies]
        if len(set(keys)) != len(keys):
            raise ValueError("two bodies share an (entity_id, element)")
        separate = set(separate)
        self.entity_ids_of_body: list[str] = [b.entity_id for b in self.bodies]
        # Each entity's bodies (ascending): :meth:`body_indices` without a pass over every body (every cast asks
        # which bodies it ignores, and a street has thousands).
        self._bodies_of_entity: dict[str, list[int]] = {}
        for i, e in enumerate(self.entity_ids_of_body):
            self._bodies_of_entity.setdefault(e, []).append(i)
        self.compact_ids: dict[str, int] = compact_ids(self.entity_ids_of_body)
        self.compact_id_of_body = np.array([self.compact_ids[e] for e in self.entity_ids_of_body], np.uint32)
        self.semantic_of_body = np.array([b.semantic_class_id for b in self.bodies], np.uint16)
        self.albedo_of_body = np.array([b.albedo for b in self.bodies], np.float32).reshape(-1, 3)
        # The per-body tables with a last row for body −1 (nothing hit).
        self._compact_id_ext = np.append(self.compact_id_of_body, np.uint32(NOTHING_HIT))
        self._semantic_ext = np.append(self.semantic_of_body, np.uint16(0))
        self._albedo_ext = np.append(self.albedo_of_body, np.zeros((1, 3), np.float32), axis=0)  # misses: 0
        self._looks = {i: b.look for i, b in enumerate(self.bodies) if b.look is not None}
        self.reflectance_of_body = np.array([b.reflectance for b in self.bodies], np.float64)
        is_static = np.array([b.track.is_static and b.entity_id not in separate for b in self.bodies], bool)
        self._is_static = is_static
        self._is_static_ext = np.append(is_static, True)
        counts = np.array([len(b.faces) for b in self.bodies], np.int64)
        offset = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        # Index −1 (no hit) maps to offset T + 1, so its row T + 1 − 1 = T is the zero row of normal32.
        self._tri_offset_ext = np.append(offset, int(counts.sum()) + 1)
        self._body_tris = TriangleTable.build([b.mesh_vertices for b in self.bodies], [b.faces for b in self.bodies])
        world_vertices = [self._static_world_vertices(i) for i in range(len(self.bodies))]
        self._world_tris = TriangleTable.build(world_vertices, [b.faces for b in self.bodies])
        static_bodies = np.flatnonzero(is_static).astype(np.int32)
        # Embree numbers geometries 0, 1, … in the order they are added; −1 (no hit) maps to −1.
        self._body_of_static_geom_ext = np.append(static_bodies, np.int32(-1))
        self._static_scene = static_scene_of([self.bodies[i] for i in static_bodies],
                                              [world_vertices[i] for i in static_bodies])
        self._static_vertices = [world_vertices[i] for i in static_bodies]
        self._static_faces = [self.bodies[i].faces for i in static_bodies]
        self._static_boxes: tuple[NDArray[np.float64], ...] | None = None
        self._direction_grids: dict[bytes, tuple[object, ...]] = {}
        self.moving: list[int] = np.flatnonzero(~is_static).tolist()
        # Bodies whose track is never present (background reserves that do not enter in the clip): no swept bounds.
        self._never_present = {i: not np.any(self.bodies[i].track.present) for i in self.moving}
        self._moving_scene = {i: embree_scene_of([(self.bodies[i].mesh_vertices, self.bodies[i].faces)])
                              for i in self.moving}
        self._local_box = {i: (self.bodies[i].mesh_vertices.min(axis=0), self.bodies[i].mesh_vertices.max(axis=0))
                           for i in self.moving}
        # (centre, half extents, radius of the furthest corner from the body origin) of each local box.
        self._local_box_shape = {i: ((lo + hi) / 2, (hi - lo) / 2, float(np.linalg.norm(box_corners(lo, hi), axis=1).max()))
                                 for i, (lo, hi) in self._local_box.items()}
        # The moving bodies turning about z only (most): their tracks' tables side by side, so one cast's swept
        # bounds of all of them are two compiled passes (:meth:`_swept_boxes`). Row of each body in them.
        planar = [i for i in self.moving if self.bodies[i].track._planar and not self.bodies[i].track.is_constant]
        self._planar_row = {i: r for r, i in enumerate(planar)}
        tracks = [self.bodies[i].track for i in planar]
        self._planar_ts = np.concatenate([tr.t_s for tr in tracks] or [np.zeros(0)]).astype(np.float64)
        self._planar_ts_off = np.cumsum([0] + [len(tr.t_s) for tr in tracks]).astype(np.int64)
        self._planar_seg = np.ascontiguousarray(np.concatenate([tr._segments for tr in tracks] or [np.zeros((0, 35))]))
        self._planar_seg_off = np.cumsum([0] + [len(tr._segments) for tr in tracks]).astype(np.int64)
        self._planar_present = np.concatenate([tr.present for tr in tracks] or [np.zeros(0, bool)]).astype(np.bool_)
        self._planar_span = {i: (tr.t_start, tr.t_end) for i, tr in zip(planar, tracks)}

    def _static_world_vertices(self, i: int) -> NDArray[np.float64]:
        """World vertices of a static body (:func:`~simready.raycast.meshes.static_world_vertices`); NaN for moving
        ones: they have no single pose."""
        b = self.bodies[i]
        return static_world_vertices(b) if self._is_static[i] else np.full_like(b.mesh_vertices, np.nan)

    # --- lookups ------------------------------------------------------------

    @cached_property
    def names_of_body(self) -> dict[str, NDArray[np.object_]]:
        """Per body, its ``entity``, ``element`` and ``geometry_hash`` as object arrays of str: what a table naming
        bodies (a ray's, a radar contributor's) gathers by body index. Built on first use."""
        def column(values: list[str]) -> NDArray[np.object_]:
            out = np.empty(len(values), dtype=object)
            out[:] = values
            return out

        return {"entity": column(self.entity_ids_of_body), "element": column([b.element for b in self.bodies]),
                "geometry_hash": column([b.geometry_hash for b in self.bodies])}

    @cached_property
    def part_of_body(self) -> NDArray[np.int64]:
        """Each body's rank among its entity's bodies in scene order (0, 1, …). Built on first use."""
        out = np.empty(len(self.bodies), np.int64)
        for indices in self._bodies_of_entity.values():
            out[indices] = np.arange(len(indices))
        return out

    def body_indices(self, entity_ids: Iterable[str]) -> list[int]:
        found = [i for e in set(entity_ids) for i in self._bodies_of_entity.get(e, ())]
        return sorted(found)

    def is_static(self, body_index: int) -> bool:
        return bool(self._is_static[body_index])

    # --- swept bounds -------------------------------------------------------

    def swept_bounds(self, body_index: int, t0_s: float, t1_s: float) -> tuple[NDArray, NDArray] | None:
        """Conservative world AABB of a moving body over [t0, t1] (None if absent throughout).

        Poses are sampled at the track's ticks inside the window, both ends and
        at most ``SWEEP_SAMPLE_S`` apart; the box of the transformed local box
        corners is padded by the furthest any body point can move between two
        samples, ``(|v|max + |ω|max·r)·gap``, times ``SWEEP_PAD_FACTOR``.
        """
        track = self.bodies[body_index].track
        if self._never_present[body_index] and (track.is_constant or (
                t0_s >= track.t_start - TIME_EPS_S and t1_s <= track.t_end + TIME_EPS_S)):
            return None  # what sampling the window would say (a reserve that never enters), without sampling it
        n = max(2, math.ceil((t1_s - t0_s) / SWEEP_SAMPLE_S) + 1)
        knots = track.t_s[(track.t_s > t0_s) & (track.t_s < t1_s)]
        # Sorted, duplicates harmless: they only add zero gaps.
        ts = np.sort(np.concatenate([np.linspace(t0_s, t1_s, n), knots])) if len(knots) else np.linspace(t0_s, t1_s, n)
        smp = track.sample(ts)
        centre, half, radius = self._local_box_shape[body_index]
        # The world AABB of a rotated box is centre ± |R|·half (exact, no corner enumeration): one compiled pass
        # over the sampled poses (:func:`simready.raycast.kernels.swept_box`).
        lo, hi, seen = swept_box(smp.matrices(), smp.present, smp.velocity_mps, smp.angular_velocity_rps, ts,
                                 centre, half, radius, SWEEP_PAD_FACTOR, SWEEP_PAD_M)
        return (lo, hi) if seen else None

    def _swept_boxes(self, movers: list[int], t0_s: float, t1_s: float) -> dict[int, tuple[NDArray, NDArray] | None]:
        """:meth:`swept_bounds` of each of ``movers`` over [t0, t1], the same values: the planar tracks the window
        lies strictly inside sampled together (:func:`~simready.world.motion_kernels.planar_window_samples`, numpy's
        sine and cosine over all of them, :func:`~simready.world.motion_kernels.planar_poses`,
        :func:`~simready.raycast.kernels.swept_boxes`), the others one by one."""
        out: dict[int, tuple[NDArray, NDArray] | None] = {}
        batch = []
        for b in movers:
            span = self._planar_span.get(b)
            if span is None or not span[0] < t0_s <= t1_s < span[1]:
                out[b] = self.swept_bounds(b, t0_s, t1_s)
            elif self._never_present[b]:
                out[b] = None  # swept_bounds' shortcut (the window is inside the track)
            else:
                batch.append(b)
        if not batch:
            return out
        n = max(2, math.ceil((t1_s - t0_s) / SWEEP_SAMPLE_S) + 1)
        rows = np.array([self._planar_row[b] for b in batch], np.int64)
        off, t, pos, vel, ang, present, half, qz, qw = planar_window_samples(
            np.linspace(t0_s, t1_s, n), t0_s, t1_s, rows, self._planar_ts, self._planar_ts_off, self._planar_seg,
            self._planar_seg_off, self._planar_present, TIME_EPS_S, _PHI, _Q0, _H)
        shapes = [self._local_box_shape[b] for b in batch]
        lo, hi, seen = swept_boxes(off, planar_poses(pos, np.sin(half), np.cos(half), qz, qw), present, vel, ang, t,
                                   np.array([c for c, _, _ in shapes], np.float64),
                                   np.array([h for _, h, _ in shapes], np.float64),
                                   np.array([r for _, _, r in shapes], np.float64), SWEEP_PAD_FACTOR, SWEEP_PAD_M)
        for j, b in enumerate(batch):
            out[b] = (lo[j], hi[j]) if seen[j] else None
        return out

    # --- casting ------------------------------------------------------------

    def _to_body(self, b: int, o: NDArray, d: NDArray, sel: NDArray[np.intp],
                 times: NDArray) -> tuple[NDArray, NDArray, NDArray[np.bool_], NDArray[np.float64], NDArray[np.int64]]:
        """Rays ``sel`` of (N, 3) ``o``, ``d`` at ``times`` (one per selected ray) in body b's frame (float64),
        whether b is present then, and b's world-from-body poses (U, 4, 4) at the distinct times with each
        ray's index into them (kept for the hits' normals and refinement)."""
        ut, inv = unique_inverse(times)
        track = self.bodies[b].track
        span = self._planar_span.get(b)
        if span is not None and len(ut) and span[0] < ut[0] and ut[-1] < span[1]:
            # PoseTrack.sample's compiled steps and TrackSample.matrices without their checks (the times lie
            # strictly inside the track, where its clip leaves them as they are): the same values.
            pos, _, _, present, half, qz, qw = planar_hermites(ut, track.t_s, track._segments, track.present,
                                                               TIME_EPS_S, _PHI, _Q0, _H)
            T = planar_poses(pos, np.sin(half), np.cos(half), qz, qw)
        else:
            smp = track.sample(ut)
            T, present = smp.matrices(), smp.present
        # Row-vector form of R^T·(x − p), one compiled pass (np.matmul's fused products).
        o_b, d_b = rays_to_body(sel, o, d, False, T, inv)
        return o_b, d_b, present[inv], T, inv

    def _movers(self, ignore: Iterable[str]) -> list[int]:
        ignored = set(self.body_indices(ignore))
        if any(self._is_static[i] for i in ignored):
            raise ValueError("cannot ignore a body in the static scene; build the scene with separate=[...]")
        return [b for b in self.moving if b not in ignored]

    def _mover_rays(self, b: int, o: NDArray[np.float32], d: NDArray[np.float32], times: NDArray | RayGroups,
                    t_limit: NDArray[np.float32], prefilter: RayPrefilter | None, box: tuple[NDArray, NDArray] | None
                    ) -> tuple[NDArray[np.intp], NDArray, NDArray, NDArray, NDArray]:
        """Rays that can meet moving body b (its swept bounds ``box`` over the rays' time window, prefilter, slab
        test, presence), in its frame, with b's world-from-body poses at their distinct times and each one's index into
        them; ``times`` per ray or per group of rays."""
        if box is None:
            return _NO_RAYS
        idx = prefilter(*box) if prefilter is not None else None
        if idx is not None and len(idx) == 0:
            return _NO_RAYS
        # The slab test over the candidates where they lie (one compiled pass, no gathered copies).
        every = idx is None
        idx = slab_select(o, d, _ALL if every else np.asarray(idx, np.int64), every, np.asarray(box[0], np.float64),
                          np.asarray(box[1], np.float64), t_limit)
        if len(idx) == 0:
            return _NO_RAYS
        o_b, d_b, present, T, pose = self._to_body(b, o, d, idx,
                                                   times.times_of(idx) if isinstance(times, RayGroups) else times[idx])
        if present.all():
            return idx, o_b, d_b, T, pose
        return idx[present], o_b[present], d_b[present], T, pose[present]

    def albedo_at(self, hits: Hits) -> NDArray[np.float32]:
        """(N, 3) float32 linear albedo where each ray hit (0 for misses): the body's ``albedo``, or its
        ``look`` sampled at the hit's triangle and barycentrics."""
        out = hits.__dict__.pop("_base_albedo", None)  # filled by Hits.fill_tables (handed out once: callers write)
        if out is None:
            out = np.take(self._albedo_ext, hits.body_index, axis=0)
        for b, look in self._looks.items():
            rays = np.flatnonzero(hits.body_index == b)
            if len(rays):
                out[rays] = look.sample(hits.triangle_index[rays], hits.take(rays).barycentric_uv)
        return out

    def cast(self, origins: ArrayLike, dirs: ArrayLike, times: ArrayLike, max_range_m: float | ArrayLike,
             min_range_m: float | ArrayLike = 0.0, *, exact: bool = False, ignore: Iterable[str] = (),
             prefilter: RayPrefilter | None = None, normalized: bool = False, incidence: bool = False,
             starts: NDArray[np.float32] | None = None, window: tuple[float, float] | None = None,
             group_size: int = 0) -> Hits:
        """Nearest hit of each ray against the world at that ray's time.

        Args:
            origins: (N, 3) world ray origins, metres.
            dirs: (N, 3) world directions; normalized here unless ``normalized``.
            times: (N,) or scalar ray times, seconds (inside every moving track).
            max_range_m, min_range_m: segment along each ray, metres (scalar or (N,)).
            exact: refine every hit in float64 now (see :meth:`Hits.refine`).
            ignore: entity ids not to hit (must be cast on their own: moving
                or ``separate``), e.g. the sensor's carrier.
            prefilter: optional sensor-specific superset of the rays that can
                meet a world box (a camera projects it, a LiDAR takes its
                azimuth range); the exact slab test still follows.
            incidence: also fill ``Hits.cos_incidence`` (cheap here: Embree
                returns the normal anyway; a LiDAR's intensity needs it).
            starts: (N, 3) float32 segment starts ``o + min_range·d`` exactly as
                this method would compute them (float32 product, then sum), from a
                sensor that generates them with its rays in one compiled pass
                (:func:`simready.raycast.kernels.sensor_rays`); None: computed here.
            window: the least and the greatest of ``times`` when the caller knows them without a pass over
                every ray (a sensor's rows or columns); None: computed here.
            group_size: K > 0: the rays come in groups of K consecutive rays from one origin at one time (a
                LiDAR's columns), ``origins`` (G, 3) and ``times`` (G,) give one per group, and ``dirs`` are
                (G·K, 3) float32 unit directions (``normalized``). The hits keep the groups
                (:class:`~simready.raycast.rays.RayGroups`) and expand origins and times only when read; they
                keep Embree's float32 distances too and derive ``hit`` and ``distance_m`` from them when read.
        """
        groups: RayGroups | None = None
        times_in: NDArray | RayGroups
        if group_size:
            groups = RayGroups(group_size, rows_f32(origins), np.ascontiguousarray(times, np.float64).reshape(-1))
            d32 = np.asarray(dirs)
            if not normalized or d32.dtype != np.float32 or d32.shape != (len(groups), 3):
                raise ValueError(f"cast: grouped rays need ({len(groups)}, 3) float32 unit directions")
            o32, d32, t, times_in, n, o64, d64 = None, rows_f32(d32), None, groups, len(groups), None, None
        else:
            rays = RayBatch.of(origins, dirs, times, normalized)
            o32, d32, t, n, o64, d64 = rays.o32, rays.d32, rays.t, len(rays.t), rays.o64, rays.d64
            times_in = t
        r_min = np.asarray(min_range_m, np.float32)
        r_max = np.asarray(max_range_m, np.float32)
        if starts is None:
            o_start = segment_starts(groups.ray_origins() if groups is not None else o32, d32, r_min)
        else:
            o_start = starts
        # The segment lengths, then Embree's nearest hits in place: a work array (read below, not kept), or for
        # grouped rays kept by the hits, which derive their distances and hit flags from it when read.
        t_best = np.empty(n, np.float32) if groups is not None else work_array("cast.t_best", n, np.float32)
        np.subtract(r_max, r_min, out=t_best)  # no temporary (broadcast when either is one value)
        r_min_1 = r_min.reshape(-1)
        fn, k = intersect_query()
        handle = scene_handle(self._static_scene) if fn else 0
        if handle:
            # Embree's query in packets of k consecutive rays (a camera row's neighbouring pixels), the hits turned
            # as static_hits turns them in the same pass (cast_static_rows); t_best becomes the nearest static hit.
            body, prim = np.empty(n, np.int32), np.empty(n, np.int32)
            u, v = np.empty(n, np.float32), np.empty(n, np.float32)
            cos_all = np.empty(n if incidence else 0, np.float32)
            hit = np.empty(n if groups is None else 0, np.bool_)
            dist = np.empty(n if groups is None else 0, np.float64)
            valid, f, w = ray_packet(k)
            cast_static_rows(fn, handle, valid, f, w, o_start, d32, t_best, self._body_of_static_geom_ext,
                             incidence, r_min_1, groups is None, body, prim, u, v, cos_all, hit, dist)
        else:
            res = self._static_scene.run(o_start, d32, dists=t_best, output=1)
            body = res["geomID"]  # reused in place (no new array): geometry ids become body indices
            # One pass: the body of each geometry id, with ``incidence`` the cosines (abs_cos's operations), and
            # hit_distances' hit and t + r_min (+inf where nothing was hit, the cosine NaN there).
            cos_all, hit, dist = static_hits(body, self._body_of_static_geom_ext, res["Ng"], d32, incidence,
                                             res["tfar"], r_min_1, groups is None)
            prim, u, v = res["primID"], res["u"], res["v"]
            t_best = res["tfar"]  # the same buffer, now the nearest static hit; movers must beat it
        cos = cos_all if incidence else None
        rotations = self._cast_movers(ignore, o_start, d32, times_in, prefilter, window, body, prim, u, v, t_best,
                                      cos, hit, dist, r_min_1)
        lazy = groups is not None
        hits = Hits(None if lazy else hit, None if lazy else dist, body, prim, t, self, o32, d32, u, v, False, o64,
                    d64, _groups=groups, _tfar=t_best if lazy else None, _r_min=r_min_1 if lazy else None)
        hits._rotations = rotations
        if cos is not None:
            hits.cos_incidence = cos
        return hits.refine() if exact else hits

    def _cast_movers(self, ignore: Iterable[str], o_start: NDArray[np.float32], d32: NDArray[np.float32],
                     times: NDArray | RayGroups, prefilter: RayPrefilter | None, window: tuple[float, float] | None,
                     body: NDArray[np.int32], prim: NDArray[np.int32], u: NDArray[np.float32], v: NDArray[np.float32],
                     t_best: NDArray[np.float32], cos: NDArray[np.float32] | None, hit: NDArray[np.bool_],
                     dist: NDArray[np.float64], r_min_1: NDArray[np.float32]
                     ) -> dict[int, tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.int64]]]:
        """After the static cast: each moving body cast with the rays that can reach it, no further than the nearest
        hit so far (``t_best``), and the closer hits written over the static ones (in place); returns per body the
        rays that met it, its poses and each ray's pose index (the hits' rotations)."""
        rotations: dict[int, tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.int64]]] = {}
        for b, idx, o_b, d_b, T, pose in self._mover_batches(ignore, o_start, d32, times, t_best, prefilter, window):
            r = self._moving_scene[b].run(o_b, d_b, dists=t_best[idx], output=1)
            # The rays that met b (closer than the nearest hit so far) take its hit, hit_distances' float64
            # t + r_min and the cosine of the body-frame normal and direction (the same angle): one pass.
            sel, closer = mover_hits(np.asarray(idx, np.int64), r["primID"], r["u"], r["v"], r["tfar"], r["Ng"], d_b, b,
                                     body, prim, u, v, t_best, _NO_COS if cos is None else cos, hit, dist, r_min_1)
            rotations[b] = (sel, T, pose[closer])
        return rotations

    def cast_spinning(self, angles: tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64],
                                          NDArray[np.float64]], T_cols: NDArray[np.float64],
                      times: NDArray[np.float64], max_range_m: float, min_range_m: float, *,
                      ignore: Iterable[str] = (), prefilter: RayPrefilter | None = None, incidence: bool = False,
                      window: tuple[float, float] | None = None) -> Hits:
        """:meth:`cast` of a spinning sensor's beams (a LiDAR's): G columns posed by ``T_cols`` (G, 4, 4) at
        ``times`` (G,), K beams each along the angle tables ``angles`` = (cos el, sin el (K,), cos az, sin az (G,));
        the rays :func:`~simready.raycast.kernels.spin_rays_into` makes, cast as ``cast(..., group_size=K,
        normalized=True)`` casts them, the same hits.

        The static scene is cast in the same compiled pass that makes the rays, through Embree's own query
        (:func:`~simready.raycast.kernels.spin_cast_static`; :mod:`~simready.raycast.embree_direct`): no ray
        buffers for embreex to read, none of its result arrays, no pass of :func:`static_hits` after. Where that
        query is not at hand (:func:`~simready.raycast.embree_direct.intersect_query` (0, 0)), the rays are made,
        then cast by :meth:`cast`."""
        cos_el, sin_el, cos_az, sin_az = angles
        g_n, k_n = len(cos_az), len(cos_el)
        n = g_n * k_n
        r_min = np.float32(min_range_m)
        fn, k = intersect_query()
        handle = scene_handle(self._static_scene) if fn else 0
        dirs = np.empty((n, 3), np.float32)  # kept by the hits
        starts = work_array("cast.spin_starts", (n, 3), np.float32)
        if not handle:
            spin_rays_into(cos_el, sin_el, cos_az, sin_az, T_cols, np.full(1, r_min), dirs, starts)
            return self.cast(T_cols[:, :3, 3].astype(np.float32), dirs, times, max_range_m, min_range_m,
                             ignore=ignore, normalized=True, prefilter=prefilter, incidence=incidence,
                             starts=starts if r_min else None, window=window, group_size=k_n)
        groups = RayGroups(k_n, rows_f32(T_cols[:, :3, 3].astype(np.float32)),
                           np.ascontiguousarray(times, np.float64).reshape(-1))
        r_min_1 = np.full(1, r_min)
        t_limit = np.subtract(np.float32(max_range_m), r_min)  # cast's segment length, in float32
        body, prim = np.empty(n, np.int32), np.empty(n, np.int32)
        u, v, t_best = np.empty(n, np.float32), np.empty(n, np.float32), np.empty(n, np.float32)
        cos = np.empty(n if incidence else 0, np.float32)
        valid, f, w = ray_packet(k)
        spin_cast_static(fn, handle, valid, f, w, cos_el, sin_el, cos_az, sin_az, T_cols, r_min, t_limit,
                         self._body_of_static_geom_ext, incidence, dirs, starts, body, prim, u, v, t_best, cos)
        rotations = self._cast_movers(ignore, starts, dirs, groups, prefilter, window, body, prim, u, v, t_best,
                                      cos if incidence else None, _NO_HIT, _NO_DIST, r_min_1)
        hits = Hits(None, None, body, prim, None, self, None, dirs, u, v, False, None, None, _groups=groups,
                    _tfar=t_best, _r_min=r_min_1)
        hits._rotations = rotations
        if incidence:
            hits.cos_incidence = cos
        return hits

    def occluded(self, origins: ArrayLike, dirs: ArrayLike, times: ArrayLike, max_range_m: float,
                 *, ignore: Iterable[str] = (), prefilter: RayPrefilter | None = None,
                 normalized: bool = False, window: tuple[float, float] | None = None,
                 cull: bool = True) -> NDArray[np.bool_]:
        """Whether anything lies on each segment [0, max_range] (shadow rays): any hit, not the nearest;
        ``window`` as for :meth:`cast`.

        Float32 ``dirs`` that are one direction broadcast to every ray (``np.broadcast_to``, a sun) are
        never copied: Embree reads the one row for every ray, the moving bodies a view of it; and with ``cull``
        only the rays that can meet a static body's box go to Embree's static scene
        (:meth:`_occluded_static_along`: the same answers)."""
        d_in = np.asarray(dirs)
        if (d_in.ndim == 2 and len(d_in) > 1 and d_in.strides[0] == 0 and d_in.dtype == np.float32
                and np.asarray(origins).dtype == np.float32):
            o32 = rows_f32(origins)
            d_one = np.ascontiguousarray(d_in[:1])
            if not normalized:  # RayBatch's normalization of that one row
                d_one = d_one / np.sqrt(np.einsum("ij,ij->i", d_one, d_one))[:, None]
            d_all = np.broadcast_to(d_one, o32.shape)
            t = np.broadcast_to(np.asarray(times, np.float64), (len(o32),))
        else:
            rays = RayBatch.of(origins, dirs, times, normalized)
            o32, d_one, d_all, t = rays.o32, rays.d32, rays.d32, rays.t
        n = len(t)
        # Each ray's limit: the range (Embree's occlusion query reads it, never writes it), then −1 where a ray is
        # already blocked, so no moving body is tested against it. A work array (not kept).
        limit = work_array("occluded.limit", n, np.float32)
        limit.fill(max_range_m)
        if len(d_one) == 1 and cull:
            blocked = self._occluded_static_along(o32, d_one, limit, max_range_m)
        else:
            blocked = self._static_scene.run(o32, d_one, dists=limit, query="OCCLUDED") != -1
        np.putmask(limit, blocked, np.float32(-1.0))
        for b, idx, o_b, d_b, _, _ in self._mover_batches(ignore, o32, d_all, t, limit, prefilter, window):
            r = self._moving_scene[b].run(o_b, d_b, dists=np.full(len(idx), max_range_m, np.float32), query="OCCLUDED")
            newly = idx[r != -1]
            blocked[newly] = True
            limit[newly] = -1.0
        return blocked

    def _occluded_static_along(self, o32: NDArray[np.float32], d_one: NDArray[np.float32],
                               limit: NDArray[np.float32], max_range_m: float) -> NDArray[np.bool_]:
        """Whether the static scene blocks each segment from ``o32`` along the one direction ``d_one`` (1, 3) within
        ``limit``: Embree's occlusion query of the rays whose segment meets a static body's (widened) box, the others
        unblocked without it (a lit ground's shadow rays mostly meet no box but their own ground's, which they
        leave), and blocked without it those that pass from outside through the inside of a body that is exactly a
        closed box surface (a building's shadow). The boxes' grid along the direction (:func:`~simready.raycast.kernels.direction_grid`) is built
        once per direction; the slab tests in one compiled pass that also gathers the kept rays
        (:func:`~simready.raycast.kernels.direction_candidates`)."""
        s = d_one[0].astype(np.float64)
        key = d_one[0].tobytes()
        grid = self._direction_grids.get(key)
        if grid is None:
            lo, hi, _, _, _ = self._static_boxes_padded()
            e1 = np.cross(s, (0.0, 0.0, 1.0)) if abs(s[2]) < 0.9 else np.cross(s, (1.0, 0.0, 0.0))
            e1 /= np.linalg.norm(e1)
            e2 = np.cross(s, e1)
            e2 /= np.linalg.norm(e2)
            grid = (e1, e2, *direction_grid(lo, hi, e1, e2, DIRECTION_GRID_CELLS))
            if len(self._direction_grids) >= 4:
                self._direction_grids.clear()
            self._direction_grids[key] = grid
        e1, e2, u0, w0, inv, cell_start, boxes = grid
        lo, hi, solid, lo_in, hi_in = self._static_boxes_padded()
        n = len(o32)
        idx = work_array("occluded.idx", n, np.int64)
        o_kept = work_array("occluded.o_kept", (n, 3), np.float32)
        blocked = np.zeros(n, bool)
        t_max = float(max_range_m)
        m = direction_candidates(o32, s, t_max * (1.0 + CULL_PAD_REL) + CULL_PAD_M, e1, e2, u0, w0, inv,
                                 DIRECTION_GRID_CELLS, cell_start, boxes, lo, hi, CULL_PAD_REL, solid, lo_in, hi_in,
                                 t_max * (1.0 - CULL_PAD_REL) - CULL_PAD_M, blocked, idx, o_kept)
        if m:
            kept = idx[:m]
            blocked[kept] = self._static_scene.run(o_kept[:m], d_one, dists=limit[kept], query="OCCLUDED") != -1
        return blocked

    def _static_boxes_padded(self) -> tuple[NDArray[np.float64], ...]:
        """The static scene's bodies' boxes as Embree holds them (float32 vertices): (B, 3) lows and highs widened by
        ``CULL_PAD_M`` plus ``CULL_PAD_REL`` times the box's largest coordinate, whether each body is exactly its
        box's closed surface (:func:`~simready.raycast.kernels.static_box_shapes`, one pass over all of them), and the
        boxes narrowed by that widening and ``CULL_INSIDE_M``; computed once."""
        if self._static_boxes is None:
            verts, faces = self._static_vertices, self._static_faces
            lo, hi, solid = static_box_shapes(
                np.concatenate(verts or [np.zeros((0, 3))]).astype(np.float64),
                np.cumsum([0] + [len(v) for v in verts]).astype(np.int64),
                np.concatenate(faces or [np.zeros((0, 3), np.int64)]).astype(np.int64),
                np.cumsum([0] + [len(f) for f in faces]).astype(np.int64))
            pad = CULL_PAD_M + CULL_PAD_REL * np.maximum(np.abs(lo), np.abs(hi)).max(axis=1, initial=0.0)[:, None]
            self._static_boxes = (lo - pad, hi + pad, solid.astype(np.bool_), lo + pad + CULL_INSIDE_M,
                                  hi - pad - CULL_INSIDE_M)
        return self._static_boxes

    def _mover_batches(self, ignore: Iterable[str], o: NDArray[np.float32], d: NDArray[np.float32],
                       t: NDArray | RayGroups, limit: NDArray[np.float32], prefilter: RayPrefilter | None,
                       window: tuple[float, float] | None = None
                       ) -> Iterator[tuple[int, NDArray[np.intp], NDArray[np.float32], NDArray[np.float32], NDArray,
                                           NDArray]]:
        """Per moving body: the rays that can reach it, those rays in its frame (float32, for Embree), and
        its world-from-body poses at the rays' distinct times with each ray's index into them; ``window``: the
        times' least and greatest (None: computed here).

        ``limit`` is read as each body comes up, so a caller that lowers it
        in between (nearest hit so far) prunes the later bodies' rays.
        """
        movers = self._movers(ignore)
        if not movers or len(t) == 0:
            return
        if window is None:
            t_all = t.times if isinstance(t, RayGroups) else t
            window = (float(t_all.min()), float(t_all.max()))
        boxes = self._swept_boxes(movers, *window)
        for b in movers:
            idx, o_b, d_b, T, pose = self._mover_rays(b, o, d, t, limit, prefilter, boxes[b])
            if len(idx):
                yield b, idx, o_b.astype(np.float32), d_b.astype(np.float32), T, pose

    def embree_scene_at(self, t_s: float, *, ignore: Iterable[str] = ()) -> embree_scene.EmbreeScene:
        """One Embree scene of every body (but ``ignore``) posed at ``t_s``: the world frozen at one
        time, a reference for tests and benchmarks, not for sensors."""
        skip = set(ignore)
        meshes = []
        for b in self.bodies:
            smp = b.track.sample([t_s], clamp=True)
            if b.entity_id in skip or not smp.present[0]:
                continue
            T = smp.matrices()[0]
            meshes.append((b.mesh_vertices @ T[:3, :3].T + T[:3, 3], b.faces))
        return embree_scene_of(meshes)