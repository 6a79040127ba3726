"""A Foxglove layout for the MCAP exports (issue 28 item 9): the scene in 3-D, the camera with annotations, plots.

Foxglove opens an MCAP with nothing else, but a first-time reviewer then faces an empty workspace. The layout
written beside the exports (``foxglove-layout.json``; in Foxglove: *Layouts → Import from file*) arranges, for
the topics the export holds (:mod:`simready.export.mcap_file`):

* a **3-D** panel following the subject (``actor:<subject>``) in the ``world`` frame: every LiDAR cloud coloured
  by intensity, the radar detections, the actors' boxes (``/boxes``) and paths (``/tracks``), the frames (``/tf``);
* an **image** panel per camera (its calibration, so Foxglove projects the boxes and the LiDAR points onto it);
* a **plot** of the subject's and the conflict actor's x and y over time (``/tf``), with the decision and
  collisions in the **log** panel (``/events``).

Only topics and frames the export writes are named, and the same topics give the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from simready.artifacts.layout import FOXGLOVE_LAYOUT as LAYOUT_FILE

__all__ = ["LAYOUT_FILE", "foxglove_layout", "layout_bytes"]


def foxglove_layout(topics: Iterable[str], subject: str = "ego", other: str | None = None) -> dict[str, Any]:
    """The layout for an export holding ``topics``; the 3-D view follows ``actor:<subject>``, the plot shows it
    (and ``actor:<other>``)."""
    topics = sorted(set(topics))
    clouds = [t for t in topics if t.endswith("/points")]
    radars = [t for t in topics if t.endswith("/detections")]
    cameras = [t[: -len("/image")] for t in topics if t.endswith("/image")]
    scene: dict[str, dict[str, Any]] = {t: {"visible": True} for t in ("/boxes", "/tracks") if t in topics}
    three_d: dict[str, Any] = {
        "followTf": f"actor:{subject}", "followMode": "follow-position",
        "scene": {"transforms": {"showLabel": True}},
        "cameraState": {"distance": 40, "perspective": True, "phi": 55, "thetaOffset": 0, "targetOffset": [0, 0, 0]},
        "topics": {**{t: {"visible": True, "colorField": "intensity", "colorMode": "colormap", "pointSize": 2}
                      for t in clouds},
                   **{t: {"visible": True, "pointSize": 6, "colorMode": "flat", "flatColor": "#ff5c5c"} for t in radars},
                   **scene},
        "layers": {"grid": {"layerId": "foxglove.Grid", "visible": True, "frameId": "world", "size": 200,
                            "divisions": 40}},
    }
    config: dict[str, dict[str, Any]] = {"3D!scene": three_d}
    for camera in cameras:
        config[f"Image!{camera.strip('/')}"] = {
            "imageMode": {"imageTopic": f"{camera}/image", "calibrationTopic": f"{camera}/calibration"},
            "topics": {**{t: {"visible": True, "colorField": "intensity", "colorMode": "colormap"} for t in clouds},
                       **scene},
        }
    actors = [subject, *([other] if other else [])]
    config["Plot!paths"] = {
        "title": "positions (m)", "xAxisVal": "timestamp", "showLegend": True,
        "paths": [{"value": f'/tf.transforms[:]{{child_frame_id=="actor:{a}"}}.translation.{axis}', "enabled": True,
                   "timestampMethod": "receiveTime", "label": f"{a} {axis}"} for a in actors for axis in ("x", "y")],
    }
    config["RawMessages!events"] = {"topicPath": "/events", "expansion": "all"} if "/events" in topics else {}
    images = [k for k in config if k.startswith("Image!")]
    right: dict[str, Any] | str = "Plot!paths" if not images else {
        "first": images[0] if len(images) == 1 else {"first": images[0], "second": images[1], "direction": "row"},
        "second": {"first": "Plot!paths", "second": "RawMessages!events", "direction": "row", "splitPercentage": 65},
        "direction": "column", "splitPercentage": 55}
    return {"configById": config, "globalVariables": {}, "userNodes": {}, "playbackConfig": {"speed": 1},
            "layout": {"first": "3D!scene", "second": right, "direction": "row", "splitPercentage": 55}}


def layout_bytes(topics: Iterable[str], subject: str = "ego", other: str | None = None) -> bytes:
    """:func:`foxglove_layout` as the JSON file Foxglove imports (sorted keys: the same topics, the same bytes)."""
    return (json.dumps(foxglove_layout(topics, subject, other), indent=1, sort_keys=True) + "\n").encode()
