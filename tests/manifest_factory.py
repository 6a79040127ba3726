"""A small valid scenario manifest for tests: a shuttle, a parked van, a pedestrian behind it.

Template ``demo_crossing``: lane ``main_eb`` runs east along y = -1.75 m,
s = x + 60 m. The ego shuttle starts the warm-up (t = -5 s) at x = -30 m at
8 m/s, so it is at x = 10 m at t = 0. A delivery van is parked at the kerb
at x = 44 m, hazards on from t = 0. A pedestrian waits behind it at
(47.5, -6.5) facing north; when the ego reaches s ∈ [80, 82) m (x = 20 m,
t ≈ 1.25 s) the pedestrian accelerates to 1.5 m/s over 0.6 s, and stops 6 s
later.

``manifest_dict()`` returns a fresh JSON-like dict (mutate it freely);
``make_manifest()`` the validated model. Import as
``from tests.manifest_factory import make_manifest``.
"""

from __future__ import annotations

from typing import Any

from simready.hashing import content_hash
from simready.scenario.manifest import SCHEMA_VERSION, ScenarioManifest, parse_manifest
from simready.scenario.streams import StreamSet

SAMPLE_ID = "demo_crossing-000001"
TEMPLATE_ID = "demo_crossing"

_RULES = {"obey_signals": True, "yield": True, "collision_avoidance": True, "aggression": 0.2, "speed_factor": 1.0}


def _actors() -> list[dict[str, Any]]:
    return [
        {
            "id": "ego",
            "kind": "vehicle",
            "role": "ego",
            "asset_id": "asset:shuttle/white",
            "dims": {"l": 5.0, "w": 2.1, "h": 2.6},
            "initial": {
                "lane_ref": {"lane": "main_eb", "s": 30.0, "t_frac": 0.0},
                "pose": {"x": -30.0, "y": -1.75, "yaw": 0.0},
                "speed_mps": 8.0,
            },
            "behavior": {"rules": dict(_RULES), "route": ["main_eb"], "cruise_speed_mps": 8.0},
            "walk": None,
            "present_at_start": True,
            "tags": ["ego"],
        },
        {
            "id": "van",
            "kind": "vehicle",
            "role": "parked",
            "asset_id": "asset:delivery_van/white",
            "dims": {"l": 5.4, "w": 2.0, "h": 2.5},
            "initial": {"lane_ref": None, "pose": {"x": 44.0, "y": -4.6, "yaw": 0.0}, "speed_mps": 0.0},
            "behavior": {"rules": dict(_RULES), "route": [], "cruise_speed_mps": None},
            "walk": None,
            "present_at_start": True,
            "tags": ["occluder"],
        },
        {
            "id": "ped",
            "kind": "pedestrian",
            "role": "agent",
            "asset_id": "asset:pedestrian_adult/a",
            "dims": {"l": 0.5, "w": 0.6, "h": 1.75},
            "initial": {"lane_ref": None, "pose": {"x": 47.5, "y": -6.5, "yaw": 1.570796327}, "speed_mps": 0.0},
            "behavior": {"rules": _RULES | {"yield": False}, "route": [], "cruise_speed_mps": None},
            "walk": {"route": ["sw_s_47", "cw_47_n"], "reaction_delay_s": 0.4, "stop_tendency": 0.1},
            "present_at_start": True,
            "tags": ["emerging"],
        },
    ]


def _interactions() -> list[dict[str, Any]]:
    return [
        {
            "id": "ped_go",
            "actor_id": "ped",
            "trigger": {
                "kind": "when",
                "condition": {
                    "kind": "reaches",
                    "actor": "ego",
                    "region": {"shape": "lane_window", "lane": "main_eb", "s_from": 80.0, "s_to": 82.0},
                },
                "by_latest_s": 8.0,
                "if_never": "fire",
            },
            "speed": {"mode": "absolute", "value": 1.5, "target": None},
            "dynamics": {"shape": "linear", "constraint": "time", "value": 0.6},
        },
        {
            "id": "van_hazard",
            "actor_id": "van",
            "trigger": {"kind": "at", "t_s": 0.0},
            "set": {"key": "lights.hazard", "value": True},
        },
        {
            "id": "ped_stop",
            "actor_id": "ped",
            "trigger": {"kind": "after", "id": "ped_go", "delay_s": 6.0},
            "speed": {"mode": "stop"},
            "dynamics": {"shape": "linear", "constraint": "rate", "value": 1.5},
        },
    ]


def manifest_dict() -> dict[str, Any]:
    """A fresh, valid, JSON-like manifest dict."""
    streams = StreamSet(SAMPLE_ID)
    actors = _actors()
    return {
        "schema_version": SCHEMA_VERSION,
        "template_id": TEMPLATE_ID,
        "template_hash": content_hash({"template": TEMPLATE_ID}),
        "sample_id": SAMPLE_ID,
        "seed": streams.root_seed,
        "streams": streams.seeds(),
        "clip_s": 20.0,
        "warmup_s": 5.0,
        "dt": 0.02,
        "metric_subject": "ego",
        "actors": actors,
        "interactions": _interactions(),
        "signal_programs": [],
        "occluders": [{"id": "occ_van", "kind": "actor", "actor_id": "van"}],
        "environment": {
            "illumination": "day",
            "sun_elevation_deg": 35.0,
            "sun_azimuth_deg": 180.0,
            "headlights": False,
            "weather": "dry",
            "wetness": 0.0,
            "road_friction": 0.9,
            "road_reflectance": 0.1,
            "rain_rate_mmph": 0.0,
        },
        "coverage_cell": {
            "id": "side=right|ttc=1.5-2.5|occlusion=high|illumination=day|weather=dry",
            "dims": {"side": "right", "ttc_lo_s": 1.5, "ttc_hi_s": 2.5, "occlusion": "high"},
        },
        "split": "train",
        "realized": {
            "ttc_target_s": 2.0,
            "ped_walk_speed_mps": 1.5,
            "emergence_side": "right",
            "van_gap_m": [1.2, 0.4],
        },
        "lineage": {
            "asset_families": ["delivery_van", "pedestrian_adult", "shuttle"],
            "base_template": TEMPLATE_ID,
            "checkpoint_group": SAMPLE_ID,
        },
        "asset_versions": {a["asset_id"]: content_hash({"asset": a["asset_id"]}) for a in actors},
        "intent": "a pedestrian steps out from behind a parked van in front of the shuttle",
    }


def make_manifest() -> ScenarioManifest:
    return parse_manifest(manifest_dict(), "manifest_factory")
