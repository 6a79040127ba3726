"""The Foxglove layout shipped with MCAP exports (issue 28 item 9): it names only what an export holds."""

from __future__ import annotations

import json

from mcap.reader import make_reader

from simready.export.foxglove_layout import LAYOUT_FILE, foxglove_layout, layout_bytes
from simready.export.mcap_file import export_mcap
from tests.fixtures.mcap import make_sample


def _panels(node) -> list[str]:
    return [node] if isinstance(node, str) else [*_panels(node["first"]), *_panels(node["second"])]


def test_the_layout_shows_the_scene_the_camera_and_plots_of_an_export(tmp_path):
    out = tmp_path / "s.mcap"
    export_mcap(make_sample(tmp_path / "sample", time_column=True), out)
    with out.open("rb") as f:
        topics = {c.topic for c in make_reader(f).get_summary().channels.values()}
    layout = foxglove_layout(topics, "ego", "car_2")
    panels = _panels(layout["layout"])
    assert sorted(panels) == sorted(layout["configById"])  # every panel configured, every configuration placed
    three_d = layout["configById"]["3D!scene"]
    assert three_d["followTf"] == "actor:ego"
    named = set(three_d["topics"]) | {p["imageMode"]["imageTopic"] for k, p in layout["configById"].items()
                                      if k.startswith("Image!")}
    assert named <= topics and any(t.endswith("/points") for t in three_d["topics"]) and "/boxes" in three_d["topics"]
    (image,) = (p for k, p in layout["configById"].items() if k.startswith("Image!"))
    assert image["imageMode"]["calibrationTopic"] in topics and "/boxes" in image["topics"]
    paths = [p["value"] for p in layout["configById"]["Plot!paths"]["paths"]]
    assert paths[0] == '/tf.transforms[:]{child_frame_id=="actor:ego"}.translation.x' and len(paths) == 4
    assert json.loads(layout_bytes(topics, "ego", "car_2")) == layout
    assert layout_bytes(sorted(topics, reverse=True), "ego", "car_2") == layout_bytes(topics, "ego", "car_2")
    assert LAYOUT_FILE == "foxglove-layout.json"
