"""One sample's (or one branch's) observations as an MCAP file with Foxglove schemas (issue 18, SPEC §17).

A reviewer opens the file in Foxglove with nothing else. Messages are protobuf, in Foxglove's well-known
schemas (taken from ``foxglove-sdk``); the file is written by the ``mcap`` package. Every time is the
scenario's (seconds from its start, as in the trace and ``results.json``), as integer nanoseconds, and a
message's log time is its sample time:

=========================  ==========================  =============================================================
topic                      schema                      what
=========================  ==========================  =============================================================
``/<camera>/image``        foxglove.CompressedImage    ``rgb.png`` as written, at the frame's first-row time
``/<camera>/depth``        foxglove.RawImage           ``32FC1`` z-depth in metres (+inf where nothing was hit),
                                                       decoded from the file's ``near_m / z``
``/<camera>/calibration``  foxglove.CameraCalibration  K, P, and ``plumb_bob`` D = [k1, k2, 0, 0, 0] of the RGB
``/<lidar>/points``        foxglove.PointCloud         x y z intensity (float32), instance_id (uint32) and t
                                                       (float64, each point's firing time) at the sweep's start
``/<radar>/detections``    foxglove.PointCloud         x y z (float32) from range, azimuth and elevation, then
                                                       every CSV column (float64; instance_id uint32)
``/<radar>/contributors``  foxglove.PointCloud         per detection, each part whose surfaces returned it: x y z
                                                       (float32, its hits' centroid), detection, instance_id,
                                                       part, hits (uint32), power_share, radial_velocity_mps
                                                       (float64); entity and element names in the Parquet file
``/tf``                    foxglove.FrameTransforms    ``world`` → ``actor:<id>`` of every present actor at every
                                                       trace tick of the window, and the ego → each sensor
``/boxes``                 foxglove.SceneUpdate        each present actor's box (``box:<id>``) at every tick
``/tracks``                foxglove.SceneUpdate        each actor's path over the window (``track:<id>``), once
``/events``                foxglove.Log                every event of the trace (warning: collisions); one of the
                                                       warm-up (t < 0) at time 0, its own ``t`` in the message
=========================  ==========================  =============================================================

Frames: ``world`` is the trace's (x east, y north, z up); an actor's frame is its body's (origin at the
footprint centre on the ground, x forward); a sensor's frame is its measurement frame
(:mod:`simready.sensors_hw.frames`: the camera's optical frame x right, y down, z forward, which is what
Foxglove projects with; LiDAR and radar x forward, y left, z up). LiDAR points are in the LiDAR frame at each
beam's own time, as in the PLY; each point carries its firing time ``t`` (float64 seconds from the scenario
start: the PLY's ``t``, seconds since the sweep's ``sampleTime``, plus that time), and a PLY written without
``t`` gets it from the point's azimuth (:func:`~simready.sensors_hw.lidar.firing_times`). The window is ``render.json``'s, widened to the trace
ticks around it.

The folder is read by :mod:`simready.export.observed`; the messages are :mod:`simready.export.mcap_messages`'.

The same folder gives the same bytes: channels are registered in topic order, messages are written in
(time, topic, sequence) order, and the library string names this module's version, not a clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from foxglove import Schema, messages as fg
from mcap.writer import CompressionType, Writer

from simready.export.mcap_messages import (BOXES_TOPIC, EVENTS_TOPIC, TF_TOPIC, TRACKS_TOPIC, Message, camera_messages,
                                           contributor_messages, event_messages, lidar_messages, radar_messages,
                                           world_messages)
from simready.export.observed import ExportError, ObservedSample


#: Written into the MCAP header: a new version when the same folder would give other bytes.
EXPORT_VERSION = "simready-mcap-1"


@dataclass(frozen=True)
class McapExport:
    """What an export wrote: the file, its size, messages per topic and the first and last log times (ns)."""

    path: Path
    bytes: int
    messages: dict[str, int]
    start_ns: int
    end_ns: int


class _MessageClass(Protocol):
    """A Foxglove message class: its schema is what a channel registers."""

    @staticmethod
    def get_schema() -> Schema: ...


def _schemas(s: ObservedSample) -> dict[str, type[_MessageClass]]:
    """Every topic of the export and its message class."""
    topics: dict[str, type[_MessageClass]] = {TF_TOPIC: fg.FrameTransforms, BOXES_TOPIC: fg.SceneUpdate,
                               TRACKS_TOPIC: fg.SceneUpdate, EVENTS_TOPIC: fg.Log}
    for camera in s.results.cameras:
        topics |= {f"/{camera}/calibration": fg.CameraCalibration, f"/{camera}/image": fg.CompressedImage,
                   f"/{camera}/depth": fg.RawImage}
    for sensor, summary in s.results.sensors.items():
        if summary.type == "lidar":
            topics[f"/{sensor}/points"] = fg.PointCloud
        elif summary.type == "radar":
            topics[f"/{sensor}/detections"] = fg.PointCloud
            if any(f.pass_name == "radar.contributors" and f.sensor == sensor for f in s.results.files):
                topics[f"/{sensor}/contributors"] = fg.PointCloud
    return topics


def _messages(s: ObservedSample) -> list[Message]:
    out: list[Message] = [*world_messages(s), *event_messages(s)]
    for camera in s.results.cameras:
        out += camera_messages(s, camera)
    for sensor, summary in s.results.sensors.items():
        if summary.type == "lidar":
            out += lidar_messages(s, sensor)
        elif summary.type == "radar":
            out += radar_messages(s, sensor)
            out += contributor_messages(s, sensor)
    return out


def export_mcap(sample_dir: str | Path, out_file: str | Path, *, branch: str | None = None) -> McapExport:
    """Write ``out_file`` (which must not exist: the CLI passes :func:`simready.common.outdir.output_file`'s staged
    path) from the sample folder ``sample_dir``, or from its branch ``branch``'s observations."""
    s = ObservedSample.open(sample_dir, branch)
    topics = _schemas(s)
    messages = sorted(_messages(s), key=lambda m: (m.log_time_ns, m.topic))
    counts = dict.fromkeys(sorted(topics), 0)
    out = Path(out_file)
    with out.open("xb") as f:
        writer = Writer(f, compression=CompressionType.ZSTD)
        writer.start(profile="", library=EXPORT_VERSION)
        schema_ids: dict[str, int] = {}
        channels: dict[str, int] = {}
        for topic in sorted(topics):
            schema = topics[topic].get_schema()
            if schema.name not in schema_ids:
                schema_ids[schema.name] = writer.register_schema(schema.name, schema.encoding, schema.data)
            channels[topic] = writer.register_channel(topic, "protobuf", schema_ids[schema.name])
        writer.add_metadata("simready", {"sample_id": s.render.sample_id, "template_id": s.render.template_id,
                                         "branch": branch or "", "observe_version": s.render.version,
                                         "results_version": s.results.version, "export_version": EXPORT_VERSION,
                                         "time": "scenario seconds from its start, as nanoseconds"})
        for m in messages:
            try:
                data = m.encode()
            except (OSError, ValueError) as exc:
                raise ExportError(m.source or s.obs.root, "", f"unreadable: {exc}") from None
            writer.add_message(channels[m.topic], log_time=m.log_time_ns, data=data,
                               publish_time=m.log_time_ns, sequence=counts[m.topic])
            counts[m.topic] += 1
        writer.finish()
    start = messages[0].log_time_ns if messages else 0
    end = messages[-1].log_time_ns if messages else 0
    return McapExport(out, out.stat().st_size, counts, start, end)
