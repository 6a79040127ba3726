"""Example manifests on the real templates, for tests, the bench and the docs.

* :func:`crossing_manifest` — ``residential_crosswalk_v3``: the ego shuttle
  drives east on ``lane_eb`` past a delivery van parked at the end of the
  parking strip; a pedestrian hidden behind the van walks to the zebra at
  x = 60 and crosses when the clip starts.
* :func:`bench_manifest` — the same street with ten actors: parked cars, a
  lead and a following car, oncoming traffic, a cyclist, a second walker.
* :func:`signal_manifest` — ``urban_signalized_intersection``: the ego
  approaches the south stop line under a manifest signal program that is red
  for the first ``red_s`` seconds.

Each returns a validated :class:`~simready.scenario.manifest.ScenarioManifest`
whose ``template_hash`` and ``asset_versions`` are the real ones.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from simready.common.hashing import file_sha256
from simready.scenario.manifest import SCHEMA_VERSION, ScenarioManifest, parse_manifest
from simready.scenario.streams import StreamSet
from simready.world.template import WorldTemplate, template_hash

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog

SHUTTLE = "asset:shuttle/standard"
VAN = "asset:delivery_van/white"
SEDAN = "asset:sedan/grey"
PED = "asset:pedestrian_adult/standard"
CYCLIST = "asset:cyclist/standard"

RULES = {"obey_signals": True, "yield": True, "collision_avoidance": True, "aggression": 0.2, "speed_factor": 1.0}
ENVIRONMENT = {"illumination": "day", "sun_elevation_deg": 35.0, "sun_azimuth_deg": 180.0, "headlights": False,
               "weather": "dry", "wetness": 0.0, "road_friction": 0.9, "road_reflectance": 0.1, "rain_rate_mmph": 0.0}


def _dims(catalog: Catalog, asset: str) -> dict[str, float]:
    d = catalog.entry(asset).dimensions_m
    return {"l": d.length, "w": d.width, "h": d.height}


def vehicle(catalog: Catalog, actor_id: str, asset: str, lane: str, s: float, pose: tuple[float, float, float], speed: float,
            *, role: str = "agent", kind: str = "vehicle", cruise: float | None = None, route: list[str] | None = None,
            rules: dict[str, Any] | None = None, tags: list[str] | None = None) -> dict[str, Any]:
    return {
        "id": actor_id, "kind": kind, "role": role, "asset_id": asset, "dims": _dims(catalog, asset),
        "initial": {"lane_ref": {"lane": lane, "s": s, "t_frac": 0.0},
                    "pose": {"x": pose[0], "y": pose[1], "yaw": pose[2]}, "speed_mps": speed},
        "behavior": {"rules": dict(rules or RULES), "route": list(route or [lane]),
                     "cruise_speed_mps": speed if cruise is None else cruise},
        "walk": None, "present_at_start": True, "tags": list(tags or []),
    }


def parked(catalog: Catalog, actor_id: str, asset: str, pose: tuple[float, float, float], tags: list[str] | None = None) -> dict[str, Any]:
    return {
        "id": actor_id, "kind": "vehicle", "role": "parked", "asset_id": asset, "dims": _dims(catalog, asset),
        "initial": {"lane_ref": None, "pose": {"x": pose[0], "y": pose[1], "yaw": pose[2]}, "speed_mps": 0.0},
        "behavior": {"rules": dict(RULES), "route": [], "cruise_speed_mps": None},
        "walk": None, "present_at_start": True, "tags": list(tags or []),
    }


def pedestrian(catalog: Catalog, actor_id: str, pose: tuple[float, float, float], route: list[str], *, speed: float = 0.0,
               cruise: float | None = None, reaction_delay_s: float = 0.4, stop_tendency: float = 0.0,
               tags: list[str] | None = None) -> dict[str, Any]:
    return {
        "id": actor_id, "kind": "pedestrian", "role": "agent", "asset_id": PED, "dims": _dims(catalog, PED),
        "initial": {"lane_ref": None, "pose": {"x": pose[0], "y": pose[1], "yaw": pose[2]}, "speed_mps": speed},
        "behavior": {"rules": RULES | {"yield": False}, "route": [], "cruise_speed_mps": cruise},
        "walk": {"route": route, "reaction_delay_s": reaction_delay_s, "stop_tendency": stop_tendency},
        "present_at_start": True, "tags": list(tags or []),
    }


def assemble(template: WorldTemplate, catalog: Catalog, sample_id: str, actors: list[dict[str, Any]],
             interactions: list[dict[str, Any]], *, clip_s: float = 20.0, warmup_s: float = 5.0, dt: float = 0.02,
             signal_programs: list[dict[str, Any]] | None = None, occluders: list[dict[str, Any]] | None = None,
             realized: dict[str, Any] | None = None, environment: dict[str, Any] | None = None,
             intent: str = "example scenario") -> ScenarioManifest:
    """A full manifest around the given actors and interactions (validated; raises ManifestError if not)."""
    streams = StreamSet(sample_id)
    assets = sorted({a["asset_id"] for a in actors})
    families = sorted({a.removeprefix("asset:").split("/")[0] for a in assets})
    data = {
        "schema_version": SCHEMA_VERSION,
        "template_id": template.id,
        "template_hash": template_hash(template),
        "sample_id": sample_id,
        "seed": streams.root_seed,
        "streams": streams.seeds(),
        "clip_s": clip_s,
        "warmup_s": warmup_s,
        "dt": dt,
        "metric_subject": next((a["id"] for a in actors if a["role"] == "ego"), actors[0]["id"]),
        "actors": copy.deepcopy(actors),
        "interactions": copy.deepcopy(interactions),
        "signal_programs": copy.deepcopy(signal_programs or []),
        "occluders": copy.deepcopy(occluders or []),
        "environment": dict(environment or ENVIRONMENT),
        "coverage_cell": {"id": "example", "dims": {}},
        "split": "train",
        "realized": dict(realized or {}),
        "lineage": {"asset_families": families, "base_template": template.id, "checkpoint_group": sample_id},
        "asset_versions": {a: file_sha256(str(catalog.entry_dir(a) / "entry.json")) for a in assets},
        "intent": intent,
    }
    return parse_manifest(data, sample_id)


def crossing_actors(catalog: Catalog, *, ego_speed: float = 6.0, ego_s: float = 2.0, ped_x: float = 58.5) -> list[dict[str, Any]]:
    return [
        vehicle(catalog, "ego", SHUTTLE, "lane_eb", ego_s, (ego_s, -1.75, 0.0), ego_speed, role="ego", tags=["ego"]),
        parked(catalog, "van", VAN, (47.0, -4.65, 0.0), tags=["occluder"]),
        pedestrian(catalog, "ped", (ped_x, -6.9, 0.0), ["ss_60", "cw_s", "cw_n", "sn_60"], tags=["emerging"]),
    ]


def crossing_interactions(ped_start_s: float = 0.0) -> list[dict[str, Any]]:
    return [
        {"id": "ped_go", "actor_id": "ped", "trigger": {"kind": "at", "t_s": ped_start_s},
         "speed": {"mode": "absolute", "value": 1.4, "target": None},
         "dynamics": {"shape": "linear", "constraint": "time", "value": 0.5}},
        {"id": "van_hazard", "actor_id": "van", "trigger": {"kind": "at", "t_s": 0.0},
         "set": {"key": "lights.hazard", "value": True}},
    ]


def crossing_manifest(template: WorldTemplate, catalog: Catalog, *, sample_id: str = "residential_crosswalk_v3-demo",
                      clip_s: float = 10.0, ego_speed: float = 6.0, ego_s: float = 2.0, ped_start_s: float = 0.0,
                      **kwargs: Any) -> ScenarioManifest:
    return assemble(template, catalog, sample_id, crossing_actors(catalog, ego_speed=ego_speed, ego_s=ego_s),
                    crossing_interactions(ped_start_s), clip_s=clip_s,
                    occluders=[{"id": "occ_van", "kind": "actor", "actor_id": "van"}],
                    intent="a pedestrian hidden behind a parked van crosses at the zebra in front of the shuttle", **kwargs)


def bench_manifest(template: WorldTemplate, catalog: Catalog, *, sample_id: str = "residential_crosswalk_v3-bench",
                   clip_s: float = 20.0) -> ScenarioManifest:
    """Ten actors on ``residential_crosswalk_v3`` (the performance scenario)."""
    west = 3.14159265
    actors = crossing_actors(catalog, ego_s=9.0) + [
        parked(catalog, "car_parked", SEDAN, (20.0, -4.65, 0.0)),
        vehicle(catalog, "lead", SEDAN, "lane_eb", 18.0, (18.0, -1.75, 0.0), 6.5),
        vehicle(catalog, "follow", SEDAN, "lane_eb", 0.0, (0.0, -1.75, 0.0), 6.0, cruise=7.0),
        vehicle(catalog, "oncoming_1", SEDAN, "lane_wb", 10.0, (110.0, 1.75, west), 7.5),
        vehicle(catalog, "oncoming_2", SEDAN, "lane_wb", 30.0, (90.0, 1.75, west), 7.0),
        vehicle(catalog, "bike", CYCLIST, "lane_wb", 50.0, (70.0, 1.75, west), 4.0, kind="cyclist"),
        pedestrian(catalog, "walker", (100.0, 4.6, west), ["sn_100", "sn_80", "sn_60", "sn_40"], speed=1.2, cruise=1.2),
    ]
    interactions = crossing_interactions() + [
        {"id": "lead_slow", "actor_id": "lead", "trigger": {"kind": "at", "t_s": 6.0},
         "speed": {"mode": "factor", "value": 0.5, "target": None},
         "dynamics": {"shape": "sinusoidal", "constraint": "time", "value": 2.0},
         "until": {"kind": "after", "id": "lead_slow", "delay_s": 6.0}},
        {"id": "bike_offset", "actor_id": "bike", "trigger": {"kind": "at", "t_s": 2.0},
         "lane_offset": {"value": -0.5, "unit": "fraction"},
         "dynamics": {"shape": "cubic", "constraint": "time", "value": 1.5}},
    ]
    return assemble(template, catalog, sample_id, actors, interactions, clip_s=clip_s,
                    occluders=[{"id": "occ_van", "kind": "actor", "actor_id": "van"}],
                    intent="busy residential street with an occluded pedestrian crossing")


def signal_manifest(template: WorldTemplate, catalog: Catalog, *, red_s: float = 8.0, sample_id: str = "intersection-demo",
                    clip_s: float = 15.0) -> ScenarioManifest:
    """The ego on ``s_in`` meets a red light at the stop line (s = 44.5 m): red for t ∈ [0, red_s), then green."""
    actors = [vehicle(catalog, "ego", SHUTTLE, "s_in", 2.0, (1.75, -58.0, 1.5707963268), 8.0, role="ego",
                      route=["s_in", "s_to_n", "n_out"], tags=["ego"])]
    programs = [{"id": "south", "controls": ["s_in"], "offset_s": 0.0,
                 "phases": [{"state": "red", "duration_s": red_s}, {"state": "green", "duration_s": 60.0}]}]
    return assemble(template, catalog, sample_id, actors, [], clip_s=clip_s, warmup_s=1.0, signal_programs=programs,
                    intent="the ego stops at a red light and goes on green")
