"""Stage 3 of the ladder: a coarse kinematic rollout that must show the intended event.

Every body follows its planned :class:`~simready.scenario.geometry.Motion`
(constant speed, or the piecewise-constant accelerations a program planned:
a pedestrian's start ramp, a lead vehicle's braking) with no reaction from
anyone — the ego does not brake; the brake / coast branches are the
simulation's, from a checkpoint. Sampled every :data:`ROLLOUT_DT_S` over
``[0, clip_s]``, the rollout rejects

* a vehicle leaving the vehicle surfaces, or a pedestrian leaving the
  walkable ones;
* any contact between bodies, except the event pair once the event has
  begun (that contact is the conflict the scenario is about, and is
  recorded as ``t_contact_s``);
* a missing event: each intent names an :class:`Event` that measures its
  key times and quantity from the samples (times between samples are
  interpolated linearly), or says why it did not happen.

Measurements go to ``proposal.measured``; the capture stage reads the
event's context window from ``capture.t_first_s`` / ``capture.t_last_s``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import shapely
from numpy.typing import NDArray

from simready.scenario.context import ProgramContext
from simready.scenario.geometry import CROSSING_SURFACES, VEHICLE_SURFACES, WALKABLE_SURFACES, CoarsePath, rects_overlap
from simready.scenario.ladder import PASS, Body, Fail, Proposal, Verdict
from simready.scenario.static_checks import rect_footprints

FloatArray = NDArray[np.float64]

#: Rollout sample interval (s). Event times are interpolated between samples; contacts between two
#: samples are caught because no planned body moves more than a footprint length in 0.1 s.
ROLLOUT_DT_S = 0.1


@dataclass(frozen=True)
class Samples:
    """Poses of every body at times ``t`` (T,): ``x``, ``y``, ``yaw``, ``v`` per actor id, each (T,)."""

    t: FloatArray
    x: dict[str, FloatArray]
    y: dict[str, FloatArray]
    yaw: dict[str, FloatArray]
    v: dict[str, FloatArray]


def sample(bodies: dict[str, Body], clip_s: float, dt_s: float = ROLLOUT_DT_S) -> Samples:
    t = np.arange(0.0, clip_s + dt_s / 2, dt_s)
    x, y, yaw, v = {}, {}, {}, {}
    for actor in sorted(bodies):
        x[actor], y[actor], yaw[actor], v[actor] = bodies[actor].motion.pose(t)
    return Samples(t, x, y, yaw, v)


def first_crossing(t: FloatArray, f: FloatArray) -> float | None:
    """First time where ``f`` goes from > 0 to <= 0, interpolated linearly; None if it never does."""
    below = f <= 0
    if not below.any():
        return None
    k = int(np.argmax(below))
    if k == 0:
        return float(t[0])
    f0, f1 = f[k - 1], f[k]
    return float(t[k - 1] + (t[k] - t[k - 1]) * f0 / (f0 - f1))


@dataclass(frozen=True)
class EventResult:
    """What an event measured: values for ``realized``, the event pair and start, and the capture window."""

    values: dict[str, object]
    pair: tuple[str, str]
    t_start_s: float
    t_first_s: float
    t_last_s: float


class Event(Protocol):
    def measure(self, proposal: Proposal, samples: Samples) -> EventResult | Fail: ...


@dataclass(frozen=True)
class PathConflict:
    """``entrant`` walks or drives into ``passer``'s path; measured at the moment it enters the passer's corridor.

    The corridor is the passer's path ± ``corridor_half_m`` (its half
    width plus the entrant's radius); the entrant's leading point is its
    centre moved ``lead_m`` forward. ``ttc_s`` is the passer's time for its
    front (``passer_clearance_m`` before the conflict point along its path)
    to reach the conflict point, at entry. ``t_conflict_s`` is when it does.
    ``reveal_key`` names a measurement that opens the capture window instead
    of the entry (the pedestrian's reveal); the time from it to the entry is
    ``occlusion.reveal_lead_s``.
    """

    entrant: str
    passer: str
    conflict_xy: tuple[float, float]
    s_passer_conflict_m: float
    corridor_half_m: float
    passer_clearance_m: float
    lead_m: float = 0.0
    reveal_key: str | None = None

    def measure(self, proposal: Proposal, samples: Samples) -> EventResult | Fail:
        passer = proposal.scene.bodies[self.passer]
        path: CoarsePath = passer.motion.path
        yaw = samples.yaw[self.entrant]
        lead = np.stack([samples.x[self.entrant] + self.lead_m * np.cos(yaw),
                         samples.y[self.entrant] + self.lead_m * np.sin(yaw)], axis=1)
        s_lat, t_lat = path.lateral(lead)
        # Only the stretch of the passer's path around the conflict point counts (not a far-away parallel leg).
        near = np.abs(s_lat - self.s_passer_conflict_m) <= self.corridor_half_m + 5.0
        f = np.where(near, np.abs(t_lat) - self.corridor_half_m, 1.0)
        t_enter = first_crossing(samples.t, f)
        if t_enter is None:
            return Fail("rollout.no_event", f"{self.entrant} never enters {self.passer}'s path within the clip "
                        f"({proposal.scene.clip_s} s)", ("ttc_target", "ego_speed"))
        s_p, v_p = passer.motion.profile.at(t_enter)
        remaining = self.s_passer_conflict_m - self.passer_clearance_m - float(s_p)
        if remaining <= 0:
            return Fail("rollout.passer_already_past", f"{self.passer} is {-remaining:.2f} m past the conflict point "
                        f"when {self.entrant} enters its path at t={t_enter:.2f} s", ("ttc_target", "ego_speed"))
        if float(v_p) <= 0:
            return Fail("rollout.passer_stopped", f"{self.passer} is at rest when {self.entrant} enters its path", ())
        t_conflict = passer.motion.time_at(self.s_passer_conflict_m - self.passer_clearance_m)
        if t_conflict > proposal.scene.clip_s:
            return Fail("rollout.conflict_after_clip", f"{self.passer} reaches the conflict point at "
                        f"t={t_conflict:.2f} s, after the clip ends ({proposal.scene.clip_s} s)", ("ttc_target",))
        values: dict[str, object] = {"ttc_s": round(remaining / float(v_p), 4), "t_enter_path_s": round(t_enter, 4),
                                     "t_conflict_s": round(t_conflict, 4),
                                     "conflict_point": [round(self.conflict_xy[0], 4), round(self.conflict_xy[1], 4)],
                                     "conflict_pair": [self.entrant, self.passer]}
        t_first = t_enter
        if self.reveal_key is not None and self.reveal_key in proposal.measured:
            t_reveal = float(proposal.measured[self.reveal_key])
            t_first = min(t_first, t_reveal)
            values["occlusion.reveal_lead_s"] = round(t_enter - t_reveal, 4)
        return EventResult(values, (self.entrant, self.passer), t_enter, t_first, t_conflict)


@dataclass(frozen=True)
class ClosesOnLead:
    """``leader`` brakes at ``t_brake_s`` ahead of ``follower`` on one path; the follower does not react.

    Measures the time headway at brake onset (bumper gap / follower speed)
    and the contact time; the contact must happen inside the clip.
    """

    follower: str
    leader: str
    t_brake_s: float

    def measure(self, proposal: Proposal, samples: Samples) -> EventResult | Fail:
        bodies = proposal.scene.bodies
        f, lead = bodies[self.follower], bodies[self.leader]
        clearance = (f.length_m + lead.length_m) / 2
        gap = lead.motion.s_at(samples.t) - f.motion.s_at(samples.t) - clearance
        s_f, v_f = f.motion.profile.at(self.t_brake_s)
        gap_at_brake = float(lead.motion.s_at(self.t_brake_s) - s_f - clearance)
        if gap_at_brake <= 0 or v_f <= 0:
            return Fail("rollout.no_gap", f"{self.leader} is not ahead of {self.follower} at brake onset "
                        f"(gap {gap_at_brake:.2f} m)", ("layout",))
        t_contact = first_crossing(samples.t, gap)
        if t_contact is None:
            return Fail("rollout.no_conflict", f"{self.follower} does not close on {self.leader} within the clip "
                        f"({proposal.scene.clip_s} s)", ("timing",))
        if t_contact < self.t_brake_s:
            return Fail("rollout.contact_before_brake", f"{self.follower} reaches {self.leader} at t={t_contact:.2f} s,"
                        f" before it brakes", ("layout",))
        values: dict[str, object]
        values = {"headway_s": round(gap_at_brake / float(v_f), 4), "t_brake_s": round(self.t_brake_s, 4),
                  "t_contact_nominal_s": round(t_contact, 4),
                  "required_decel_mps2": round(_required_decel(lead, f, self.t_brake_s, clearance), 4)}
        return EventResult(values, (self.follower, self.leader), self.t_brake_s, self.t_brake_s, t_contact)


def _required_decel(lead: Body, follower: Body, t_s: float, clearance_m: float) -> float:
    """Constant deceleration that stops the follower, from ``t_s``, behind where the leader stops (m/s²)."""
    s_l_stop = lead.motion.s_at(1e6)
    s_f, v_f = follower.motion.profile.at(t_s)
    room = float(s_l_stop - clearance_m - s_f)
    return math.inf if room <= 0 else float(v_f) ** 2 / (2 * room)


@dataclass(frozen=True)
class CutsIn:
    """``cutter`` changes into ``ego``'s lane between ``t_start_s`` and ``t_end_s``.

    Measures when the cutter's centre enters the ego lane (|offset| below
    the lane half-width) and the time gap, bumper to bumper over the ego
    speed, when the lane change completes; the cutter must be ahead.
    """

    cutter: str
    ego: str
    lane_half_width_m: float
    t_start_s: float
    t_end_s: float

    def measure(self, proposal: Proposal, samples: Samples) -> EventResult | Fail:
        bodies = proposal.scene.bodies
        ego, cutter = bodies[self.ego], bodies[self.cutter]
        path = ego.motion.path
        xy = np.stack([samples.x[self.cutter], samples.y[self.cutter]], axis=1)
        s_c, t_c = path.lateral(xy)
        t_in = first_crossing(samples.t, np.abs(t_c) - self.lane_half_width_m)
        if t_in is None or t_in > proposal.scene.clip_s:
            return Fail("rollout.no_event", f"{self.cutter} never enters {self.ego}'s lane within the clip", ("timing",))
        clearance = (ego.length_m + cutter.length_m) / 2
        x_end, y_end, _, _ = cutter.motion.pose(self.t_end_s)
        s_end, _ = path.lateral(np.array([[float(x_end), float(y_end)]]))
        s_e, v_e = ego.motion.profile.at(self.t_end_s)
        gap = float(s_end[0] - s_e) - clearance
        if gap <= 0:
            return Fail("rollout.cut_in_behind", f"{self.cutter} completes its lane change {gap:.2f} m from "
                        f"{self.ego}'s front bumper (not ahead)", ("timing",))
        values: dict[str, object]
        values = {"cut_in_gap_s": round(gap / float(v_e), 4), "t_cut_in_s": round(t_in, 4),
                  "t_lane_change_end_s": round(self.t_end_s, 4)}
        return EventResult(values, (self.ego, self.cutter), self.t_start_s, self.t_start_s, self.t_end_s)


class RolloutStage:
    """Stage 3: replay the plans coarsely; the event must happen, nothing else may collide or leave its surface."""

    name = "rollout"
    cost_rank = 30
    level = 3

    def __init__(self, ctx: ProgramContext) -> None:
        self.ctx = ctx

    def check(self, proposal: Proposal) -> Verdict:
        scene = proposal.scene
        samples = sample(scene.bodies, scene.clip_s)
        off = self._off_surface(scene.bodies, samples)
        if off is not None:
            return off
        red = self._red_light(proposal)
        if red is not None:
            return red
        event = scene.event
        result: EventResult | None = None
        if event is not None:
            measured = event.measure(proposal, samples)
            if isinstance(measured, Fail):
                return measured
            result = measured
        ids = sorted(scene.bodies)
        t_contact = None
        corners: dict[str, np.ndarray] = {}
        for n, a in enumerate(ids):
            for b in ids[n + 1:]:
                ba, bb = scene.bodies[a], scene.bodies[b]
                reach = (math.hypot(ba.length_m, ba.width_m) + math.hypot(bb.length_m, bb.width_m)) / 2
                near = np.hypot(samples.x[a] - samples.x[b], samples.y[a] - samples.y[b]) < reach
                if not near.any():
                    continue
                for k in (a, b):
                    if k not in corners:
                        corners[k] = rect_footprints({k: scene.bodies[k]}, samples.t)[k]
                hit = np.zeros(len(samples.t), dtype=bool)
                hit[near] = rects_overlap(corners[a][near], corners[b][near])
                if not hit.any():
                    continue
                i_hit = int(np.argmax(hit))
                t_hit = float(samples.t[i_hit])
                if result is not None and {a, b} == set(result.pair) and t_hit >= result.t_start_s:
                    t_contact = t_hit
                    continue
                return Fail("rollout.collision", f"{a} and {b} collide at t={t_hit:.2f} s", ("spawn", "layout"))
        if result is not None:
            proposal.measured.update(result.values)
            proposal.measured["capture.t_first_s"] = result.t_first_s
            proposal.measured["capture.t_last_s"] = result.t_last_s
        proposal.measured["t_contact_s"] = None if t_contact is None else round(t_contact, 4)
        return PASS

    def _red_light(self, proposal: Proposal) -> Fail | None:
        """Every listed stop line is crossed inside the clip on green (the actors obey signals)."""
        signals = {s.id: s for s in proposal.template.signals}
        for actor, s_stop, signal_id in proposal.scene.stop_lines:
            t_cross = proposal.scene.bodies[actor].motion.time_at(s_stop)
            if not math.isfinite(t_cross) or t_cross > proposal.scene.clip_s or t_cross < 0:
                continue
            state = signals[signal_id].state_at(t_cross)
            if state != "green":
                return Fail("rollout.signal", f"{actor} crosses the {signal_id} stop line at t={t_cross:.2f} s on "
                            f"{state}", ("timing", "layout"))
        return None

    def _off_surface(self, bodies: dict[str, Body], samples: Samples) -> Fail | None:
        geo = self.ctx.geometry
        for actor in sorted(bodies):
            body = bodies[actor]
            if body.role == "parked":
                continue
            x, y = samples.x[actor], samples.y[actor]
            if body.kind == "pedestrian":
                # A mid-block crossing (via points) may cross the carriageway; any other walk keeps to the footways.
                ok = shapely.contains_xy(geo.surface(CROSSING_SURFACES if body.via else WALKABLE_SURFACES), x, y)
                what = "footways and carriageway" if body.via else "walkable surface"
            else:
                c = rect_footprints({actor: body}, samples.t)[actor].reshape(-1, 2)
                ok = shapely.contains_xy(geo.surface(VEHICLE_SURFACES), c[:, 0], c[:, 1]).reshape(len(x), 4).all(axis=1)
                what = "road"
            if not ok.all():
                k = int(np.argmin(ok))
                return Fail("rollout.off_surface", f"{actor} leaves the {what} at t={samples.t[k]:.2f} s "
                            f"({x[k]:.2f}, {y[k]:.2f})", ("layout", "spawn"))
        return None
