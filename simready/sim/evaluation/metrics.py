"""Trace metrics (SPEC §7), computed once from the recorded clip, vectorized over ticks × actors.

All metrics are about the manifest's ``metric_subject`` (usually the ego)
against every other actor, over recorded ticks where both are present:

* ``min_ttc {value, t, pair}`` — smallest constant-velocity time until the
  two footprints overlap (:func:`simready.sim.core.geometry.swept_ttc`, horizon
  :data:`~simready.sim.core.constants.TTC_HORIZON_S`); value null when no pair
  ever closes within the horizon.
* ``min_distance [{actor, value, t}]`` — per other actor, the smallest
  separating-axis gap between footprints (m; 0 when touching).
* ``required_decel_max {value, t, actor}`` — largest deceleration the
  subject would need to stop short of a predicted overlap,
  ``v² / (2·v·TTC) = v / (2·TTC)`` (m/s²), over ticks with the subject moving.
* ``reveal_to_conflict {actor, t_reveal, t_conflict, value_s}`` — for an
  actor hidden from the subject at t = 0 (a pedestrian, cyclist or an actor
  tagged ``emerging``) that later becomes visible: the time from that
  reveal to the conflict (the first collision with the subject, else the
  time of that pair's minimum TTC); null if nothing is revealed.
* ``collisions [{tick, t, a, b, relative_speed_mps, point?, t_end, duration_s, delta_v_mps, ongoing?, t_settled}]``,
  from the ``collision`` events (SPEC §8; :func:`simready.sim.engine.close_collision`).
* ``trigger_never_fired [ids]`` — interactions that were skipped or still pending.
* ``ticks_simulated`` — ticks stepped, warm-up included.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simready.sim.core import constants as C
from simready.sim.core import geometry as geo
from simready.sim.core import planner_kernels
from simready.sim.core.sight import occluder_mask
from simready.sim.core.scene import Scene

F = np.ndarray
#: The fields of a ``collision`` event that the metrics keep.
COLLISION_FIELDS = ("tick", "t", "a", "b", "relative_speed_mps", "point", "t_end", "duration_s", "delta_v_mps", "ongoing", "t_settled")


def _yaw(quat: F) -> F:
    yaw: F = 2.0 * np.arctan2(quat[..., 2], quat[..., 3])
    return yaw


def visibility_series(scene: Scene, arrays: dict[str, F], observer: int, targets: list[int]) -> F:
    """(rows, len(targets)) booleans: target visible to ``observer`` at each recorded tick (SPEC sight-line rule)."""
    r = len(arrays["pos"])
    if r == 0 or not targets:
        return np.zeros((r, len(targets)), dtype=bool)
    return _Sight(scene, arrays, observer, targets).seen(0, r)


def first_seen(scene: Scene, arrays: dict[str, F], observer: int, targets: list[int], chunk: int = 64) -> list[int]:
    """Per target, the first row of :func:`visibility_series` that is True (−1: never).

    The same per-row test, evaluated in blocks of rows until every target has
    been seen once (the sight-line test of a row does not depend on the others).
    """
    r = len(arrays["pos"])
    first = [-1] * len(targets)
    if r == 0 or not targets:
        return first
    sight = _Sight(scene, arrays, observer, targets)
    lo = 0
    while lo < r and -1 in first:
        hi = min(r, lo + chunk)
        seen = sight.seen(lo, hi)
        for c in range(len(targets)):
            if first[c] < 0 and seen[:, c].any():
                first[c] = lo + int(np.argmax(seen[:, c]))
        lo = hi
        chunk *= 2
    return first


class _Sight:
    """The sight-line test of the recorded rows lo..hi: the rule the triggers and controllers apply each tick
    (:meth:`simready.sim.core.sight.TickView.visible`, compiled in :func:`.planner_kernels.sight_lines`), row by row."""

    def __init__(self, scene: Scene, arrays: dict[str, F], observer: int, targets: list[int]) -> None:
        self.scene, self.arrays = scene, arrays
        self.tgt = np.array(targets, dtype=np.int64)
        self.obs = np.full(len(targets), observer, dtype=np.int64)

    def seen(self, lo: int, hi: int) -> F:
        """(hi − lo, targets) visibility of rows lo..hi."""
        a = self.scene.actors
        pos, present = self.arrays["pos"][lo:hi], self.arrays["present"][lo:hi]
        yaw = _yaw(self.arrays["quat"][lo:hi])
        occluders = occluder_mask(self.scene)
        e0, e1 = self.scene.static_edges
        out = np.empty((hi - lo, len(self.tgt)), dtype=bool)
        planner_kernels.sight_rows(pos, yaw, a.hl, a.hw, present, occluders, e0, e1, self.obs, self.tgt,
                                   C.EYE_FORWARD_FRACTION, out)
        return out


def _r(x: float) -> float:
    return round(float(x), 9)


def compute(scene: Scene, arrays: dict[str, F], events: list[dict[str, Any]], status: dict[str, tuple[str, int]],
            ticks_simulated: int) -> dict[str, Any]:
    a = scene.actors
    subj = a.index[scene.manifest.metric_subject]
    others = [j for j in range(len(a)) if j != subj]
    pos, quat, vel, present = arrays["pos"], arrays["quat"], arrays["vel"], arrays["present"]
    r = len(pos)
    dt = scene.dt
    collisions = [{k: ev[k] for k in COLLISION_FIELDS if k in ev}
                  for ev in events if ev["type"] == "collision"]
    never = sorted(i for i, (st, _) in status.items() if st in ("pending", "skipped"))
    out: dict[str, Any] = {
        "min_ttc": {"value": None, "t": None, "pair": None},
        "min_distance": [],
        "required_decel_max": {"value": None, "t": None, "actor": None},
        "reveal_to_conflict": None,
        "collisions": collisions,
        "trigger_never_fired": never,
        "ticks_simulated": int(ticks_simulated),
    }
    if r == 0 or not others:
        return out
    o = np.array(others)
    yaw = _yaw(quat)
    both = present[:, o] & present[:, [subj]]
    ps, vs = pos[:, subj, None, :2], vel[:, subj, None, :2]
    # One set of separating-axis terms for the swept TTC and the separation of the same pairs.
    ttc, sep = geo.ttc_and_separation(np.broadcast_to(ps, (r, len(o), 2)), np.broadcast_to(vs, (r, len(o), 2)),
                                      yaw[:, [subj]], np.full((r, len(o)), a.hl[subj]), np.full((r, len(o)), a.hw[subj]),
                                      pos[:, o, :2], vel[:, o, :2], yaw[:, o], np.broadcast_to(a.hl[o], (r, len(o))),
                                      np.broadcast_to(a.hw[o], (r, len(o))), C.TTC_HORIZON_S)
    ttc = np.where(both, ttc, np.inf)
    if np.isfinite(ttc).any():
        k = int(np.argmin(ttc))
        row, col = divmod(k, len(o))
        out["min_ttc"] = {"value": _r(ttc[row, col]), "t": _r(row * dt), "pair": [a.ids[subj], a.ids[o[col]]]}
        v_s = np.hypot(vs[:, 0, 0], vs[:, 0, 1])[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            need = np.where(np.isfinite(ttc) & (ttc > 0) & (v_s > 0.5), v_s / (2.0 * ttc), 0.0)
        k = int(np.argmax(need))
        row, col = divmod(k, len(o))
        if need[row, col] > 0:
            out["required_decel_max"] = {"value": _r(need[row, col]), "t": _r(row * dt), "actor": a.ids[o[col]]}
    sep = np.where(both, np.maximum(sep, 0.0), np.inf)
    for c, j in enumerate(o):
        if np.isfinite(sep[:, c]).any():
            row = int(np.argmin(sep[:, c]))
            out["min_distance"].append({"actor": a.ids[j], "value": _r(sep[row, c]), "t": _r(row * dt)})
    out["reveal_to_conflict"] = _reveal(scene, arrays, subj, o, ttc, collisions)
    return out


def _reveal(scene: Scene, arrays: dict[str, F], subj: int, o: F, ttc: F, collisions: list[dict[str, Any]]) -> dict[str, Any] | None:
    a = scene.actors
    tags = {x.id: set(x.tags) for x in scene.manifest.actors}
    cands = [int(j) for j in o if a.kinds[j] in ("pedestrian", "cyclist") or "emerging" in tags[a.ids[j]]]
    if not cands:
        return None
    first = first_seen(scene, arrays, subj, cands)
    dt = scene.dt
    best: dict[str, Any] | None = None
    for c, j in enumerate(cands):
        if first[c] <= 0:
            continue
        t_reveal = first[c] * dt
        hit = [ev["t"] for ev in collisions if {ev["a"], ev["b"]} == {a.ids[subj], a.ids[j]}]
        col = int(np.flatnonzero(o == j)[0])
        if hit:
            t_conf = float(hit[0])
        elif np.isfinite(ttc[:, col]).any():
            t_conf = int(np.argmin(ttc[:, col])) * dt
        else:
            continue
        item = {"actor": a.ids[j], "t_reveal": _r(t_reveal), "t_conflict": _r(t_conf), "value_s": _r(t_conf - t_reveal)}
        if best is None or item["t_reveal"] < best["t_reveal"]:
            best = item
    return best


def stopping_distance(trace_ticks: Any, actor_id: str, t_from_s: float) -> float | None:
    """Distance (m) the actor travels from ``t_from_s`` until it first stands still; None if it never does.

    Standstill is the first tick below :data:`~simready.sim.core.constants.STANDSTILL_MPS`, followed on while
    the speed keeps falling (so a kinematic stop ends at exactly 0 and a dynamic one at its minimum).
    """
    df = trace_ticks
    rows = df[(df["actor_id"] == actor_id) & (df["t"] >= t_from_s - 1e-9)]
    speed = rows["speed_mps"].to_numpy()
    xy = rows[["x", "y"]].to_numpy()
    stop = np.flatnonzero(speed < C.STANDSTILL_MPS)
    if len(stop) == 0:
        return None
    k = int(stop[0])
    while k + 1 < len(speed) and speed[k + 1] < speed[k]:
        k += 1
    return float(np.sum(np.hypot(*np.diff(xy[: k + 1], axis=0).T))) if k > 0 else 0.0



