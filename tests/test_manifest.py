"""Scenario manifest (SPEC §6): validation with field paths, canonical bytes, hashing, files."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from typing import Any

import pytest
from tests.fixtures.manifests import SAMPLE_ID, make_manifest, manifest_dict

from simready.common.errors import ManifestError
from simready.common.hashing import file_sha256, sha256_bytes
from simready.scenario.manifest import (
    STATE_KEYS,
    Interaction,
    ScenarioManifest,
    canonicalize,
    load_manifest,
    manifest_bytes,
    manifest_hash,
    parse_manifest,
    write_manifest,
)
from simready.scenario.streams import STREAM_NAMES


def _parse(data: dict[str, Any]) -> ScenarioManifest:
    return parse_manifest(data, "test.json")


def _error(data: dict[str, Any]) -> ManifestError:
    with pytest.raises(ManifestError) as info:
        _parse(data)
    return info.value


# --- the factory manifest ------------------------------------------------------


def test_factory_manifest_is_valid_and_exposes_derived_facts() -> None:
    m = make_manifest()
    assert m.sample_id == SAMPLE_ID
    assert set(STREAM_NAMES) <= set(m.streams)
    assert (m.clip_ticks, m.warmup_ticks) == (1000, 250)
    assert m.actor("ped").walk is not None and m.actor("ped").asset_family == "pedestrian_adult"
    assert m.actor("ego").behavior.rules.yield_ is True
    assert [(i.id, i.verb, i.axis) for i in m.interactions] == [
        ("ped_go", "speed", "longitudinal"),
        ("van_hazard", "set", "state:lights.hazard"),
        ("ped_stop", "speed", "longitudinal"),
    ]
    with pytest.raises(KeyError):
        m.actor("nobody")


def test_models_are_frozen() -> None:
    m = make_manifest()
    with pytest.raises(Exception, match="frozen"):
        m.seed = 1  # type: ignore[misc]


def test_yield_is_serialized_under_its_json_name() -> None:
    data = json.loads(manifest_bytes(make_manifest()))
    assert data["actors"][0]["behavior"]["rules"]["yield"] is True
    assert "yield_" not in data["actors"][0]["behavior"]["rules"]


# --- round trip, canonical order, hashing -----------------------------------------


def test_round_trip_is_exact() -> None:
    m = make_manifest()
    data = manifest_bytes(m)
    again = _parse(json.loads(data))
    assert again == m
    assert manifest_bytes(again) == data


def test_floats_are_rounded_on_validation_so_round_trip_holds() -> None:
    """0.1234567891234 m rounds to 9 decimals at parse; 1e-12 m/s rounds to 0 before bounds apply."""
    data = manifest_dict()
    data["actors"][0]["initial"]["pose"]["x"] = 0.1234567891234
    data["actors"][1]["initial"]["pose"]["x"] = 44.0000000000001
    m = _parse(data)
    assert m.actors[0].initial.pose.x == 0.123456789
    assert _parse(json.loads(manifest_bytes(m))) == m
    data["actors"][0]["dims"]["l"] = 1e-12
    assert _error(data).field == "actors[0].dims.l"


def test_float_spelling_does_not_change_the_hash() -> None:
    data = manifest_dict()
    spelled = copy.deepcopy(data)
    spelled["clip_s"] = 20  # int for float
    spelled["actors"][0]["initial"]["speed_mps"] = 8
    assert manifest_hash(_parse(spelled)) == manifest_hash(_parse(data))


def test_declaration_order_does_not_change_the_hash() -> None:
    data = manifest_dict()
    shuffled = copy.deepcopy(data)
    shuffled["actors"].reverse()
    shuffled["interactions"].reverse()
    a, b = _parse(data), _parse(shuffled)
    assert manifest_bytes(a) != manifest_bytes(b)
    assert manifest_hash(a) == manifest_hash(b)
    assert canonicalize(a) == canonicalize(b)
    assert [x.id for x in canonicalize(b).actors] == ["ego", "ped", "van"]
    assert [x.id for x in canonicalize(b).interactions] == ["ped_go", "ped_stop", "van_hazard"]


def test_any_real_change_changes_the_hash() -> None:
    data = manifest_dict()
    base = manifest_hash(_parse(data))
    data["actors"][1]["initial"]["pose"]["x"] += 0.01
    assert manifest_hash(_parse(data)) != base


def test_write_and_load(tmp_path: Any) -> None:
    m = canonicalize(make_manifest())
    path = write_manifest(m, tmp_path / "sub" / "manifest.json")
    assert load_manifest(path) == m
    assert path.read_bytes() == manifest_bytes(m)
    assert file_sha256(str(path)) == manifest_hash(m) == sha256_bytes(manifest_bytes(m))


def test_spec_defaults_apply() -> None:
    data = manifest_dict()
    for key in ("clip_s", "warmup_s", "dt"):
        del data[key]
    m = _parse(data)
    assert (m.clip_s, m.warmup_s, m.dt) == (20.0, 5.0, 0.02)


# --- errors name the field and the reason ------------------------------------------

Mutation = Callable[[dict[str, Any]], Any]


def _set(path: str, value: Any) -> Mutation:
    """A mutation assigning ``value`` at a dotted path with integer list indices."""

    def apply(data: dict[str, Any]) -> None:
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        node: Any = data
        for p in parents:
            node = node[p]
        node[last] = value

    return apply


def _delete(path: str) -> Mutation:
    def apply(data: dict[str, Any]) -> None:
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        node: Any = data
        for p in parents:
            node = node[p]
        del node[last]

    return apply


def _ped_go(**changes: Any) -> Mutation:
    def apply(data: dict[str, Any]) -> None:
        data["interactions"][0].update(changes)

    return apply


def _when(condition: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "when", "condition": condition, "by_latest_s": 8.0, "if_never": "skip"}


_SPEED_COND = {"kind": "speed", "actor": "ego", "op": "lt", "value_mps": 1.0}
_SIGNAL = {
    "id": "tl_main",
    "controls": ["main_eb"],
    "phases": [{"state": "green", "duration_s": 20.0}, {"state": "red", "duration_s": 10.0}],
    "offset_s": 0.0,
}

ERROR_CASES: list[tuple[str, Mutation, str, str]] = [
    ("negative speed", _set("actors.1.initial.speed_mps", -1.0), "actors[1].initial.speed_mps", "greater than or"),
    ("nan", _set("actors.0.initial.pose.x", math.nan), "actors[0].initial.pose.x", "finite"),
    ("inf", _set("environment.wetness", math.inf), "environment.wetness", "finite"),
    ("string for number", _set("dt", "0.02"), "dt", "valid number"),
    ("int for bool", _set("actors.0.behavior.rules.yield", 1), "actors[0].behavior.rules.yield", "valid boolean"),
    ("missing field", _delete("actors.2.dims"), "actors[2].dims", "Field required"),
    ("unknown key", _set("bogus", 1), "bogus", "Extra inputs"),
    ("unknown nested key", _set("actors.0.initial.pose.z", 0.0), "actors[0].initial.pose.z", "Extra inputs"),
    ("bad kind", _set("actors.0.kind", "truck"), "actors[0].kind", "vehicle"),
    ("huge coordinate", _set("actors.0.initial.pose.y", 1e300), "actors[0].initial.pose.y", "less than or equal"),
    ("yaw beyond pi", _set("actors.0.initial.pose.yaw", 4.0), "actors[0].initial.pose.yaw", "less than or equal"),
    ("bad asset id", _set("actors.0.asset_id", "shuttle"), "actors[0].asset_id", "pattern"),
    ("bad hash key", _set("asset_versions.asset:shuttle", "sha256:" + "0" * 64), 'asset_versions["asset:shuttle"]',
     "invalid key"),
    ("empty actors", _set("actors", []), "actors", "at least 1"),
    ("schema version", _set("schema_version", "0.9"), "schema_version", "1.0.0"),
    ("duplicate actor", _set("actors.2.id", "van"), "actors[2].id", "duplicate id 'van'"),
    ("metric subject", _set("metric_subject", "nobody"), "metric_subject", "unknown actor 'nobody'"),
    ("clip not whole ticks", _set("dt", 0.03), "clip_s", "whole number of ticks"),
    ("warmup not whole ticks", _set("warmup_s", 5.01), "warmup_s", "whole number of ticks"),
    ("stream missing", _delete("streams.sensor"), "streams", "sensor"),
    ("stream seed too big", _set("streams.layout", 2**63), "streams.layout", "less than or equal"),
    ("two egos", _set("actors.1.role", "ego"), "actors", "more than one actor has role ego"),
    ("ego pedestrian", _set("actors.2.role", "ego"), "actors[2].role", "the ego is a vehicle"),
    ("parked moving", _set("actors.1.initial.speed_mps", 2.0), "actors[1].initial.speed_mps", "parked"),
    ("pedestrian without walk", _set("actors.2.walk", None), "actors[2].walk", "walk block"),
    ("pedestrian lane route", _set("actors.2.behavior.route", ["main_eb"]), "actors[2].behavior.route", "walk.route"),
    ("vehicle walking", _set("actors.0.walk", {"route": ["a", "b"], "reaction_delay_s": 0, "stop_tendency": 0}),
     "actors[0].walk", "only pedestrians"),
    ("family not in lineage", _set("lineage.asset_families", ["shuttle", "pedestrian_adult"]), "actors[1].asset_id",
     "delivery_van"),
    ("families repeat", _set("lineage.asset_families", ["shuttle", "shuttle"]), "lineage.asset_families", "repeat"),
    ("asset version missing", _delete("asset_versions.asset:shuttle/white"), "actors[0].asset_id", "asset_versions"),
    ("dry but wet", _set("environment.wetness", 0.5), "environment.wetness", "dry road"),
    ("night at noon", _set("environment.illumination", "night"), "environment.illumination", "is day"),
    ("rain without rate", _set("environment.weather", "rain"), "environment.rain_rate_mmph", "rain needs"),
    ("bad split", _set("split", "holdout"), "split", "train"),
    ("absent never spawned", _set("actors.2.present_at_start", False), "actors[2].present_at_start", "never spawned"),
    # interactions
    ("unknown actor", _ped_go(actor_id="ghost"), "interactions[0].actor_id", "unknown actor 'ghost'"),
    ("missing dynamics", _ped_go(dynamics=None), "interactions[0].dynamics", "needs dynamics"),
    ("dynamics omitted", lambda d: d["interactions"][0].pop("dynamics"), "interactions[0].dynamics", "needs dynamics"),
    ("dynamics on set", lambda d: d["interactions"][1].update(dynamics={"shape": "step", "constraint": "time",
     "value": 0}), "interactions[1].dynamics", "not shaped"),
    ("two verbs", _ped_go(exist={"state": "present"}), "interactions[0]", "exactly one verb"),
    ("no verb", _ped_go(speed=None), "interactions[0]", "found none"),
    ("linear with zero", _ped_go(dynamics={"shape": "linear", "constraint": "time", "value": 0.0}),
     "interactions[0].dynamics.value", "positive"),
    ("bad shape", _ped_go(dynamics={"shape": "spline", "constraint": "time", "value": 1.0}),
     "interactions[0].dynamics.shape", "step"),
    ("speed absolute no value", _ped_go(speed={"mode": "absolute"}), "interactions[0].speed.value", "needs a value"),
    ("speed stop with value", _ped_go(speed={"mode": "stop", "value": 1.0}), "interactions[0].speed.value", "no value"),
    ("speed match no target", _ped_go(speed={"mode": "match"}), "interactions[0].speed.target", "exactly for mode"),
    ("speed match unknown", _ped_go(speed={"mode": "match", "target": "ghost"}), "interactions[0].speed.target",
     "unknown actor 'ghost'"),
    ("speed match self", _ped_go(speed={"mode": "match", "target": "ped"}), "interactions[0].speed.target", "itself"),
    ("gap unknown", _ped_go(speed=None, gap={"target": "ghost", "value": 2.0, "unit": "time"}),
     "interactions[0].gap.target", "unknown actor"),
    ("change lane no lane", _ped_go(speed=None, change_lane={"mode": "lane"}), "interactions[0].change_lane.lane",
     "exactly for mode lane"),
    ("offset fraction", _ped_go(speed=None, lane_offset={"value": 1.5, "unit": "fraction"}),
     "interactions[0].lane_offset.value", "[-1, 1]"),
    ("pedestrian lane route verb", lambda d: d["interactions"][2].update(speed=None, dynamics=None,
     route={"lanes": ["x"]}), "interactions[2].route.lanes", "walkable nodes"),
    ("route both", lambda d: d["interactions"][2].update(speed=None, dynamics=None, route={"lanes": ["x"],
     "nodes": ["y"]}), "interactions[2].route.lanes", "exactly one"),
    ("until on one-shot", lambda d: d["interactions"][1].update(until={"kind": "at", "t_s": 3.0}),
     "interactions[1].until", "one-shot"),
    ("set unknown key", lambda d: d["interactions"][1].update(set={"key": "lights.disco", "value": True}),
     "interactions[1].set.key", "unknown state key"),
    ("set wrong type", lambda d: d["interactions"][1].update(set={"key": "lights.hazard", "value": "on"}),
     "interactions[1].set.value", "true or false"),
    ("set enum", lambda d: d["interactions"][1].update(set={"key": "doors.sliding", "value": "ajar"}),
     "interactions[1].set.value", "closed, open"),
    ("set range", lambda d: d["interactions"][1].update(actor_id=None, set={"key": "env.wetness", "value": 2.0}),
     "interactions[1].set.value", "[0.0, 1.0]"),
    ("set env with actor", lambda d: d["interactions"][1].update(set={"key": "env.wetness", "value": 0.5}),
     "interactions[1].actor_id", "world"),
    ("set doors on pedestrian", lambda d: d["interactions"][1].update(actor_id="ped",
     set={"key": "doors.sliding", "value": "open"}), "interactions[1].set.key", "pedestrian has no doors.sliding"),
    ("no actor", lambda d: d["interactions"][1].update(actor_id=None), "interactions[1].actor_id", "needs an actor"),
    ("duplicate interaction", lambda d: d["interactions"][2].update(id="ped_go"), "interactions[2].id", "duplicate"),
    # triggers and conditions
    ("bad trigger kind", _ped_go(trigger={"kind": "soon"}), "interactions[0].trigger", "'at', 'after'"),
    ("when without by_latest", lambda d: d["interactions"][0]["trigger"].pop("by_latest_s"),
     "interactions[0].trigger.by_latest_s", "Field required"),
    ("when bad if_never", lambda d: d["interactions"][0]["trigger"].update(if_never="maybe"),
     "interactions[0].trigger.if_never", "skip"),
    ("by_latest after clip", lambda d: d["interactions"][0]["trigger"].update(by_latest_s=30.0),
     "interactions[0].trigger.by_latest_s", "after the clip"),
    ("at after clip", lambda d: d["interactions"][1]["trigger"].update(t_s=21.0), "interactions[1].trigger.t_s",
     "after the clip"),
    ("at negative", lambda d: d["interactions"][1]["trigger"].update(t_s=-1.0), "interactions[1].trigger.t_s",
     "greater than or equal"),
    ("condition unknown actor", lambda d: d["interactions"][0]["trigger"]["condition"].update(actor="ghost"),
     "interactions[0].trigger.condition.actor", "unknown actor 'ghost'"),
    ("region bad", lambda d: d["interactions"][0]["trigger"]["condition"]["region"].update(s_to=70.0),
     "interactions[0].trigger.condition.region.s_to", "empty"),
    ("circle radius", lambda d: d["interactions"][0]["trigger"]["condition"].update(
        region={"shape": "circle", "x": 0.0, "y": 0.0, "r": 0.0}), "interactions[0].trigger.condition.region.r",
     "greater than 0"),
    ("flat polygon", lambda d: d["interactions"][0]["trigger"]["condition"].update(
        region={"shape": "polygon", "points": [{"x": 0, "y": 0}, {"x": 1, "y": 1}, {"x": 2, "y": 2}]}),
     "interactions[0].trigger.condition.region.points", "zero area"),
    ("and in and", _ped_go(trigger=_when({"kind": "and", "of": [_SPEED_COND, {"kind": "and", "of": [_SPEED_COND,
     _SPEED_COND]}]})), "interactions[0].trigger.condition.of[1]", "nest one level only"),
    ("not of not", _ped_go(trigger=_when({"kind": "not", "of": {"kind": "not", "of": _SPEED_COND}})),
     "interactions[0].trigger.condition.of", "nest one level only"),
    ("and leaf unknown actor", _ped_go(trigger=_when({"kind": "or", "of": [_SPEED_COND, {"kind": "visible",
     "a": "ped", "to": "ghost"}]})), "interactions[0].trigger.condition.of[1].to", "unknown actor 'ghost'"),
    ("and of one", _ped_go(trigger=_when({"kind": "and", "of": [_SPEED_COND]})),
     "interactions[0].trigger.condition.of", "at least 2"),
    ("unknown signal", _ped_go(trigger=_when({"kind": "signal", "signal": "tl_main", "state": "red"})),
     "interactions[0].trigger.condition.signal", "unknown signal 'tl_main'"),
    ("signal never amber", lambda d: (d["signal_programs"].append(_SIGNAL), d["interactions"][0].update(
        trigger=_when({"kind": "signal", "signal": "tl_main", "state": "amber"}))),
     "interactions[0].trigger.condition.state", "never shows amber"),
    ("after unknown", lambda d: d["interactions"][2]["trigger"].update(id="ghost"), "interactions[2].trigger.id",
     "unknown interaction 'ghost'"),
    ("after self", lambda d: d["interactions"][2]["trigger"].update(id="ped_stop"), "interactions[2].trigger.id",
     "cycle: ped_stop -> ped_stop"),
    ("after cycle", lambda d: d["interactions"][0].update(trigger={"kind": "after", "id": "ped_stop", "delay_s": 1}),
     "interactions[0].trigger.id", "cycle: ped_go -> ped_stop -> ped_go"),
    ("arrival both points", _ped_go(trigger={"kind": "arrival", "of": "ped", "at": {"x": 1, "y": 2},
     "conflict_point": "cp1", "sync_with": "ego", "ttc_s": 2.0}), "interactions[0].trigger.at", "exactly one"),
    ("arrival no timing", _ped_go(trigger={"kind": "arrival", "of": "ped", "conflict_point": "cp1",
     "sync_with": "ego"}), "interactions[0].trigger.ttc_s", "exactly one of ttc_s"),
    ("arrival unknown", _ped_go(trigger={"kind": "arrival", "of": "ped", "conflict_point": "cp1",
     "sync_with": "bus", "delta_t_s": -1.0}), "interactions[0].trigger.sync_with", "unknown actor 'bus'"),
    ("occluder unknown actor", _set("occluders.0.actor_id", "ghost"), "occluders[0].actor_id", "unknown actor"),
    ("occluder box without dims", _set("occluders.0", {"id": "wall", "kind": "building",
     "pose": {"x": 0, "y": 0, "yaw": 0}}), "occluders[0].dims", "needs pose and dims"),
]


@pytest.mark.parametrize(("mutate", "field", "reason"), [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES])
def test_invalid_manifest_names_field_and_reason(mutate: Mutation, field: str, reason: str) -> None:
    data = manifest_dict()
    mutate(data)
    err = _error(data)
    assert err.source == "test.json"
    assert err.field == field, err.one_line()
    assert reason in err.reason, err.one_line()
    assert err.one_line().startswith(f"test.json: {field}: ")


def test_valid_variants_parse() -> None:
    """Each verb, trigger, condition and region kind in a valid form."""
    data = manifest_dict()
    data["signal_programs"].append(_SIGNAL)
    data["occluders"].append({"id": "wall", "kind": "building", "pose": {"x": 0, "y": 5, "yaw": 0},
                              "dims": {"l": 20, "w": 1, "h": 8}})
    data["environment"] |= {"weather": "rain", "wetness": 0.7, "rain_rate_mmph": 4.0}
    dyn = {"shape": "cubic", "constraint": "time", "value": 2.0}
    ego = "ego"
    leaves = [
        {"kind": "distance", "metric": "euclidean", "a": "ego", "b": "ped", "op": "lt", "value_m": 15},
        {"kind": "ttc", "a": "ego", "b": "ped", "op": "lt", "value_s": 3},
        {"kind": "headway", "a": "ego", "b": "van", "op": "gt", "value_s": 1},
        {"kind": "reaches", "actor": "ped", "region": {"shape": "circle", "x": 47, "y": -3, "r": 1}},
        {"kind": "reaches", "actor": "ped", "region": {"shape": "polygon", "points": [
            {"x": 0, "y": 0}, {"x": 1, "y": 0}, {"x": 0, "y": 1}]}},
        {"kind": "standstill", "actor": "ego", "for_s": 1.0},
        {"kind": "signal", "signal": "tl_main", "state": "red"},
        {"kind": "collision", "a": "ego"},
        {"kind": "visible", "a": "ped", "to": "ego"},
    ]
    extra = [
        {"id": "e_gap", "actor_id": ego, "trigger": _when({"kind": "and", "of": leaves[:2]}),
         "gap": {"target": "van", "value": 2.0, "unit": "time"}, "dynamics": dyn,
         "until": {"kind": "at", "t_s": 12.0}},
        {"id": "e_lane", "actor_id": ego, "trigger": _when({"kind": "or", "of": leaves[2:5]}),
         "change_lane": {"mode": "left"}, "dynamics": {"shape": "sinusoidal", "constraint": "distance", "value": 30}},
        {"id": "e_offset", "actor_id": ego, "trigger": _when({"kind": "not", "of": leaves[5]}),
         "lane_offset": {"value": -0.3, "unit": "metres"}, "dynamics": dyn,
         "until": _when(leaves[6])},
        {"id": "e_route", "actor_id": ego, "trigger": _when(leaves[7]), "route": {"lanes": ["main_eb", "exit_n"]}},
        {"id": "p_route", "actor_id": "ped", "trigger": _when(leaves[8]), "route": {"nodes": ["a", "b"]}},
        {"id": "e_match", "actor_id": ego, "trigger": {"kind": "after", "id": "e_gap", "delay_s": 0.5},
         "speed": {"mode": "match", "target": "ped"}, "dynamics": dyn},
        {"id": "p_arrive", "actor_id": "ped", "trigger": {"kind": "arrival", "of": "ped", "at": {"x": 47.5, "y": -2.8},
         "sync_with": "ego", "ttc_s": 2.0}, "exist": {"state": "present"}},
        {"id": "w_wet", "actor_id": None, "trigger": {"kind": "at", "t_s": 5.0},
         "set": {"key": "env.wetness", "value": 1}},
        {"id": "v_door", "actor_id": "van", "trigger": {"kind": "at", "t_s": 5.0},
         "set": {"key": "doors.sliding", "value": "open"}},
    ]
    data["interactions"].extend(extra)
    m = _parse(data)
    axes = {i.id: i.axis for i in m.interactions}
    assert axes == {
        "ped_go": "longitudinal", "van_hazard": "state:lights.hazard", "ped_stop": "longitudinal",
        "e_gap": "longitudinal", "e_lane": "lateral", "e_offset": "lateral", "e_route": "topology",
        "p_route": "topology", "e_match": "longitudinal", "p_arrive": "existence", "w_wet": "state:env.wetness",
        "v_door": "state:doors.sliding",
    }
    assert m.interaction("w_wet").set.value == 1.0
    assert m.interaction("e_match").target_actor_id == "ped"
    assert m.signal_programs[0].cycle_s == 30.0
    assert _parse(json.loads(manifest_bytes(m))) == m


def test_state_key_registry_is_typed() -> None:
    assert {key.split(".")[0] for key in STATE_KEYS} == {"lights", "doors", "env"}
    for key, spec in STATE_KEYS.items():
        assert (not spec.applies_to) == key.startswith("env."), key
        assert spec.type in ("bool", "enum", "float")
        assert (spec.type == "enum") == bool(spec.values), key


def test_interaction_can_be_built_in_python() -> None:
    inter = Interaction(
        id="x",
        actor_id="ego",
        trigger={"kind": "at", "t_s": 1.0},
        speed={"mode": "delta", "value": -2.0},
        dynamics={"shape": "linear", "constraint": "rate", "value": 3.0},
    )
    assert (inter.verb, inter.axis, inter.speed.value) == ("speed", "longitudinal", -2.0)


# --- files ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "field", "reason"),
    [
        (b"{", "", "malformed JSON at line 1"),
        (b"\xff\xfe", "", "not UTF-8 text: invalid byte 0xff at offset 0"),
        (b"[1, 2]", "", "JSON object, not list"),
        (b'{"a": 1, "a": 2}', "", "duplicate key 'a'"),
        (b"[" * 100_000 + b"]" * 100_000, "", "nested deeper than 64 levels"),
    ],
    ids=["truncated", "not utf-8", "array", "duplicate key", "deep nesting"],
)
def test_load_malformed_file(tmp_path: Any, content: bytes, field: str, reason: str) -> None:
    path = tmp_path / "m.json"
    path.write_bytes(content)
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    assert (info.value.source, info.value.field) == (str(path), field)
    assert reason in info.value.reason


def test_load_nan_literal_names_the_field(tmp_path: Any) -> None:
    text = manifest_bytes(make_manifest()).decode().replace('"wetness":0', '"wetness":NaN')
    path = tmp_path / "m.json"
    path.write_text(text)
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    assert info.value.field == "environment.wetness"


def test_load_missing_file(tmp_path: Any) -> None:
    with pytest.raises(ManifestError, match="file not found"):
        load_manifest(tmp_path / "absent.json")
