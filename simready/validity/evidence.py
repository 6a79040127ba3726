"""What the validity gate looks at, as plain data.

The gate (:mod:`simready.validity.gate`) scores a :class:`ScenarioEvidence`
and never imports the other stages' code, so it runs on anything that can
produce these tables: a trace written by the simulator, a hand-made
adversarial case in a test, a perturbed copy of a source scenario.

A sample folder is read into it by :mod:`simready.validity.evidence_reader`.

Frames and units: world frame x east, y north, z up, metres, seconds;
quaternions ``[x, y, z, w]``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from simready.common.errors import SimreadyError
from simready.validity.features import ReferenceProfile


#: Ticks columns the gate reads (SPEC §7); the rest are carried along untouched.
REQUIRED_TICK_COLUMNS = ("tick", "t", "actor_id", "x", "y", "qx", "qy", "qz", "qw", "vx", "vy")
#: Optional per-row class column names, in the order they are looked for (for the identity check).
ROW_CLASS_COLUMNS = ("actor_class", "kind", "class")
DETECTION_COLUMNS = ("sensor_type", "sensor", "frame", "t", "actor_id", "x", "y", "z", "extent_m", "detected")


class EvidenceError(SimreadyError):
    """Evidence the gate cannot read (a missing column, an unreadable file)."""

    kind = "evidence"


class MissingStageError(EvidenceError):
    """A sample folder lacks the output of one stage."""

    kind = "missing_stage"

    def __init__(self, stage: str, path: str | Path, what: str) -> None:
        self.stage = stage
        super().__init__(path, "", f"{stage} stage output missing ({what})")


@dataclass(frozen=True)
class Collision:
    """A contact the simulator recorded: when it began and ended (s; the event's ``t_settled``, when its parties
    were back on their wheels, else its ``t_end``; None when the trace says neither) and the actors involved
    (``b`` None: with the world)."""

    t_s: float
    a: str
    b: str | None = None
    t_end_s: float | None = None


@dataclass(frozen=True)
class DryReference:
    """LiDAR figures of the same scene under dry weather, for the rain-attenuation expectation.

    ``detection_rate``: share of (sweep, actor) opportunities detected;
    ``returns_per_sweep``: mean number of points per sweep (None if unknown).
    """

    detection_rate: float | None
    returns_per_sweep: float | None = None


@dataclass
class SensorEvidence:
    """Per-frame, per-instance detections of the measurement stage.

    Attributes:
        detections: one row per (sensor frame, actor) opportunity, columns
            :data:`DETECTION_COLUMNS`: ``sensor_type`` (camera | lidar), ``sensor`` (name),
            ``frame`` (the sensor's own tick), ``t`` (s), ``actor_id``, ``x, y, z``
            (world, m; NaN if unknown), ``extent_m`` (how far the stated position may
            lie from the body centre: 0 for a centre, about half the footprint
            diagonal for a surface centroid), ``detected`` (bool).
        illumination: day | dusk | night.
        weather: dry | wet | rain.
        lidar_returns_per_sweep: mean number of LiDAR points per sweep, None if unknown.
        dry_reference: the same scene's LiDAR under dry weather, None if unknown.
        notes: what the loader could not read (reported in the sensor check's detail).
    """

    detections: pd.DataFrame
    illumination: str = "day"
    weather: str = "dry"
    lidar_returns_per_sweep: float | None = None
    dry_reference: DryReference | None = None
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        missing = [c for c in DETECTION_COLUMNS if c not in self.detections]
        if missing:
            raise EvidenceError("sensor evidence", "detections", f"missing columns {', '.join(missing)}")


@dataclass
class ScenarioEvidence:
    """Everything the gate scores for one sample.

    Attributes:
        sample_id: the sample's id (reports are keyed by it).
        ticks: the trace's ticks table (SPEC §7): one row per (tick, actor) with at
            least :data:`REQUIRED_TICK_COLUMNS`; ``speed_mps``, ``present``, ``z``, ``vz``
            and a per-row class column (:data:`ROW_CLASS_COLUMNS`) are used when present.
        actor_classes: actor id → class (vehicle | cyclist | pedestrian, or an ontology
            class such as ``van``, see :data:`~simready.validity.policy.CLASS_ALIASES`).
        dt: the trace's tick (s).
        actor_dims: actor id → footprint ``(length_m, width_m)``; actors without one are
            left out of the overlap check.
        ego_id: the ego / metric subject (features are relative to it), None if none.
        baseline_ticks: the untransformed source trajectory, None to score the absolute.
        baseline_actor_classes: classes of the baseline's actors (default: ``actor_classes``).
        sensor: the measurement stage's detections, None if absent.
        reference_pool: distribution features of the reference pool
            (:func:`~simready.validity.features.scenario_features` rows) or its frozen
            :class:`~simready.validity.features.ReferenceProfile`, None if absent.
        collisions: contacts the simulator recorded.
        source: where the evidence came from (for messages).
    """

    sample_id: str
    ticks: pd.DataFrame
    actor_classes: Mapping[str, str]
    dt: float
    actor_dims: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    ego_id: str | None = None
    baseline_ticks: pd.DataFrame | None = None
    baseline_actor_classes: Mapping[str, str] | None = None
    sensor: SensorEvidence | None = None
    reference_pool: pd.DataFrame | ReferenceProfile | None = None
    collisions: Sequence[Collision] = ()
    source: str = ""

    def __post_init__(self) -> None:
        where = self.source or self.sample_id
        for name, table in (("ticks", self.ticks), ("baseline_ticks", self.baseline_ticks)):
            if table is None:
                continue
            missing = [c for c in REQUIRED_TICK_COLUMNS if c not in table]
            if missing:
                raise EvidenceError(where, name, f"missing columns {', '.join(missing)}")
        if not (isinstance(self.dt, (int, float)) and math.isfinite(self.dt) and self.dt > 0):
            raise EvidenceError(where, "dt", f"tick must be a positive number of seconds, got {self.dt!r}")


def local_actor_id(entity: str) -> str:
    """``ped`` of ``<sample>/actor:ped`` (SPEC §3); other strings unchanged."""
    return entity.rsplit("actor:", 1)[1] if "actor:" in entity else entity


def collisions_from_events(events: Sequence[Mapping[str, Any]]) -> list[Collision]:
    """Collision events of a trace, whichever of the usual spellings they use."""
    out = []
    for e in events:
        if not isinstance(e, Mapping) or (e.get("type") or e.get("kind") or e.get("event")) != "collision":
            continue
        t = next((e[k] for k in ("t", "t_s", "time") if isinstance(e.get(k), (int, float))), None)
        actors = e.get("actors") or e.get("pair") or [e.get("a"), e.get("b")]
        actors = [local_actor_id(str(a)) for a in actors if a is not None]
        if t is None or not actors:
            continue
        end = e.get("t_settled", e.get("t_end"))
        end = float(end) if isinstance(end, (int, float)) and not isinstance(end, bool) and end >= t else None
        out.append(Collision(float(t), actors[0], actors[1] if len(actors) > 1 else None, end))
    return out
