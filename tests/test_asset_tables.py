"""Asset-page tables a reviewer reads at 1600 px (issue 28 item 4): marks for yes/no, one column per sensor."""

from __future__ import annotations

from simready.assets.measurement import observation_metadata
from simready.assets.metadata import table


def test_booleans_show_as_marks_and_missing_values_stay_empty():
    value = table([{"ok": True, "n": 3}, {"ok": False, "n": 4}, {"n": 5}], [("ok", "bool"), ("n", "int")])
    assert [r.data for r in value.records] == [{"ok": "✓", "n": 3}, {"ok": "✗", "n": 4}, {"ok": None, "n": 5}]
    assert [(c.name, c.type) for c in value.schema.columns] == [("ok", "string"), ("n", "int")]


def test_the_observation_table_has_a_column_per_sensor(tmp_path):
    def folder(frames: dict) -> dict:
        return {"window_s": [1.0, 2.5], "files": 10, "frames": frames, "peak_rss_mb": 300.4,
                "timings_s": {"front_camera.render": 1.0, "front_camera.video": 0.25, "review.images": 0.5,
                              "roof_lidar.scan": 2.0}}

    rows = [{"sample": "s1", **folder({"front_camera": 15, "roof_lidar": 15}), "dry": None,
             "branches": {"coast": folder({"front_camera": 40, "roof_lidar": 41})}}]
    meta = observation_metadata([], rows, plan=_Plan())
    table_ = meta["observations"].value
    assert [c.name for c in table_.schema.columns] == ["sample", "variant", "window_s", "files", "frames front_camera",
                                                       "frames roof_lidar", "peak_rss_mb"]
    assert table_.records[1].data["frames roof_lidar"] == 41
    assert meta["review_assets_s"] == 1.5  # videos and review pictures of both folders
    stages = {r.data["stage"]: r.data["seconds"] for r in meta["seconds_by_stage"].value.records}
    assert stages == {"render": 2.0, "review": 1.5, "scan": 4.0}


class _Plan:
    def model_dump(self) -> dict:
        return {"pre_s": 0.5}


def test_a_coverage_cell_is_one_column_per_dimension_with_its_bounds():
    from simready.assets.scenario import cell_columns

    dims = {"brake": "mild", "brake.hi": 3.5, "brake.lo": 2, "ego_speed_mps.hi": 11.5, "ego_speed_mps.lo": 9,
            "illumination": "day"}
    assert cell_columns(dims) == {"brake": "mild (2–3.5)", "ego_speed_mps": "9–11.5", "illumination": "day"}
