"""Loading the three authored templates, and what scenario/sim code reads from them."""

from __future__ import annotations

import math

import pytest

from simready.common import paths
from simready.common.errors import TemplateError
from simready.world.template import (
    canonical_dict,
    crossing_s_window,
    list_template_files,
    load_template,
    parking_slots,
    parse_template,
    template_hash,
    validate_references,
)
from tests.fixtures.templates import TEMPLATE_IDS, loaded


def test_template_files_are_listed_sorted():
    files = list_template_files()
    assert tuple(files) == tuple(sorted(TEMPLATE_IDS))
    assert all(p.suffix == ".yaml" and p.stem == k for k, p in files.items())


@pytest.mark.parametrize("template_id", TEMPLATE_IDS)
def test_every_template_loads_clean(template_id):
    t = loaded(template_id)
    assert t.id == template_id
    assert t.coordinates.unit == "meter"
    # An imported map's lane warnings are the map's (city_crossing's junction connects only some lanes of its
    # two-lane arms); the hand-written templates have none.
    assert t.lane_warnings() == [] or t.provenance is not None and t.provenance.source
    assert template_hash(t).startswith("sha256:")
    names = [i.name for i in t.instances]
    assert len(names) == len(set(names))
    assert all(i.repeat is None for i in t.instances)


@pytest.mark.parametrize("template_id", TEMPLATE_IDS)
def test_canonical_dict_reloads_to_the_same_hash(template_id):
    t = loaded(template_id)
    again = parse_template(canonical_dict(t), "resolved.json")
    assert template_hash(again) == template_hash(t)
    assert "repeat" not in canonical_dict(t)["instances"][0]


@pytest.mark.parametrize("template_id", TEMPLATE_IDS)
def test_all_assets_resolve_when_certified(template_id):
    t = loaded(template_id)
    certified = {i.asset for i in t.instances} | {t.ego.asset}
    assert validate_references(t, certified, None) == []


def test_residential_layout():
    t = loaded("residential_crosswalk_v3")
    assert len(t.regions) == 14 and len(t.lanes) == 2
    assert t.instance_id("curb_south_3") == "residential_crosswalk_v3/instance:curb_south_3"
    curb = t.instance_by_name["curb_south_3"]
    assert (curb.pose.x, curb.pose.y) == (35.0, -5.875)
    eb = t.lane_graph.lane("lane_eb")
    assert eb.speed_limit_mps == 8.3 and eb.length_m == 120.0
    assert t.ego.route == ("lane_eb",)
    assert crossing_s_window(t, "lane_eb", "crosswalk_main") == (58.5, 61.5)
    path = t.walk_graph.shortest_path("ss_60", "sn_60")
    assert path == ["ss_60", "cw_s", "cw_n", "sn_60"]
    assert t.affordance("crossing_main").path == tuple(path)


def test_parking_slots_face_the_traffic_of_their_side():
    t = loaded("residential_crosswalk_v3")
    slots = parking_slots(t, "parking_slots")
    assert len(slots) == 7
    assert [round(x, 6) for x, _, _ in slots] == [5.5 + 7 * k for k in range(7)]
    assert all(y == pytest.approx(-4.65) and yaw == pytest.approx(0.0) for _, y, yaw in slots)
    assert slots[-1][0] + 3.5 < 58.5  # the last slot ends before the crosswalk


def test_default_rig_of_the_crosswalk_template():
    rig = loaded("residential_crosswalk_v3").sensor_rig
    cam, lidar, radar = rig.sensors["front_camera"], rig.sensors["roof_lidar"], rig.sensors["front_radar"]
    assert (cam.width_px, cam.height_px, cam.hfov_deg, cam.rate_hz, cam.shutter) == (1280, 720, 90.0, 20.0, "rolling")
    assert (lidar.channels, lidar.rotation_hz) == (64, 10.0)
    assert radar.rate_hz == 13.0
    assert rig.mounts["front_camera"].translation_m == (1.8, 0.0, 1.45)


def test_signal_program_is_two_phase_with_all_red():
    t = loaded("urban_signalized_intersection")
    sig = {s.id: s for s in t.signals}
    assert all(s.cycle_s == 60.0 for s in sig.values())
    for time_s in (0.0, 27.0, 28.5, 29.9, 30.0, 57.0, 58.5, 59.9, 60.0):
        ns, ew = sig["sig_s"].state_at(time_s), sig["sig_e"].state_at(time_s)
        assert not (ns != "red" and ew != "red"), time_s
    assert sig["sig_s"].state_at(29.0) == sig["sig_e"].state_at(29.0) == "red"
    assert sig["sig_e"].state_at(31.0) == "green"


def test_repeat_expands_with_k_from_zero():
    data = {"name": "curb", "asset": "asset:curb/segment_10m", "pose": {"x": 5, "y": 1}, "repeat": {"count": 3, "step_m": [10, 0.5]}}
    from tests.fixtures.templates import raw

    doc = raw("residential_crosswalk_v3")
    doc["instances"] = [data]
    doc["relations"] = [r for r in doc["relations"] if r["type"] != "parked_on"]
    t = parse_template(doc)
    assert [(i.name, i.pose.x, i.pose.y) for i in t.instances] == [("curb_0", 5, 1), ("curb_1", 15, 1.5), ("curb_2", 25, 2)]


def test_mount_pose_composes_on_the_ego():
    t = loaded("residential_crosswalk_v3")
    x, y, yaw = t.lane_graph.pose_at("lane_wb", 10.0)  # westbound: yaw = pi
    assert yaw == pytest.approx(math.pi)
    from simready.world.frames import compose, pose_2d

    cam = compose(pose_2d(x, y, yaw), t.sensor_rig.mounts["front_camera"].matrix())
    assert cam[:3, 3] == pytest.approx([x - 1.8, y, 1.45])


def test_a_file_read_again_with_the_same_bytes_is_the_same_object_and_an_edit_is_read_anew(tmp_path):
    """load_template shares one (frozen) object per path and text; an edited file is parsed again."""
    import shutil

    path = tmp_path / "t.yaml"
    shutil.copy(paths.TEMPLATES_DIR / "two_lane_arterial.yaml", path)
    first = load_template(path)
    assert load_template(path) is first
    text = path.read_text()
    assert "version: 1\n" in text
    path.write_text(text.replace("version: 1\n", "version: 2\n", 1))
    edited = load_template(path)
    assert edited is not first and edited.version == 2 and first.version == 1
    path.write_text(text.replace("version: 1\n", "version: [\n", 1))
    with pytest.raises(TemplateError):
        load_template(path)  # a bad file still fails, even right after a good read of the same path
