"""Which ticks need no trigger check: the first tick an ``at`` / ``after`` trigger or ``until`` can be due, and the
guard circles that bound a waiting ``when`` (the engine's compiled quiet ticks, :mod:`simready.sim.core.tick_kernels`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from simready.scenario.manifest import (
    AfterTrigger,
    AndCondition,
    AtTrigger,
    Circle,
    Interaction,
    LaneWindow,
    OrCondition,
    ReachesCondition,
    WhenTrigger,
)
from simready.sim.core.scene import Scene, at_tick
from simready.sim.core.state import SimState


_WAITING: list[Any] = [None]


def waiting(inters: Sequence[Interaction], status: dict[str, tuple[str, int]]) -> tuple[list[Any], list[Any]]:
    """The pending interactions and the fired ones with an ``until``, in canonical order (by id).

    A status dict is never edited once a state holds it (a change builds a
    new one), so the answer is kept for the last ``(interactions, status)``
    pair seen: most ticks change no status.
    """
    hit = _WAITING[0]
    if hit is not None and hit[0] is inters and hit[1] is status:
        return hit[2], hit[3]
    pending = [i for i in inters if status[i.id][0] == "pending"]
    fired = [i for i in inters if i.until is not None and status[i.id][0] == "fired"]
    _WAITING[0] = (inters, status, pending, fired)
    return pending, fired


#: ``(scene, status, fired, tick)``: with that status and fired-at dict, no trigger nor ``until`` is due before
#: ``tick`` (:func:`quiet_until_of`).
QUIET: list[Any] = [None]
NEVER = 1 << 62


def quiet_until_of(scene: Scene, inters: list[Any], status: dict[str, tuple[str, int]], fired: dict[str, int]) -> int:
    """The first tick at which one of ``inters``' triggers (the pending ones') or ``until``s (the fired ones') can
    be due while the status and the fired-at ticks stay these; −1 when one depends on more than the tick (a
    ``when`` condition, or an ``after`` whose reference was skipped or rejected: due now).

    Why: an ``at`` trigger is due from its tick on and an ``after`` from its reference's firing tick plus the
    delay (:func:`~.triggers.due`), so until the first of those ticks every tick's answer is "nothing", and the tick can
    skip asking (Python only at events).
    """
    first = NEVER
    for inter in inters:
        trig = inter.trigger if status[inter.id][0] == "pending" else inter.until
        due = _timed_due(scene, trig, status, fired)
        if due < 0:
            return -1
        if due < first:
            first = due
    return first


def _timed_due(scene: Scene, trig: Any, status: dict[str, tuple[str, int]], fired: dict[str, int]) -> int:
    """The tick from which an ``at`` or ``after`` trigger is due (:func:`~.triggers.due`) while the statuses and fired-at
    ticks stay these: :data:`NEVER` for an ``after`` still waiting for its reference (a change of status
    first), −1 for any other trigger or an ``after`` whose reference was skipped or rejected."""
    if isinstance(trig, AtTrigger):
        return at_tick(scene, trig)
    if isinstance(trig, AfterTrigger):
        if trig.id in fired:
            return fired[trig.id] + int(round(trig.delay_s / scene.dt))
        return -1 if status[trig.id][0] in ("skipped", "rejected") else NEVER
    return -1


def quiet_until(scene: Scene, state: SimState) -> int:
    """The first tick at which :func:`~.firing.update` may fire or release anything while ``state``'s statuses and fired-at
    ticks stay what they are (−1: any tick); :func:`~.firing.update` does nothing at an earlier tick."""
    status = state.interactions.status
    fired_at = state.interactions.fired
    quiet = QUIET[0]
    if quiet is not None and quiet[0] is scene and quiet[1] is status and quiet[2] is fired_at:
        return int(quiet[3])
    pending, fired_with_until = waiting(scene.manifest.interactions, status)
    until = quiet_until_of(scene, pending + fired_with_until, status, fired_at)
    QUIET[0] = (scene, status, fired_at, until)
    return until


#: Added to a guard circle's radius (m): a position inside the region is well inside the circle (float rounding).
GUARD_MARGIN_M = 0.5
Guard = tuple[int, float, float, float]


def quiet_guards(scene: Scene, state: SimState) -> tuple[int, tuple[Guard, ...]] | None:
    """Where :func:`quiet_until` gives up (a ``when`` trigger waits): the first tick at which :func:`~.firing.update` may
    act whatever the positions, and guards ``(actor, x, y, radius)`` such that before that tick it acts only at a
    tick where some guard's actor is present within its circle; None when a waiting trigger cannot be bounded so.

    A ``when`` trigger is bounded by its ``by_latest`` and, when its condition can only hold with an actor inside
    a region (``reaches``; an ``or`` of such, an ``and`` with one), by a circle around the region
    (:data:`GUARD_MARGIN_M` wider): outside every circle the condition is false. Why: a pedestrian released when
    the ego reaches a lane window would otherwise keep every tick in Python until then (the compiled quiet
    ticks, :mod:`simready.sim.core.tick_kernels`).
    """
    status = state.interactions.status
    fired = state.interactions.fired
    pending, fired_with_until = waiting(scene.manifest.interactions, status)
    first = NEVER
    guards: list[Guard] = []
    for inter in pending + fired_with_until:
        trig = inter.trigger if status[inter.id][0] == "pending" else inter.until
        if isinstance(trig, WhenTrigger):
            g = _condition_guards(scene, trig.condition)
            if g is None:
                return None
            guards.extend(g)
            due = first_tick_at(scene, trig.by_latest_s - 1e-9)
        else:
            due = _timed_due(scene, trig, status, fired)
            if due < 0:
                return None
        first = min(first, due)
    return first, tuple(guards)


def first_tick_at(scene: Scene, t_s: float) -> int:
    """The first tick whose scenario time ``(tick − warmup)·dt`` (as :attr:`TickView.t_s` computes it) is ≥ t_s."""
    w, dt = scene.warmup_ticks, scene.dt
    if not math.isfinite(t_s):
        return NEVER if t_s > 0 else w
    tick = max(w, w + int(math.ceil(t_s / dt)))
    while tick > w and (tick - 1 - w) * dt >= t_s:
        tick -= 1
    while (tick - w) * dt < t_s:
        tick += 1
    return tick


def _condition_guards(scene: Scene, cond: Any) -> list[Guard] | None:
    """Circles one of which holds its actor whenever ``cond`` is true (see :func:`quiet_guards`), or None."""
    if isinstance(cond, ReachesCondition):
        circle = region_circle(scene, cond.region)
        return None if circle is None else [(scene.actors.index[cond.actor], *circle)]
    if isinstance(cond, OrCondition):
        out: list[Guard] = []
        for c in cond.of:
            g = _condition_guards(scene, c)
            if g is None:
                return None
            out.extend(g)
        return out
    if isinstance(cond, AndCondition):
        for c in cond.of:
            g = _condition_guards(scene, c)
            if g is not None:
                return g
    return None


def region_circle(scene: Scene, region: Any) -> tuple[float, float, float] | None:
    """A circle ``(x, y, r)`` around every point :func:`~.conditions.evaluate` counts as in ``region``."""
    if isinstance(region, Circle):
        return float(region.x), float(region.y), float(region.r) + GUARD_MARGIN_M
    if isinstance(region, LaneWindow):
        # In the window: within half the lane's width of the lane's point at some s in [s_from, s_to) (the
        # projection's |t| is that distance), a point of the polyline piece between those arc lengths.
        geom = scene.template.lane_graph.lanes.get(region.lane)
        if geom is None or not (math.isfinite(region.s_from) and math.isfinite(region.s_to)):
            return None
        pts = [geom.point_at(region.s_from), geom.point_at(region.s_to)]
        pts += [(float(x), float(y)) for (x, y), c in zip(geom.points, geom.cum_s) if region.s_from < c < region.s_to]
        reach = geom.width_m / 2
    else:
        pts = [(float(p.x), float(p.y)) for p in region.points]
        reach = 0.0
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    cx, cy = 0.5 * (min(xs) + max(xs)), 0.5 * (min(ys) + max(ys))
    r = max(math.hypot(x - cx, y - cy) for x, y in pts)
    return cx, cy, r + reach + GUARD_MARGIN_M
