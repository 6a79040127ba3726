"""Every constant of the counterfactual validity gate (SPEC §12), in one place and versioned.

Change any number here and bump :data:`POLICY_VERSION`: every
:class:`~simready.validity.gate.ValidityReport` records the version it was
scored under, and a suite that mixes versions is refused, because weights
scored under different policies are not comparable.

Units: metres, seconds, m/s, m/s².

Score curve (:func:`headroom_score`). The physical and temporal checks
measure a *utilisation* u = observed / limit (the worst over every actor and
tick). A score is 1 while u ≤ :data:`SCORE_KNEE`, falls linearly to 0.5 at
the limit (u = 1) and then as 0.5 / u beyond it, so ``passed`` (no value over
its limit) coincides with score ≥ 0.5, a sample well inside its limits
scores 1, and one far outside scores near 0. Non-finite u scores 0.

Distribution check: divergence beyond the reference's own noise (issue 19).
A sample's feature rows are ticks of one scenario: they are not independent
draws (an actor's speed over 1200 ticks is one curve; a vehicle's cruise
speed is one number drawn per scenario), so the sampling unit is the
*scenario*, and the asymptotic null PSI ≈ χ²_{B−1}·(1/n_ref + 1/n_cur) with
n the row counts (≈ 0.01 for 1 200 rows) is off by orders of magnitude: a
nominal scenario drawn from the very programs of the pool scores PSI ≈ 8.3 on
speed (its one cruise speed fills one of ten quantile bins). That noise comes
from the *sample* being one scenario and does not shrink however large the
pool grows. So the divergence is calibrated against its own null, at the
scenario level and without random numbers: every draw of the sample's own
intent in the pool (``IntentProfiles``: the draws it is exchangeable with) in
turn is held out and scored against the profile of the others (leave-one-draw-out);
the noise level a nominal scenario stays under is the smallest order
statistic x_(k) of those n values that bounds their :data:`NOISE_QUANTILE`
quantile from above with confidence P(Binomial(n, q) ≤ k − 1) ≥
:data:`NOISE_CONFIDENCE` (distribution-free; a pool too small for that uses
its largest value and states the lower confidence it has). The check scores
what lies *beyond* the level (PSI or JS minus the level, clipped at 0), with
:data:`PSI_ADDED_MAX` / :data:`JS_ADDED_MAX` as the bound on that excess, and
reports the level, the draws, the confidence and the p-value
(1 + #{null ≥ d}) / (n + 1). A branch scores its excess minus its base's
(what the transformation added beyond noise). A level near the largest PSI a
sample can reach (:data:`NOISE_SATURATED_SHARE`; all its rows in one bin, as
for a speed held all scenario long) means PSI cannot see a shift of that
feature at the scenario level; such a feature is scored by a scenario-level
statistic instead (gate-1.4.0). Each scenario — every reference draw of the
intent and the sample — is summarised by the feature's mean and standard
deviation over its rows (one number each per scenario, the sampling unit:
where the scenario sits, a cruise speed or a typical gap, and how much it
moves within itself, a brake or a lane change); the distance is the larger
of the two robust z, |s − median| / (1.4826·MAD) over the draws (scale
floored at :data:`SCENARIO_SCALE_FLOOR`), scale-free and insensitive to one
odd draw. Its null is the same distance of each draw against the others
(leave-one-draw-out), so the level, its confidence and the p-value come from
the same :data:`NOISE_QUANTILE` / :data:`NOISE_CONFIDENCE` order statistic,
and taking the larger z of the two summaries costs no extra false alarms
(the null is of the maximum). The excess beyond the level is scored against
:data:`SCENARIO_Z_ADDED_MAX` (a branch: minus its base's); the report also
gives the two-sided rank p-value of the sample's mean among the draws' means.
Unsaturated features stay scored by PSI (it sees the shape of the rows, which
a mean and spread do not), and the report says per feature which statistic
scored it. A pool whose rows name fewer
than two draws is uncalibrated: the level is 0 and the raw divergence is
scored, as before. Pool size: ``simready.scenario.suite.REFERENCE_PER_INTENT``
(32 draws per intent by default: the largest of 32 leave-one-out values bounds
the 95th percentile with confidence 1 − 0.95³² = 0.81; a template with two
intents has 64 draws, the 63rd value, 0.84; a draw costs ≈ 0.2 s). The
distribution check is not required (SPEC §12): its failure lowers realism,
0.3 of validity, and never rejects a sample alone. docs/realism.md has the
measurements behind these choices.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from types import MappingProxyType
from typing import Any

#: 1.4.0: a feature whose PSI noise level is saturated is scored by its scenario-level statistic (the robust z of the
#: scenario's mean and spread among the intent's draws, beyond its leave-one-draw-out level) (issue 19 item 7).
#: 1.3.0: the distribution check scores divergence beyond the pool's leave-one-draw-out noise level (issue 19).
#: 1.2.0: a recorded contact exempts its actors' accelerations over its own window (the event's start and end, one
#: tick either side) instead of a fixed time around its start, grows the temporal tolerance there by |Δv|·dt/2,
#: and holds a road user's speed there to the vehicle limit (a struck pedestrian is carried by the vehicle).
#: 1.1.0: camera-vs-LiDAR positions compared on the ground plane (1.0.0 compared heights too).
POLICY_VERSION = "gate-1.4.0"

# --- score formulas and the acceptance rule (SPEC §12) ----------------------

#: fidelity = Σ weight · check score
FIDELITY_WEIGHTS = MappingProxyType({"physical": 0.4, "temporal": 0.3, "sensor": 0.3})
#: validity = Σ weight · component (realism is the distribution check's score)
VALIDITY_WEIGHTS = MappingProxyType({"fidelity": 0.5, "identity": 0.2, "realism": 0.3})
#: Accept iff physical and temporal pass and validity ≥ this.
ACCEPT_MIN_VALIDITY = 0.50
#: Checks that must pass for acceptance.
REQUIRED_CHECKS = ("physical", "temporal")

# --- weights ------------------------------------------------------------------

#: A sample with fidelity at or above this is high-fidelity evidence.
HIGH_FIDELITY_MIN = 0.80
#: Weight of an accepted sample before any cap.
ACCEPTED_WEIGHT = 1.0
#: Weight of a rejected sample.
REJECTED_WEIGHT = 0.0
#: Cap on the weight of an accepted low-fidelity sample.
LOW_FIDELITY_WEIGHT_CAP = 0.30
#: Across a suite, low-fidelity samples carry at most this share of the total weight;
#: above it their weights are scaled by f = cap·W_high / ((1 − cap)·W_low).
SUITE_LOW_FIDELITY_SHARE_CAP = 0.25

# --- score curve --------------------------------------------------------------

#: Utilisation up to which a check scores 1.
SCORE_KNEE = 0.8
#: Score at the limit (u = 1).
SCORE_AT_LIMIT = 0.5


def headroom_score(utilisation: float) -> float:
    """Score in [0, 1] of a worst-case utilisation (observed / limit), see the module docstring."""
    u = float(utilisation)
    if not math.isfinite(u):
        return 0.0
    if u <= SCORE_KNEE:
        return 1.0
    if u <= 1.0:
        return 1.0 - (1.0 - SCORE_AT_LIMIT) * (u - SCORE_KNEE) / (1.0 - SCORE_KNEE)
    return SCORE_AT_LIMIT / u


# --- 1. physical plausibility -------------------------------------------------


@dataclass(frozen=True)
class ClassLimit:
    """Plausibility limits of one actor class.

    ``max_speed_mps``: speed (stored and from position first differences);
    ``max_accel_mps2``: magnitude of the acceleration from position second
    differences (longitudinal and lateral together). Set above what the
    simulator's controllers may command (``simready.sim.core.constants``), below
    what a body can physically do: a vehicle's tyres give ≈ 1 g, a sprinting
    adult ≈ 3–5 m/s².
    """

    max_speed_mps: float
    max_accel_mps2: float


CLASS_LIMITS = MappingProxyType(
    {
        "vehicle": ClassLimit(max_speed_mps=55.0, max_accel_mps2=12.0),
        "cyclist": ClassLimit(max_speed_mps=15.0, max_accel_mps2=8.0),
        "pedestrian": ClassLimit(max_speed_mps=3.5, max_accel_mps2=8.0),
    }
)
#: Ontology classes (``data/ontology.yaml``) mapped to the limit class that governs them.
CLASS_ALIASES = MappingProxyType(
    {"car": "vehicle", "van": "vehicle", "shuttle": "vehicle", "truck": "vehicle", "bus": "vehicle"}
)
#: A recorded collision whose end the trace does not give exempts its actors' accelerations this long after
#: it began (s); one with an end (simready's traces) exempts its own contact window instead.
COLLISION_EXEMPT_S = 0.10
#: An overlap of two footprints counts only above this area (m²): touching is not overlapping.
OVERLAP_MIN_AREA_M2 = 0.01

# --- 2. temporal consistency --------------------------------------------------

#: |Δx − v̄·dt| per tick (v̄ the mean of the stored velocities at both ends) may not exceed this (m).
TEMPORAL_TOL_M = 0.05

# --- 3. sensor consistency ----------------------------------------------------

#: Score of the sensor check when a sample has no sensor evidence (or no camera–LiDAR pair to
#: compare): no evidence, no credit. With perfect physics the fidelity is then 0.70 < 0.80,
#: so trajectory-only samples are low-fidelity evidence and their weight is capped.
SENSOR_ABSENT_SCORE = 0.0
#: Camera and LiDAR positions of one instance agree within this, plus each side's stated
#: extent (a surface centroid vs a body centre) plus the instance's speed × the time offset (m).
SENSOR_POSITION_TOL_M = 0.5
#: A camera frame and a LiDAR sweep are compared only when their times differ by at most this (s).
SENSOR_PAIR_MAX_DT_S = 0.06
#: The position-agreement sub-check passes when at least this fraction of compared pairs agree.
SENSOR_AGREEMENT_MIN_FRACTION = 0.95
#: Score of a violated condition expectation (night camera above LiDAR, rain not attenuating LiDAR).
SENSOR_CONDITION_FAIL_SCORE = 0.0
#: Camera detection from observed visibility: detected when the visible fraction is at least this.
CAMERA_MIN_VISIBLE_FRACTION = 0.05
#: LiDAR detection: detected when the sweep has at least this many points on the instance.
LIDAR_MIN_POINTS = 3
#: At most this many LiDAR sweeps are read per sample (evenly spaced): enough for the rates and
#: positions, and it keeps the gate independent of the clip length.
LIDAR_MAX_SWEEPS = 20

# --- 4. identity --------------------------------------------------------------

#: An id that moves farther than max_speed·Δt plus this between consecutive observations teleports (m).
ID_JUMP_MARGIN_M = 0.5

# --- 5. distribution similarity -----------------------------------------------

#: Continuous features and their PSI bins (quantiles of the reference pool).
PSI_BINS = 10
#: Probability floor in PSI / JS so empty bins stay finite.
DIVERGENCE_EPS = 1.0e-4
#: Added PSI at which a continuous feature's score reaches 0 (PSI > 0.25 is the usual "major shift").
PSI_ADDED_MAX = 0.25
#: Added Jensen–Shannon divergence (base 2, in [0, 1]) at which the class-mix score reaches 0.
JS_ADDED_MAX = 0.10
#: Score of the distribution check when no reference pool is given: uninformative, neither
#: credit nor penalty.
REALISM_ABSENT_SCORE = 0.5
#: Features need at least this many rows on each side to be compared.
MIN_FEATURE_ROWS = 20
#: Quantile of the leave-one-draw-out null taken as a feature's noise level: a nominal scenario's divergence
#: stays under it with this probability (a false alarm rate of 1 − q per feature for a nominal sample).
NOISE_QUANTILE = 0.95
#: Confidence with which the noise level bounds that quantile from above (the order statistic is chosen for it).
NOISE_CONFIDENCE = 0.80
#: A noise level at or above this share of the largest PSI a sample can reach (all rows in one bin) is noted as
#: saturated: the feature is constant within a scenario, and PSI over the pool's bins cannot see its shift.
NOISE_SATURATED_SHARE = 0.90
#: Added robust z (in the draws' own spread, 1.4826·MAD) at which a saturated feature's score reaches 0: one
#: standard deviation of the draws beyond the largest nominal scenario's distance.
SCENARIO_Z_ADDED_MAX = 1.0
#: Floor of the draws' spread of a scenario summary (m or m/s): draws agreeing closer than this do not differ.
SCENARIO_SCALE_FLOOR = 0.01

# --- reporting ------------------------------------------------------------------

#: At most this many violation texts per check in a report's detail.
MAX_REASONS_PER_CHECK = 20


def limit_class(actor_class: str) -> str | None:
    """The :data:`CLASS_LIMITS` key governing ``actor_class`` (a kind or an ontology class), or None."""
    key = CLASS_ALIASES.get(actor_class, actor_class)
    return key if key in CLASS_LIMITS else None


def policy_record() -> dict[str, Any]:
    """Every constant above as plain data (for reports and Dagster metadata)."""
    out: dict[str, Any] = {}
    for name, value in sorted(globals().items()):
        if not name.isupper():
            continue
        if isinstance(value, MappingProxyType):
            value = {k: asdict(v) if isinstance(v, ClassLimit) else v for k, v in value.items()}
        elif isinstance(value, tuple):
            value = list(value)
        out[name] = value
    return out
