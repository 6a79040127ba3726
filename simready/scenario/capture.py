"""Stage 4 of the ladder: capture feasibility — the sensor schedule covers the event with context.

A sample is useful only if every sensor of the template's rig records some
context before the event opens (the reveal, the brake onset) and after it
closes (the conflict): ``[t_first - pre_context_s, t_last + post_context_s]``
must lie inside ``[0, clip_s]``, and each sensor's schedule (its own clock,
``phase + k / rate``, a sample counted only when its whole readout or sweep
fits in the clip — :func:`simready.world.rig_view.make_schedule`) must
put at least ``min_samples_per_window`` samples in each context window.
The event window comes from the rollout stage (``capture.t_first_s`` /
``capture.t_last_s`` in ``proposal.measured``).
"""

from __future__ import annotations

import numpy as np

from simready.scenario.context import ProgramContext
from simready.scenario.ladder import PASS, Fail, Proposal, Verdict
from simready.world.rig_view import SensorSchedule, make_schedule, sensor_clocks
from simready.world.template import WorldTemplate

#: Context the capture must hold on each side of the event (s).
PRE_CONTEXT_S = 1.0
POST_CONTEXT_S = 1.0
#: Samples every sensor needs inside each context window.
MIN_SAMPLES_PER_WINDOW = 2


_SCHEDULES: dict[tuple[int, float], tuple[WorldTemplate, tuple[SensorSchedule, ...]]] = {}


def rig_schedules(template: WorldTemplate, clip_s: float) -> tuple[SensorSchedule, ...]:
    """Schedules of every sensor in the template's rig over ``[0, clip_s]``, sorted by sensor name (cached)."""
    key = (id(template), float(clip_s))
    hit = _SCHEDULES.get(key)
    if hit is not None and hit[0] is template:
        return hit[1]
    # Only the rig's scenario view (the clocks) is read here: it is what the world hash covers.
    out = [make_schedule(c.name, c.rate_hz, c.phase_s, clip_s, c.duration_s) for c in sensor_clocks(template.sensor_rig)]
    _SCHEDULES[key] = (template, tuple(out))
    return _SCHEDULES[key][1]


class CaptureStage:
    """Every sensor samples the pre- and post-event context inside the clip."""

    name = "capture"
    cost_rank = 40
    level = 4

    def __init__(self, ctx: ProgramContext | None = None, *, pre_context_s: float = PRE_CONTEXT_S,
                 post_context_s: float = POST_CONTEXT_S, min_samples: int = MIN_SAMPLES_PER_WINDOW) -> None:
        self.pre_context_s = pre_context_s
        self.post_context_s = post_context_s
        self.min_samples = min_samples

    def check(self, proposal: Proposal) -> Verdict:
        m = proposal.measured
        if "capture.t_first_s" not in m:
            return PASS
        clip = proposal.scene.clip_s
        t_first, t_last = float(m["capture.t_first_s"]), float(m["capture.t_last_s"])
        start, end = t_first - self.pre_context_s, t_last + self.post_context_s
        if start < 0:
            return Fail("capture.no_pre_context", f"the event opens at t={t_first:.2f} s: less than "
                        f"{self.pre_context_s} s of context after the clip starts", ("ttc_target", "ego_speed", "timing"))
        if end > clip:
            return Fail("capture.no_post_context", f"the event closes at t={t_last:.2f} s: less than "
                        f"{self.post_context_s} s of context before the clip ends ({clip} s)",
                        ("ttc_target", "ego_speed", "timing"))
        for schedule in rig_schedules(proposal.template, clip):
            t = schedule.times_s
            for label, lo, hi in (("pre", start, t_first), ("post", t_last, end)):
                n = int(np.count_nonzero((t >= lo) & (t + schedule.duration_s <= hi)))
                if n < self.min_samples:
                    return Fail("capture.sparse_context", f"{schedule.sensor} has {n} samples in the {label}-event "
                                f"window [{lo:.2f}, {hi:.2f}] s (need {self.min_samples})", ())
        return PASS
