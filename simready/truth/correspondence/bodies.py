"""Body points in the world: which bodies of a scene never move, where a point fixed in its body is at given
times, and each moving body's pose at every row time of a frame (the tables the compiled row iteration and the
flow pass read).

A point on a body is ``T_world_body(t) · p_body``; a static body's pose is one constant matrix, so its points
are bitwise where they were at any time.
"""

from __future__ import annotations

import weakref

import numpy as np
from numpy.typing import NDArray

from simready.raycast.geometry import SceneGeometry
from simready.truth.correspondence.poses import apply_pose_rows, pose_rows
from simready.truth.correspondence.view import FrameView
from simready.world.motion import TrackSample


_STATIC: "weakref.WeakKeyDictionary[SceneGeometry, tuple[NDArray[np.bool_], NDArray[np.float64]]]" = \
    weakref.WeakKeyDictionary()


def _static_tables(scene: SceneGeometry) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
    """(B,) whether each body's track never moves, and (B, 12) its constant pose (rotation row-major,
    translation; NaN for moving bodies) — cached per scene."""
    if scene not in _STATIC:
        static = np.array([b.track.is_static for b in scene.bodies], bool)
        table = np.full((len(scene.bodies), 12), np.nan)
        tracks = {int(i): scene.bodies[i].track for i in np.flatnonzero(static)}
        # One-sample tracks (a street's thousands of static bodies) posed together: their samples stacked, each
        # row's matrix computed on its own (the bits of each track's pose_at; city_crossing's 5 472 statics
        # 121-149 -> 29 ms a truth folder).
        one = [i for i, track in tracks.items() if track.is_constant]
        if one:
            stacked = TrackSample(*(np.concatenate([getattr(tracks[i], name) for i in one])
                                    for name in ("position_m", "quat_xyzw", "velocity_mps", "angular_velocity_rps",
                                                 "present")))
            table[one] = pose_rows(stacked.matrices())
        for i, track in tracks.items():
            if not track.is_constant:
                table[i] = pose_rows(track.pose_at(track.t_start)[None])[0]
        _STATIC[scene] = (static, table)
    return _STATIC[scene]


def static_bodies(scene: SceneGeometry) -> NDArray[np.bool_]:
    """(B,) whether each body's track never moves (cached per scene)."""
    return _static_tables(scene)[0]


def static_world_points(scene: SceneGeometry, body: NDArray[np.intp],
                        p_body: NDArray[np.float64]) -> NDArray[np.float64]:
    """World positions of body points on static bodies (one constant pose each; time plays no part)."""
    return apply_pose_rows(np.take(_static_tables(scene)[1], body, axis=0), p_body)


def world_points_at(scene: SceneGeometry, body: NDArray[np.intp], p_body: NDArray[np.float64],
                    times_s: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """World positions (N, 3) of body points at their own times, and whether their body is present then."""
    out = np.empty((len(body), 3))
    present = np.ones(len(body), bool)
    static = static_bodies(scene)[body]
    out[static] = static_world_points(scene, body[static], p_body[static])
    moving = np.flatnonzero(~static)
    for b in np.unique(body[moving]):
        sel = moving[body[moving] == b]
        ut, inv = np.unique(times_s[sel], return_inverse=True)
        smp = scene.bodies[int(b)].track.sample(ut, clamp=True)
        out[sel] = apply_pose_rows(pose_rows(smp.matrices())[inv], p_body[sel])
        present[sel] = smp.present[inv]
    return out, present


def moving_pose_tables(scene: SceneGeometry, view: FrameView, body: NDArray[np.intp]
                       ) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.bool_]]:
    """The compiled row iteration's pose tables: (N,) each point's moving-body slot (−1 on static bodies),
    (S, H, 12) each moving body's pose (:func:`~.poses.pose_rows`) at every row time of the frame and (S, H) its presence."""
    slot_of_body, tables, present_tab = moving_pose_tables_of_bodies(scene, view, body)
    return slot_of_body[body], tables, present_tab


def moving_pose_tables_of_bodies(scene: SceneGeometry, view: FrameView, body: NDArray[np.intp],
                                 seen: NDArray[np.bool_] | None = None
                                 ) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.bool_]]:
    """:func:`moving_pose_tables` with the slots per body of the scene, (B,), not per point (a compiled pass
    reads ``slot_of_body[body[i]]`` itself). ``seen``: (B,) which bodies ``body`` holds, when the caller
    knows (:meth:`~.samples.Samples.bodies_seen`); else found here."""
    if seen is None:
        seen = np.zeros(len(scene.bodies), bool)
        seen[body] = True
    moving_bodies = np.flatnonzero(seen & ~static_bodies(scene))  # np.unique(body[~static]), without the sort
    slot_of_body = np.full(len(scene.bodies), -1, np.int64)
    slot_of_body[moving_bodies] = np.arange(len(moving_bodies))
    h = len(view.row_times_s)
    tables = np.zeros((len(moving_bodies), h, 12))
    present_tab = np.zeros((len(moving_bodies), h), bool)
    # Each moving body's pose at every row time of this frame, sampled once per frame (the frame is the target of
    # two correspondences, its re-casts and the track corners): kept with the view.
    cache: dict[int, tuple[NDArray[np.float64], NDArray[np.bool_]]] = \
        view.__dict__.setdefault("_row_poses", weakref.WeakKeyDictionary()).setdefault(scene, {})
    for s, b in enumerate(moving_bodies.tolist()):
        if b not in cache:
            smp = scene.bodies[b].track.sample(view.row_times_s, clamp=True)
            cache[b] = (pose_rows(smp.matrices()), smp.present)
        tables[s], present_tab[s] = cache[b]
    return slot_of_body, tables, present_tab
