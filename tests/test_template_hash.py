"""Canonical template hash: formatting-invariant, change-sensitive."""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import pytest

from simready.world.template import load_template, parse_template, rig_hash, template_hash
from tests.fixtures.templates import loaded, raw, write_yaml

TEMPLATE = "residential_crosswalk_v3"
#: Lists whose order is declaration order only (shuffling them must not matter).
UNORDERED = ("regions", "lanes", "instances", "relations", "affordances", "signals", "actor_types", "behaviors_allowed")


def _spell_float(v: float, rng: random.Random) -> str:
    """Another way to write the same float in YAML: 1 / 1.0 / 1.000, 1.75 / 1.7500."""
    if v.is_integer():
        return rng.choice([f"{int(v)}", f"{int(v)}.0", f"{int(v)}.000"])
    text = repr(v)
    return text if "e" in text else rng.choice([text, text + "00"])


def _scalar(v: Any, rng: random.Random) -> str:
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, float):
        return _spell_float(v, rng)
    if isinstance(v, int):
        return str(v)
    return json.dumps(v)


def _flow(v: Any, rng: random.Random) -> str:
    if isinstance(v, dict):
        keys = list(v)
        rng.shuffle(keys)
        return "{" + ", ".join(f"{json.dumps(k)}: {_flow(v[k], rng)}" for k in keys) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_flow(x, rng) for x in v) + "]"
    return _scalar(v, rng)


def _emit(v: Any, rng: random.Random, indent: int = 0) -> str:
    """YAML text for ``v``: shuffled keys, random flow/block style, random float spelling."""
    pad = " " * indent
    if isinstance(v, dict) and v and rng.random() < 0.7:
        keys = list(v)
        rng.shuffle(keys)
        return "".join(f"{pad}{k}:" + _block_value(v[k], rng, indent) for k in keys)
    if isinstance(v, list) and v and rng.random() < 0.5:
        return "".join(f"{pad}-" + _block_value(x, rng, indent) for x in v)
    return f"{pad}{_flow(v, rng)}\n"


def _block_value(v: Any, rng: random.Random, indent: int) -> str:
    if isinstance(v, (dict, list)) and v:
        return "\n" + _emit(v, rng, indent + rng.choice([2, 4]))
    return " " + _flow(v, rng) + "\n"


def _shuffle_declarations(doc: dict, rng: random.Random) -> dict:
    for key in UNORDERED:
        if key in doc:
            rng.shuffle(doc[key])
    rng.shuffle(doc["walkable"]["edges"])
    for edge in doc["walkable"]["edges"]:
        rng.shuffle(edge)
    return doc


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1), reorder=st.booleans())
def test_hash_ignores_key_order_float_spelling_and_layout(tmp_path, seed, reorder):
    rng = random.Random(seed)
    doc = raw(TEMPLATE)
    if reorder:
        doc = _shuffle_declarations(doc, rng)
    path = tmp_path / f"rewritten_{seed}.yaml"
    path.write_text(_emit(doc, rng))
    assert template_hash(load_template(path)) == template_hash(loaded(TEMPLATE))


def _curb_index(doc: dict) -> int:
    return next(i for i, inst in enumerate(doc["instances"]) if inst["name"] == "curb_south")


def _unrolled_curbs(doc: dict) -> dict:
    """``doc`` with the repeated south curb written out as 12 explicit instances."""
    curb = doc["instances"].pop(_curb_index(doc))
    dx, dy = curb["repeat"]["step_m"]
    for k in range(curb["repeat"]["count"]):
        pose = {"x": curb["pose"]["x"] + k * dx, "y": curb["pose"]["y"] + k * dy}
        doc["instances"].append({"name": f"curb_south_{k}", "asset": curb["asset"], "pose": pose})
    return doc


def test_repeat_and_explicit_copies_hash_alike(tmp_path):
    doc = _unrolled_curbs(raw(TEMPLATE))
    assert template_hash(load_template(write_yaml(tmp_path / "explicit.yaml", doc))) == template_hash(loaded(TEMPLATE))


def test_moving_one_curb_by_a_centimetre_changes_the_hash():
    doc = _unrolled_curbs(raw(TEMPLATE))
    curb = next(inst for inst in doc["instances"] if inst["name"] == "curb_south_3")
    curb["pose"]["y"] += 0.01
    assert template_hash(parse_template(doc)) != template_hash(loaded(TEMPLATE))


def test_moving_a_repeated_row_by_a_centimetre_changes_the_hash():
    doc = raw(TEMPLATE)
    doc["instances"][_curb_index(doc)]["pose"]["x"] += 0.01
    assert template_hash(parse_template(doc)) != template_hash(loaded(TEMPLATE))


def test_hash_resolution_is_the_canonical_rounding():
    doc = raw(TEMPLATE)
    doc["description"] = doc["description"] + " (edited)"
    assert template_hash(parse_template(doc)) != template_hash(loaded(TEMPLATE))
    doc = raw(TEMPLATE)
    doc["ego"]["cruise_speed_mps"] = 8.0000000001  # below the 1e-9 rounding of canonical hashing
    assert template_hash(parse_template(doc)) == template_hash(loaded(TEMPLATE))


# --- the rig: versioned apart from the world, except what scenario acceptance reads ---

#: Rig settings no ladder stage reads: they change the rig's version only.
RIG_ONLY_EDITS = [
    ("sensors", "roof_lidar", "max_range_m", 90.0),
    ("sensors", "roof_lidar", "channels", 32),
    ("sensors", "front_radar", "hfov_deg", 45.0),
    ("sensors", "front_camera", "distortion_k1", -0.05),
    ("mounts", "roof_lidar", "translation_m", [0.9, 0.0, 2.6]),
]
#: Settings the capture and occlusion stages read: they re-version the world too.
SCENARIO_EDITS = [
    ("sensors", "front_camera", "hfov_deg", 70.0),
    ("sensors", "roof_lidar", "rotation_hz", 20.0),
    ("sensors", "front_radar", "phase_s", 0.01),
    ("mounts", "front_camera", "translation_m", [1.8, 0.0, 1.5]),
]


def _rig_edited(section: str, name: str, field: str, value: Any):
    doc = raw(TEMPLATE)
    doc["sensor_rig"][section][name][field] = value
    return parse_template(doc)


@pytest.mark.parametrize("edit", RIG_ONLY_EDITS, ids=lambda e: ".".join(map(str, e[:3])))
def test_rig_only_edit_changes_the_rig_hash_not_the_world_hash(edit):
    base = loaded(TEMPLATE)
    edited = _rig_edited(*edit)
    assert rig_hash(edited) != rig_hash(base)
    assert template_hash(edited) == template_hash(base)


@pytest.mark.parametrize("edit", SCENARIO_EDITS, ids=lambda e: ".".join(map(str, e[:3])))
def test_rig_edit_that_acceptance_reads_changes_both_hashes(edit):
    base = loaded(TEMPLATE)
    edited = _rig_edited(*edit)
    assert rig_hash(edited) != rig_hash(base)
    assert template_hash(edited) != template_hash(base)


def test_same_readout_at_another_resolution_keeps_the_world_hash():
    """Half the rows, line time scaled to keep the readout (height − 1)·line_time: same readout, same aspect, same
    frustum — only the rig changes."""
    doc = raw(TEMPLATE)
    cam = doc["sensor_rig"]["sensors"]["front_camera"]
    h = cam["height_px"]
    cam["width_px"], cam["height_px"] = cam["width_px"] // 2, h // 2
    cam["line_time_s"] = (h - 1) * cam["line_time_s"] / (h // 2 - 1)
    edited = parse_template(doc)
    assert template_hash(edited) == template_hash(loaded(TEMPLATE))
    assert rig_hash(edited) != rig_hash(loaded(TEMPLATE))


def test_hash_is_computed_once_per_template_object_and_follows_copies():
    """The hash is remembered per object (templates are frozen); an edited copy is hashed anew, a freed one forgotten."""
    import gc

    from simready.world import template as template_module

    t = parse_template(raw(TEMPLATE))  # not a loaded file's shared object: this one is freed below
    first = template_hash(t)
    assert template_module._TEMPLATE_HASHES[id(t)][1] == first and template_hash(t) == first
    moved = t.model_copy(update={"description": t.description + " (copy)"})
    assert template_hash(moved) != first  # a copy with other content never reads the original's entry
    key = id(t)
    del t
    gc.collect()
    assert key not in template_module._TEMPLATE_HASHES
