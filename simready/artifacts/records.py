"""Typed records of the JSON files the stages write: one pydantic model per file (SPEC §9–§12).

Writers build a record and write :meth:`Record.dump` with
:func:`simready.common.atomic.write_json_atomic` (indent 2, keys sorted); line files
(``observed-frames.jsonl``) write :meth:`Record.line`. Readers get
``Model.read(path)`` and read only the fields defined here. Where each file
lies: :mod:`simready.artifacts.layout`.

Why the bytes do not change with the records: ``dump`` keeps exactly the keys
that were set — a writer sets every field it writes, and a record read from a
file has the keys the file had — and numbers keep their JSON spelling, because
a field is typed ``float`` only where every writer gives a float (an ``int``
would come back as ``1.0``). Files whose content belongs to another model (the
gate's :class:`~simready.validity.gate.ValidityReport`, a sensor model's
settings, the lighting) carry it as a plain mapping, typed by its owner.

Frames and units: world frame x east, y north, z up; metres, seconds;
quaternions ``[x, y, z, w]``; 4×4 poses as row lists.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field

from simready.common.hashing import file_version
from simready.common.scoped import ScopedCache

#: A 4×4 homogeneous transform as row lists.
Pose = list[list[float]]


class Record(BaseModel):
    """A JSON file's model. Unknown keys are refused (``extra="forbid"``) unless a record says otherwise."""

    model_config = ConfigDict(extra="forbid", validate_by_name=True, validate_by_alias=True,
                              serialize_by_alias=True)

    def dump(self) -> dict[str, Any]:
        """The JSON-ready mapping a writer writes: the keys that were set, by their file names."""
        return self.model_dump(mode="json", exclude_unset=True)

    def line(self) -> str:
        """One line of a JSON-lines file (keys sorted, no newline)."""
        return json.dumps(self.dump(), sort_keys=True)

    @classmethod
    def read(cls, path: str | Path) -> Self:
        """The file's record; within :func:`shared_records`, the record read before from the same version of it."""
        shared = _SHARED.entries
        if shared is None:
            return cls.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))
        key = (cls, file_version(path))
        if key not in shared:
            shared[key] = cls.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))
        return shared[key]  # type: ignore[no-any-return]

    @classmethod
    def read_lines(cls, path: str | Path) -> Iterator[Self]:
        """Every non-blank line of a JSON-lines file, in order (within :func:`shared_records`, as :meth:`read`)."""
        shared = _SHARED.entries
        if shared is not None:
            key = (cls, file_version(path), "lines")
            if key not in shared:
                shared[key] = list(cls._lines(path))
            return iter(shared[key])
        return cls._lines(path)

    @classmethod
    def _lines(cls, path: str | Path) -> Iterator[Self]:
        with Path(path).open(encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    yield cls.model_validate_json(line)


#: Within :func:`shared_records`: the records read, by their model and file version.
_SHARED = ScopedCache()


@contextmanager
def shared_records() -> Iterator[None]:
    """Within it, a record file read again unchanged (the same path, size, inode and modification time) gives the
    record (or the lines' records) read the first time instead of parsing and validating the file again: for one
    sample's validity gate and review page, which read the same ``legend.json`` (thousands of entries on a street
    of imported instances), ``observed-frames.jsonl`` and ``results.json`` in turn. The records are shared, so
    readers within it must not change them (none does)."""
    with _SHARED.scope():
        yield


# --- verdict.json (simready.sim.batch) ----------------------------------------------------------------------


class Verdict(Record):
    """``verdict.json``: the rollout's evaluate_trace verdict, findings and issues, and the ``sha256:`` of the
    trace it judged."""

    sample: str
    intent: str
    verdict: str
    findings: list[Any]
    issues: list[str]
    min_ttc_s: Any
    collisions: int
    trace_sha256: str


# --- branches/outcomes.json (simready.sim.batch) ---------------------------------------------------------


class BranchOutcome(Record):
    """One matched branch's row of the outcome table (:func:`simready.sim.branch.outcome`).

    ``collision_*`` describe the subject's first collision at or after the decision (None without
    one; ``collision_delta_v_mps``: each party's |Δv|); ``stopping_distance_m`` is measured from
    ``stopping_from_t_s``, the checkpoint tick's time.
    """

    label: str
    action: str
    disturbance: str
    repeat: int | None
    parent_checkpoint: str
    decision_t_s: float
    collision: bool
    collision_t: float | None
    collision_with: str | None
    collision_relative_speed_mps: float | None
    collision_delta_v_mps: dict[str, float] | None
    collision_duration_s: float | None
    collisions: int
    min_ttc_s: float | None
    min_ttc_t: float | None
    min_distance_m: float | None
    conflict_actor: str | None
    stopping_distance_m: float | None
    stopping_from_t_s: float
    required_decel_max: float | None


class Outcomes(Record):
    """``branches/outcomes.json``: the decision checkpoint, the branch-outcome table and each branch trace's hash."""

    sample: str
    checkpoint: str
    checkpoint_file: str
    checkpoint_tick: int
    decision_t_s: float
    decision_source: str
    split: str
    branches: list[BranchOutcome]
    trace_sha256: dict[str, str]


# --- validity.json (simready.validity.batch) ---------------------------------------------------------------


class ValidityRecord(Record):
    """``validity.json``: the gate's report on the base rollout and on each branch (keyed by label).

    ``base`` and ``branches[label]`` are :class:`~simready.validity.gate.ValidityReport` dumps
    (validate them with it); ``branch_sensor_evidence``: the labels gated with their own observations.
    """

    sample: str
    sensor_evidence: bool
    branch_sensor_evidence: list[str]
    base: dict[str, Any]
    branches: dict[str, dict[str, Any]]


# --- legend.json (simready.world.identity) -----------------------------------------------------------------


class LegendEntry(Record):
    """Compact id → entity identifier, semantic class (``class`` in the file), class id and family."""

    model_config = ConfigDict(frozen=True)

    compact_id: int
    entity: str
    semantic_class: str | None = Field(alias="class")
    class_id: int
    family: str | None


class Legend(Record):
    """``legend.json``: every entity of the observed scene by compact id (``nothing_hit``: the id of no hit).

    ``nothing_hit_class``: the ``semantic.png`` value where nothing was hit (sky; no ontology class, not the
    ignore value ``semantic_ignore_8bit``); ``row_time``: the rolling shutter's row-time and target-row rule.
    """

    ontology_version: str
    nothing_hit: int
    nothing_hit_class: int = 0
    semantic_ignore_8bit: int = 255
    row_time: str | None = None
    compact_id_bits: int
    entries: list[LegendEntry]


# --- observed-frames.jsonl (simready.measurement) ----------------------------------------------------------


class ObservedActor(Record):
    """One actor at one sensor sample: body-centre position (m), rotation, presence, whether the sample saw it."""

    position: list[float]
    rotation_xyzw: list[float]
    present: bool
    visible: bool


class ObservedFrame(Record):
    """One line of ``observed-frames.jsonl``: a sensor sample at ``t_s`` (its window start) and every actor,
    keyed by entity id (``<sample>/actor:<id>``)."""

    sensor: str
    tick: int
    t_s: float
    actors: dict[str, ObservedActor]


# --- results.json (simready.measurement) -------------------------------------------------------------------


class SampleTime(Record):
    """When a camera frame or LiDAR sweep was sampled (``sampleTime`` in the file): ``seconds`` from the scenario
    start; a camera frame's first row's time (the rolling shutter's rows follow at ``sample_times_s``), a sweep's
    start (its points' ``t`` count from it)."""

    seconds: float


class FileEntry(Record):
    """One file of an observation folder (``artifacts[i]`` in the file, SPEC §10): its name relative to the
    folder, sensor (``sensorId`` in the file) and tick (None for the folder's own files), pass, size and
    ``sha256:`` hash, and what its pass adds.

    Per pass: ``depth`` ``shape`` [H, W] and ``dtype``; ``lidar`` ``points``, ``sampleTime`` (the sweep's start:
    the PLY's per-point ``t`` counts from it), ``t`` (mid-sweep time, s) and ``T_world_sensor`` (the pose at
    mid-sweep; a point's own pose is the sensor's at ``sampleTime + t``); ``radar`` ``detections``; ``truth.forward`` /
    ``truth.backward`` ``target_tick``; ``video`` ``frames`` and ``fps``.
    """

    path: str
    sensor: str | None = Field(alias="sensorId")
    tick: int | None
    pass_name: str = Field(alias="pass")
    bytes: int
    sha256: str
    shape: list[int] | None = None
    dtype: str | None = None
    points: int | None = None
    sample_time: SampleTime | None = Field(default=None, alias="sampleTime")
    t: float | None = None
    T_world_sensor: Pose | None = None
    detections: int | None = None
    target_tick: int | None = None
    frames: int | None = None
    fps: float | None = None


class SensorSummary(Record):
    """An observed sensor: its type (camera | lidar | radar), samples observed and passes written."""

    type: str
    ticks: int
    passes: list[str]


class SampleTimes(Record):
    """When a camera frame's rows were sampled: row r at ``first_row + r * line_time_s`` (``rule``)."""

    first_row: float
    last_row: float
    rows: int
    line_time_s: float
    rule: str


class FrameProjection(Record):
    """A camera frame's projection as the published layout gives it (SPEC §10): ``kind``, vertical field of
    view (``fovYDeg``), clip planes (``nearM``, ``farM``) and how ``depth.f32.bin`` is stored (``depth``)."""

    kind: str
    fov_y_deg: float = Field(alias="fovYDeg")
    near_m: float = Field(alias="nearM")
    far_m: float = Field(alias="farM")
    depth: str


class CameraFrame(Record):
    """One camera frame: tick, window start ``t0_s``, the published ``projection`` and ``sampleTime``, and
    beside them simready's row sample times and the first and last rows' poses (optical frame)."""

    tick: int
    t0_s: float
    projection: FrameProjection
    sample_time: SampleTime = Field(alias="sampleTime")
    sample_times_s: SampleTimes
    T_world_camera_first_row: Pose
    T_world_camera_last_row: Pose


class Distortion(Record):
    """Radial lens distortion (``brown``: k1, k2) and the passes it applies to."""

    model: str
    k1: float
    k2: float
    applies_to: list[str]


class Pinhole(Record):
    """A camera's pinhole intrinsics in pixels: image size, focal lengths, principal point, where the pixel
    centres lie (``integer``) and the ``model`` (``pinhole``). The one pinhole model: the camera computes it
    (:func:`simready.sensors_hw.camera.pinhole`) and ``results.json`` gives it inside :class:`Projection`."""

    model_config = ConfigDict(frozen=True)

    width_px: int
    height_px: int
    fx: float
    fy: float
    cx: float
    cy: float
    pixel_centres: str
    model: str


class Projection(Pinhole):
    """A camera's projection: its pinhole intrinsics (:class:`Pinhole`, flat), distortion, shutter
    (rolling | global, ``line_time_s`` between rows) and clip range (m)."""

    distortion: Distortion
    shutter: str
    line_time_s: float
    near_m: float
    far_m: float


class CameraFrames(Record):
    """A camera's projection and its frames."""

    projection: Projection
    frames: list[CameraFrame]


class LidarSweep(Record):
    """One LiDAR sweep: tick, start ``t0_s``, duration ``sweep_s`` and point count."""

    tick: int
    t0_s: float
    sweep_s: float
    points: int


class RadarFrame(Record):
    """One radar frame: tick, time ``t_s`` and detection count."""

    tick: int
    t_s: float
    detections: int


class Results(Record):
    """``results.json``: every file of an observation folder (``artifacts`` in the file, sorted by path) and
    what the sensors sampled."""

    version: str
    passes: list[str]
    sensors: dict[str, SensorSummary]
    cameras: dict[str, CameraFrames]
    sweeps: dict[str, list[LidarSweep | RadarFrame]]
    files: list[FileEntry] = Field(alias="artifacts")


# --- parity.json (simready.measurement) --------------------------------------------------------------------


class ParityTolerance(Record):
    """How closely observed poses must match the trace: position (m) and angle (rad)."""

    position_m: float
    angle_rad: float


class ActorParity(Record):
    """One actor's comparison: trace ticks compared and the largest position and angle errors."""

    ticks: int
    max_position_error_m: float
    max_angle_error_rad: float


class Parity(Record):
    """``parity.json``: the geometric authority's poses at every trace tick of the observed window
    (``window_s``) against the trace's rows, per actor (entity id) and overall; ``passed`` when within
    ``tolerance``."""

    compared: str
    window_s: list[float]
    tolerance: ParityTolerance
    max_position_error_m: float
    max_angle_error_rad: float
    passed: bool
    actors: dict[str, ActorParity]


# --- render.json (simready.measurement) --------------------------------------------------------------------


class RigOverride(Record):
    """One applied ``--set`` override: its key, the sensors it reached (``atmosphere`` for the weather) and
    the value."""

    key: str
    sensors: list[str]
    value: Any


class RenderSettings(Record):
    """How the folder was observed (:class:`simready.measurement.options.ObserveOptions` and the encoders);
    ``window_s``: the observed [from, until], seconds of scenario time."""

    lidar_format: str
    lidar_time_column: bool
    #: ``f32`` (published) or ``f32.zst`` (opt-in compressed); absent in folders written before it existed.
    depth_format: str = "f32"
    video: bool
    pairing_policy: str
    writer_thread: bool
    truth_thread: bool
    from_s: float | None
    until_s: float | None
    png_compress_level: int
    #: The truth tables' codec and level (``["zstd", -1]``) for every column but those
    #: :data:`simready.measurement.writers.LZ4_COLUMNS` names (LZ4); each Parquet file records its columns' codecs.
    truth_compression: list[str | int]
    window_s: list[float]


class Render(Record):
    """``render.json``: the rig as rendered (overrides applied), settings, lighting and atmosphere, frames per
    sensor and warnings. ``rig``, ``lighting`` and ``atmosphere`` are their owners' JSON (:mod:`simready.sensors_hw`).
    No timings and no memory figures (SPEC §10 listed timings): they describe the run, not the observation, and would
    make two runs of the same inputs differ (issue 15); the observe call returns them."""

    version: str
    sample_id: str
    template_id: str
    passes: list[str]
    overrides: list[RigOverride]
    rig: dict[str, Any]
    settings: RenderSettings
    lighting: dict[str, Any]
    atmosphere: dict[str, Any]
    sensors_observed: list[str]
    #: Each observed sensor's measurement frame in words (SPEC §10: other tools' LiDAR frames differ).
    sensor_frames: dict[str, str]
    frames: dict[str, int]
    warnings: list[str]
