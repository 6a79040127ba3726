"""The intent's named parameters: the thresholds the ladder applies and the ranges the program draws from."""

from __future__ import annotations

from dataclasses import dataclass


VAN_FAMILY = "delivery_van"


#: Sampling step along the pedestrian's path when locating the kerb and the corridor entry (m).
PATH_STEP_M = 0.02


#: Spawn candidates drawn at once in the strip's bounding box (the shadow may cover a small part of it).
SPAWN_TRIES = 256


@dataclass(frozen=True)
class PedestrianParams:
    """Named parameters of the intent (thresholds the ladder applies, ranges the program draws from)."""

    clip_s: float = 10.0
    warmup_s: float = 1.0
    #: Occlusion: visible fraction before emergence at most this …
    max_visible_before: float = 0.1
    #: … and after emergence at least this in ``min_frames_after`` camera frames.
    min_visible_after: float = 0.5
    min_frames_after: int = 6
    #: Frames of the pre-emergence window that must exist (the window is ``pre_window_s`` long).
    min_frames_before: int = 10
    pre_window_s: float = 1.0
    #: Largest gap from the van's front bumper to the crossing when the cell does not bin it (m).
    max_van_gap_m: float = 17.0
    #: Clearance kept between the van's footprint and the parking polygon's edges (m).
    van_margin_m: float = 0.03
    #: Slot length at a kerb site (m; a parking area's is its affordance's), and the gap the ego leaves when it
    #: passes a van parked at the kerb of its own lane (m).
    kerb_slot_m: float = 7.0
    pass_clearance_m: float = 0.3
    #: Spawn: within this of the crossing's first node, and this far at most from the kerb (m).
    spawn_reach_m: float = 6.0
    spawn_kerb_band_m: float = 1.3
    #: Spawn clearance inside the shadow (m): the whole body hides, with margin.
    full_inset_m: float = 0.15
    #: Walking speed range per pedestrian family (m/s); ``default_walk_speed_mps`` for others.
    walk_speed_mps: tuple[tuple[str, float, float], ...] = (("pedestrian_adult", 1.1, 1.7),
                                                            ("pedestrian_child", 0.9, 1.4))
    default_walk_speed_mps: tuple[float, float] = (1.0, 1.6)
    #: The pedestrian's start: a linear speed ramp this long (s), modelled exactly in the plan.
    walk_ramp_s: float = 0.5
    #: Ego speed and TTC ranges when the cell does not bin them (m/s, s).
    ego_speed_mps: tuple[float, float] = (4.0, 8.3)
    ttc_s: tuple[float, float] = (1.0, 4.0)
    #: TTC targets are drawn this far inside the cell, so the tick grid cannot push them out (s).
    ttc_inset_s: float = 0.05
    #: The walk trigger's by_latest is this long after the planned start (s); if_never fires it.
    trigger_slack_s: float = 1.0

    def walk_speed(self, family: str) -> tuple[float, float]:
        return next(((lo, hi) for f, lo, hi in self.walk_speed_mps if f == family), self.default_walk_speed_mps)
