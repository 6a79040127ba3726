"""Background pedestrians keeping apart: the gap to the nearest pedestrian ahead on a walker's own walk path, and each
walker's own offset from its route's line (its keep-right).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from simready.sim.core.scene import Scene

F = NDArray[np.float64]

#: A pedestrian stops behind another this far ahead of it on its walk path or nearer (m, centre to centre) ...
FOLLOW_LOOKAHEAD_M = 3.0
#: ... when their sides come within this of each other across its path (m).
FOLLOW_MARGIN_M = 0.25
#: The gap it keeps to the one ahead beyond the IDM's standstill gap (m).
FOLLOW_GAP_M = 0.2


def walker_gaps(view, walkers: tuple[int, ...], fixed: F) -> None:  # type: ignore[no-untyped-def]
    """Gaps (m) into ``fixed`` to the nearest pedestrian ahead on each background pedestrian's own walk path (within
    :data:`FOLLOW_LOOKAHEAD_M` along it, sides closer than :data:`FOLLOW_MARGIN_M` across it)."""
    a = view.scene.actors
    present = view.present
    mine = [i for i in walkers if present[i]]
    if not mine:
        return
    peds = np.flatnonzero(a.is_ped & present)
    if len(peds) < 2:
        return
    xy = view.xy
    idx = np.array(mine)
    dx = xy[peds, 0][None, :] - xy[idx, 0][:, None]
    dy = xy[peds, 1][None, :] - xy[idx, 1][:, None]
    dist2 = dx * dx + dy * dy
    close = dist2 < FOLLOW_LOOKAHEAD_M ** 2
    close &= peds[None, :] != idx[:, None]
    if not close.any():
        return
    rows, cols = np.nonzero(close)
    pi, pj = idx[rows], peds[cols]
    u_j, d_j = _project_pairs(view.table, view.u, pi, xy[pj])
    along = u_j - view.u[pi]
    hit = (along > 0.0) & (along < FOLLOW_LOOKAHEAD_M) & (np.abs(d_j - view.state.coords.d[pi]) < a.hw[pi] + a.hw[pj] + FOLLOW_MARGIN_M)
    ahead: dict[int, dict[int, float]] = {}
    for i, j, g in zip(pi[hit].tolist(), pj[hit].tolist(), along[hit].tolist()):
        ahead.setdefault(i, {})[j] = g
    home = home_d(view.scene)
    d_now = view.state.coords.d
    for i, found in ahead.items():
        best = math.inf
        for j, along in found.items():
            # Each has the other ahead (crossing or merging paths): the later id waits, the earlier walks on -- unless
            # either is off its own offset (drifting back after a turn at a dead end, head-on on the other's side of
            # the line): then both wait until it has drifted clear.
            if i < j and i in ahead.get(j, {}) and not (off_home(home, d_now, i) or off_home(home, d_now, j)):
                continue
            g = along - float(a.hl[i] + a.hl[j]) - FOLLOW_GAP_M
            if g < best:
                best = g
        if best < fixed[i]:
            fixed[i] = best


def off_home(home: dict[int, float], d: F, i: int) -> bool:
    return i in home and bool(d[i] != home[i])


#: Segments of a walk path searched around a pedestrian's own when projecting another onto it (:func:`_project_pairs`).
PROJECT_WINDOW = 16


def _project_pairs(table, u: F, i: NDArray[np.int64], xy: F) -> tuple[F, F]:  # type: ignore[no-untyped-def]
    """``(u, d)`` of each point ``xy[k]`` projected onto actor ``i[k]``'s path, among the segments from two before
    its own to :data:`PROJECT_WINDOW` after it (the closest; the last segment extends beyond the path's end).

    The first segment does not extend back beyond the path's start: a point behind the start is behind every walker
    on the path (u ≥ 0) anyway, and after a turn back at a dead end (:class:`Turner`) the path starts with a stub
    running the other way, whose extension would lie along the walk back and tie with it (a pedestrian ahead on the
    way back then projected behind the start, unseen)."""
    first = table.locate(u)[i] - table.base[i]
    last = table.nseg[i] - 1
    seg = np.clip(first[:, None] - 2 + np.arange(PROJECT_WINDOW + 2)[None, :], 0, last[:, None])
    flat = table.base[i][:, None] + seg
    p0, dr = table.pts[flat], table.dirs[flat]
    rel = xy[:, None, :] - p0
    along = rel[..., 0] * dr[..., 0] + rel[..., 1] * dr[..., 1]
    length = table.cum[flat + 1] - table.cum[flat]
    lo = 0.0
    hi = np.where(seg == last[:, None], np.inf, length)
    a = np.minimum(np.maximum(along, lo), hi)
    fx, fy = p0[..., 0] + dr[..., 0] * a, p0[..., 1] + dr[..., 1] * a
    dist2 = (xy[:, None, 0] - fx) ** 2 + (xy[:, None, 1] - fy) ** 2
    best = np.argmin(dist2, axis=1)
    r = np.arange(len(i))
    pick = flat[r, best]
    side = dr[r, best, 0] * (xy[:, 1] - fy[r, best]) - dr[r, best, 1] * (xy[:, 0] - fx[r, best])
    return table.cum[pick] + a[r, best], side


def home_d(scene: Scene) -> dict[int, float]:
    """Per background pedestrian, its own lateral offset from its route's line (−``walk.keep_right_m``)."""
    hit = _HOME.get(id(scene))
    if hit is None or hit[0] is not scene:
        a = scene.actors
        out = {}
        for actor in scene.manifest.actors:
            i = a.index[actor.id]
            if a.background[i] and a.is_ped[i]:
                out[i] = -float(actor.walk.keep_right_m) if actor.walk is not None else 0.0
        if len(_HOME) > 32:
            _HOME.clear()
        hit = _HOME[id(scene)] = (scene, out)
    return hit[1]


_HOME: dict[int, tuple[Scene, dict[int, float]]] = {}
