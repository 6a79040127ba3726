"""Versioned constants of the simulation engine (SPEC §8): every number that shapes a rollout.

Everything here is part of the provenance hashed into a trace header
(:func:`simready.sim.core.scene.config_hash`): changing a limit, a gain or a
controller version changes every trace's ``config_hash``, so Dagster sees
the trajectories as stale.

Units: metres, seconds, kilograms, radians; accelerations in m/s².
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from types import MappingProxyType
from typing import Any

ENGINE_VERSION = "1.0.0"
BACKENDS = ("kinematic-v1", "dynamic-v1")
DEFAULT_BACKEND = "dynamic-v1"

GRAVITY_MPS2 = 9.81
#: Below this speed an actor is at a standstill (m/s).
STANDSTILL_MPS = 0.05
#: A rollout faster than this has exploded (m/s); a manifest caps speeds at 100 m/s.
EXPLOSION_SPEED_MPS = 150.0
#: Poses this far outside the template's bounds are out of bounds (m).
OUT_OF_BOUNDS_MARGIN_M = 50.0
#: Horizon of the constant-velocity time-to-collision (s).
TTC_HORIZON_S = 10.0

CONTROLLER_VERSIONS = MappingProxyType(
    {
        "longitudinal": "idm-track-1",
        "actuation": "delay-throttle-brake-1",
        "lateral": "preview-pursuit-1",
        "pedestrian": "walk-kerb-1",
        # verbs-2: a lateral verb takes over the offset's current rate instead of restarting from rest.
        # verbs-3: a linear lateral shape rounds its corners (LATERAL_CORNER_ACCEL_MPS2) instead of stepping its rate.
        "interactions": "verbs-3",
        # Where a yielding vehicle waits at a junction conflict (simready.sim.behavior.junctions.waiting_point).
        "junction_wait": "footprint-outside-lane-1",
    }
)


@dataclass(frozen=True)
class ClassLimits:
    """Per-class longitudinal behaviour.

    ``accel_max``: largest drive acceleration; ``decel_comfort``: the IDM
    comfortable deceleration b; ``decel_max``: the hardest braking (further
    capped by μ·g); ``s0_m``: IDM jam gap; ``time_gap_s``: IDM safe time
    headway T at aggression 0 (aggression a ∈ [0, 1] gives T·(1 − 0.5 a) and
    b·(1 + a)); ``yaw_chord_m``: length of the chord whose direction is the
    body heading (the wheelbase of the kinematic bicycle; the rear point
    tracks the path, so the heading differs from the velocity direction by
    the body slip angle).
    """

    accel_max: float
    decel_comfort: float
    decel_max: float
    s0_m: float
    time_gap_s: float
    yaw_chord_m: float


CLASS_LIMITS = MappingProxyType(
    {
        "vehicle": ClassLimits(accel_max=2.5, decel_comfort=3.0, decel_max=8.0, s0_m=2.0, time_gap_s=1.5, yaw_chord_m=2.8),
        "cyclist": ClassLimits(accel_max=1.5, decel_comfort=2.0, decel_max=5.0, s0_m=1.0, time_gap_s=1.0, yaw_chord_m=1.1),
        "pedestrian": ClassLimits(accel_max=3.0, decel_comfort=2.0, decel_max=4.0, s0_m=0.3, time_gap_s=0.5, yaw_chord_m=0.3),
    }
)

#: Speed-tracking gain of the longitudinal controller (1/s): a = dv_ref/dt + K·(v_ref − v).
SPEED_TRACK_GAIN = 2.0
#: Gap-verb gains: a = K_GAP·(gap − gap_ref) + K_GAP_V·(v_target − v).
GAP_GAIN = 0.4
GAP_SPEED_GAIN = 1.0
#: Ego actuation: pure transport delay from desired acceleration to throttle/brake (s).
EGO_ACTUATION_DELAY_S = 0.2
#: Rolling resistance coefficient and aerodynamic drag area C_d·A (m²) of a vehicle.
ROLLING_RESISTANCE = 0.015
DRAG_AREA_M2 = 0.8
AIR_DENSITY_KG_M3 = 1.2
#: What a branch's ``brake`` action demands of the ego (m/s², before μ·g capping).
BRANCH_BRAKE_DECEL = 6.0

#: Perception update period: leaders, pedestrians in a vehicle's corridor and a pedestrian's
#: kerb hazard are re-detected this often; gaps to what was detected are tracked every tick (s).
PERCEPTION_PERIOD_S = 0.1
#: Lookahead for obstacles ahead, beyond the stopping distance (m).
OBSTACLE_LOOKAHEAD_M = 25.0
#: Lateral margin of a vehicle's corridor for obstacles (m, each side).
CORRIDOR_MARGIN_M = 0.5
#: A pedestrian's clearance radius as an obstacle (m).
PEDESTRIAN_RADIUS_M = 0.3
#: Observer eye: this fraction of the body half-length ahead of the centre.
EYE_FORWARD_FRACTION = 0.8

#: Pedestrian kerb behaviour: notice approaching vehicles this far before the kerb (m).
KERB_LOOKAHEAD_M = 2.0
#: A vehicle reaching the crossing within this many seconds is a hazard (s).
PED_GAP_ACCEPT_S = 4.0
#: A pedestrian walking over a change of ground height (a kerb) moves its height along a smoothstep
#: ramp this long on its walk route, centred on the change, with vz = v·dz/du (m; simready.sim.core.kinematics).
#: Twice the stopping gap before the kerb (0.2 m), so a pedestrian waiting there still stands on the kerb.
PED_STEP_RAMP_M = 0.4
#: A pedestrian waiting at the kerb resumes after the hazard has gone for its reaction delay.
#: Independent-disturbance repeats redraw a pedestrian's reaction delay as nominal·exp(σ·N(0,1)).
REACTION_DELAY_SIGMA = 0.3
REACTION_DELAY_MAX_S = 3.0
#: ... and the road friction as nominal·U(1 − r, 1 + r).
FRICTION_REDRAW_RANGE = 0.1

#: Lane-change gap acceptance: no actor in the target lane within [−rear, +front] of the bumpers (m).
LANE_CHANGE_GAP_REAR_M = 6.0
LANE_CHANGE_GAP_FRONT_M = 4.0
#: After a lane_offset is released the offset returns to 0 at this lateral rate (m/s).
LATERAL_RETURN_RATE_MPS = 0.5
#: A lateral transition that takes over a moving offset (a lane_offset fired mid lane change) sheds the
#: inherited offset rate with at most this lateral acceleration (m/s², see simready.sim.core.profiles.carry_s).
LATERAL_TAKEOVER_ACCEL_MPS2 = 2.0
#: A ``linear`` lateral transition (lane change, lane offset, the return after a release) rounds its two corners
#: with parabolic blends at this lateral acceleration (m/s², see simready.sim.core.profiles.corner_blend); with the
#: take-over's shedding the offset's acceleration stays within 4 m/s² unless a declared duration is too short.
LATERAL_CORNER_ACCEL_MPS2 = 2.0

#: A vehicle stopping for a signal halts this far before the stop line (m).
STOP_LINE_STANDOFF_M = 0.5
#: Vehicle signal handling: an amber light is run when stopping needs more than this deceleration.
AMBER_DECEL_LIMIT = 3.0
#: Junction yield: a yielding vehicle needs this time gap to the conflicting vehicle's arrival (s).
JUNCTION_GAP_S = 3.0


@dataclass(frozen=True)
class DynamicSettings:
    """PyBullet solver settings of ``dynamic-v1`` (hashed into the header)."""

    substep_s: float = 0.005
    solver_iterations: int = 10
    deterministic_overlapping_pairs: int = 1
    #: Cornering stiffness per axle, per unit of static axle load (rad⁻¹), i.e. C = k·F_z.
    cornering_stiffness_per_load: float = 10.0
    #: Slip angles use max(|v_x|, this) so a car at rest has a finite, damped lateral response (m/s).
    slip_min_speed_mps: float = 1.0
    #: How vehicles other than the ego are driven: "drive-1", the force and torque model of
    #: simready.sim.backends.dynamic.drive (hashed, so a change re-versions traces).
    agent_model: str = "drive-1"
    #: Steering limits of the ego: angle (rad) and rate (rad/s).
    max_steer_rad: float = 0.6
    max_steer_rate_rps: float = 1.2
    #: Preview distance of the path tracker: max(min, gain·v) metres.
    preview_min_m: float = 4.0
    preview_gain_s: float = 0.8
    #: How the ground is built: one floor slab at the height raster's floor, raised tiles as boxes
    #: (simready.sim.backends.dynamic, "static").
    ground_model: str = "floor-slab-1"


DYNAMIC_SETTINGS = DynamicSettings()


def constants_record() -> dict[str, Any]:
    """Every constant above as plain data, for the provenance hash."""
    names = [n for n in globals() if n.isupper() and n not in ("CLASS_LIMITS", "CONTROLLER_VERSIONS", "DYNAMIC_SETTINGS", "BACKENDS")]
    out: dict[str, Any] = {n: globals()[n] for n in sorted(names)}
    out["CLASS_LIMITS"] = {k: asdict(v) for k, v in sorted(CLASS_LIMITS.items())}
    out["CONTROLLER_VERSIONS"] = dict(sorted(CONTROLLER_VERSIONS.items()))
    return out
