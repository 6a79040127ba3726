"""The public program interface (SPEC §19): everything a scenario program may import.

A *program* is a subclass of :class:`IntentProgram`. The built-in intents
(``simready/scenario/programs/``) and a user's program file import from this
module and nothing else of simready's, so what they can do is what is here.

**What a program declares** (class attributes):

* ``name`` — the intent id (``[a-z][a-z0-9_]*``), what suites and ``--intent`` name;
* ``abbrev`` — the sample-id infix (``ta-<abbrev>-000042``);
* ``description`` — one sentence, the manifest's ``realized["intent.description"]``;
* ``default_template`` — the template it was written for (bench, docs);
* ``needs`` — the map affordances it samples on (names of :data:`AFFORDANCES`):
  a template lacking one is refused with the affordance's one-line reason;
* ``local_groups`` — the draw groups a repair may redraw;
* ``coverage`` — the coverage dimensions and cells, as the mapping a
  ``data/coverage/<intent>.yaml`` holds (:func:`parse_coverage`'s format);
  a built-in intent keeps its file there instead;
* ``proposal_budget`` — how many proposals a cell may reject in a row before
  it closes (the coverage's ``max_proposals_per_cell`` when it declares one);

and implements :meth:`IntentProgram.check_template`, :meth:`IntentProgram.propose`
and :meth:`IntentProgram.baseline`. ``propose`` returns a :class:`Proposal` whose

* ``draft`` is the manifest (:func:`assemble`): its actors (:func:`ego_vehicle`,
  :func:`vehicle_on_route`, :func:`actor`), interactions, parameters realized
  through :class:`Realization` (each with its cause), and ``metric_subject``
  (the ego);
* ``scene`` is the plan the ladder judges: one :class:`Body` per actor and the
  *event* the rollout stage measures (:class:`ClosesOnLead`, :class:`CutsIn`,
  :class:`PathConflict`);
* the *decision* — where the simulation checkpoints and the matched brake /
  coast branches begin — is :func:`decide_at` (``realized.t_decision_s``); a
  built-in's is its onset key (``t_brake_s``, ``t_lane_change_s``,
  ``t_enter_path_s`` less 1 s, ``t_reveal_s`` less 1 s).

**Helpers it composes**: route drawing on the lane graph (:func:`draw_ego_route`,
:func:`lane_network`, :func:`routes_of_length`, :func:`straight_through`,
:func:`multi_lane_stretches`, :func:`oncoming_lane`, :func:`left_turns_across_oncoming`,
:func:`plan_route`); occlusion (:func:`behind`, :func:`visible_fraction`);
reachability on the walkable graph (:func:`reachable`, :func:`walk_route`); mid-block crossings off it, between
parked vehicles (:func:`kerb_gap_sites`, :func:`kerb_gap`, :func:`site_pose`, :func:`parkable`,
:func:`midblock_crossing`: the
pedestrian's ``walk.via``, its :class:`Body` ``via``);
time to conflict (:func:`arrival_time`, :func:`start_for_ttc`,
:func:`solve_emergence_timing`, :func:`time_to_collision`); gap and headway
(:func:`time_headway`, :func:`gap_for_headway`); supported poses
(:func:`supports`, :func:`supported_region`, :func:`parking_sites`, :func:`kerb_slots`,
:func:`parking_slots`); draws
that read the coverage cell (:func:`cell_or_choice`, :func:`in_cell_bin`,
:func:`other_vehicle`) and the environment (:func:`conditions`,
:func:`correlated_environment`); the frame the vehicle intents share
(:class:`VehicleIntentParams`, :func:`ego_under_conditions`: environment then ego; :func:`scripted_vehicle_rules`;
:func:`pair_proposal`: the manifest, scene and proposal of the ego and one other actor).

**What runs without the program asking**: every proposal goes through the
ladder — sampling, semantics, schema, static geometry (bounds, support,
non-penetration, reachability, occlusion), coarse rollout of the decision
event, the coverage cell, capture feasibility and, in the pipeline, the
physics settle — and an accepted sample is simulated with matched brake and
coast branches at its decision, observed, given truth and gated. See
``docs/programs.md`` for a walk from ``simready scenario new-intent`` to an
intent in a suite.
"""

from __future__ import annotations

from simready.scenario.coarse_rollout import ClosesOnLead, CutsIn, PathConflict
from simready.scenario.context import ProgramContext
from simready.scenario.coverage import Cell, CoverageSpec
from simready.scenario.coverage_file import parse_coverage
from simready.scenario.draws import Draws, GroupDraws
from simready.scenario.environment import conditions, correlated_environment, independent_environment
from simready.scenario.geometry import (
    CROSSING_SURFACES,
    VEHICLE_SURFACES,
    WALKABLE_SURFACES,
    CoarsePath,
    Motion,
    SpeedProfile,
    angle_diff,
    stationary,
)
from simready.scenario.ladder import Body, Fail, Proposal, ProposalScene

#: A program's name for :class:`~simready.scenario.ladder.ProposalScene` (the bodies and timing a proposal stages),
#: as programs have written it since the interface was published; not :class:`simready.sim.core.scene.Scene`.
Scene = ProposalScene
from simready.scenario.midblock import (
    KerbGap,
    MidBlockCrossing,
    parkable,
    kerb_gap,
    midblock_crossing,
    site_pose,
)
from simready.scenario.program_base import (
    DRAWN_APPROACH_M,
    DRAWN_START_M,
    EgoRoute,
    IntentProgram,
    LaneSpawn,
    ScenarioError,
    actor,
    assemble,
    cell_or_choice,
    dims_of,
    draw_ego_route,
    ego_vehicle,
    family_of,
    in_cell_bin,
    lane_as_spawn,
    lwh,
    other_vehicle,
    rules,
    seconds_on_grid,
    signal_programs,
    spawn_affordances,
    vehicle_families,
    vehicle_on_route,
    wheel_points,
)
from simready.scenario.program_helpers import (
    DECISION_KEY,
    VehicleIntentParams,
    arrival_time,
    behind,
    decide_at,
    ego_under_conditions,
    footprint,
    gap_for_headway,
    independent_vehicle_baseline,
    lane_change_path,
    oncoming_lane,
    pair_proposal,
    reachable,
    scripted_vehicle_rules,
    start_for_ttc,
    supported_region,
    supports,
    time_headway,
    time_to_collision,
    visible_fraction,
    walk_route,
)
from simready.scenario.realization import Realization
from simready.scenario.static_checks import OcclusionSpec, camera_view
from simready.scenario.streams import StreamSet
from simready.scenario.timing import solve_emergence_timing
from simready.world.affordances import (
    AFFORDANCES,
    KERB_GAP_M,
    LONG_ROUTE_M,
    PARKED_WIDTH_M,
    SIDEWALK_PROBE_M,
    GapSite,
    ParkingSite,
    kerb_gap_sites,
    kerb_slots,
    left_turns_across_oncoming,
    multi_lane_stretches,
    oncoming_chain,
    parking_sites,
)
from simready.world.frames import footprint_corners
from simready.world.lane_graph import lane_network
from simready.world.routing import plan_route, route_length_m, routes_of_length, straight_through
from simready.world.template_model import ParkingAffordance, PedestrianCrossing, WorldTemplate, parking_slots


__all__ = [
    "AFFORDANCES", "Body", "CROSSING_SURFACES", "Cell", "ClosesOnLead", "CoarsePath", "CoverageSpec", "CutsIn",
    "DECISION_KEY", "DRAWN_APPROACH_M", "DRAWN_START_M", "Draws", "EgoRoute", "Fail", "GapSite", "GroupDraws",
    "IntentProgram", "KERB_GAP_M", "KerbGap", "LONG_ROUTE_M", "LaneSpawn", "MidBlockCrossing", "Motion",
    "OcclusionSpec", "PARKED_WIDTH_M", "ParkingAffordance", "ParkingSite", "PathConflict", "PedestrianCrossing",
    "ProgramContext", "Proposal", "ProposalScene", "Realization", "SIDEWALK_PROBE_M", "ScenarioError", "Scene",
    "SpeedProfile", "StreamSet", "VEHICLE_SURFACES", "VehicleIntentParams", "WALKABLE_SURFACES", "WorldTemplate", "actor",
    "angle_diff", "arrival_time", "assemble", "behind", "camera_view", "cell_or_choice", "conditions",
    "correlated_environment", "decide_at", "dims_of", "draw_ego_route", "ego_under_conditions", "ego_vehicle",
    "family_of", "footprint", "footprint_corners", "gap_for_headway", "in_cell_bin", "independent_environment",
    "independent_vehicle_baseline", "kerb_gap", "kerb_gap_sites", "kerb_slots", "lane_as_spawn", "lane_change_path",
    "lane_network", "left_turns_across_oncoming", "lwh", "midblock_crossing", "multi_lane_stretches",
    "oncoming_chain", "oncoming_lane", "other_vehicle", "pair_proposal", "parkable", "parking_sites",
    "parking_slots", "parse_coverage", "plan_route", "reachable", "route_length_m", "routes_of_length", "rules",
    "scripted_vehicle_rules", "seconds_on_grid", "signal_programs", "site_pose", "solve_emergence_timing",
    "spawn_affordances", "start_for_ttc", "stationary", "straight_through", "supported_region", "supports",
    "time_headway", "time_to_collision", "vehicle_families", "vehicle_on_route", "visible_fraction", "walk_route",
    "wheel_points",
]
