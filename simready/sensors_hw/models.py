"""Sensor hardware models and the rig that mounts them on the ego body.

Why pydantic with ``extra="forbid"``: a template's sensor block is user
input; a misspelt field (``hfov`` for ``hfov_deg``) must fail loudly rather
than silently take a default. Models are frozen so they can key caches
(pixel rays, beam tables) and be hashed into render provenance.

Units: SI in code; angles in config are ``*_deg`` and converted where used.
Frames: a mount is ``T_body_mount`` in the ego body frame (x forward, y left,
z up); the measurement frame of each sensor type is declared once in
:mod:`simready.sensors_hw.frames`, so
``T_world_sensor(t) = T_world_body(t) @ T_body_mount @ T_mount_sensor``.

Override keys (``--set key=value``), designed here:

* ``<selector>.<field>`` where ``<selector>`` is a sensor name, a sensor type
  (``camera``, ``lidar``, ``radar``: every sensor of that type) or ``*``
  (every sensor that has the field); a sensor name wins over a type name.
* A key without a selector (``rate_hz``, ``lens.distortion``) applies to every
  sensor whose model has that field; it is an error if none has it.
* ``<field>`` is a model field (``hfov_deg``), a nested field
  (``dropout.probability``) or a lens alias: ``lens.distortion`` scales both
  Brown coefficients (``0`` turns distortion off, ``1`` keeps it),
  ``lens.k1`` / ``lens.k2`` set one coefficient.
* Values given as strings are parsed as JSON when they parse (``0``, ``[1,2]``,
  ``true``) and kept as strings otherwise (``global``); the model then
  validates them, so a bad value fails with the field path.
* ``noise=off`` (every sensor has a ``noise`` field; ``on``/``off``,
  ``true``/``false``) is the one switch for noise-free observations
  (SPEC §10): with it off every normal draw of a sensor is taken as 0 and
  every uniform draw as ½, so Gaussian noise vanishes (LiDAR range noise
  and rain range spread, radar range/velocity/azimuth noise) and each random
  keep-or-lose decision takes its more likely outcome (LiDAR dropout of
  weak returns, lost only if ``dropout.probability`` > ½; a return in rain
  kept where the two-way transmittance T² > ½; a radar cluster detected
  where its detection probability > ½, i.e. SNR above the threshold).
  Deterministic physics stays: rain still scales LiDAR intensity by T².
  No generator is drawn from, so the output does not depend on the seeds.
  The camera has no stochastic effect (no sensor noise or grain): its
  switch is accepted and recorded only. ``lidar.noise=off`` etc. select.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from simready.common.errors import SimreadyError, pydantic_reason
from simready.sensors_hw.frames import SensorType, mount_to_sensor
from simready.world.frames import Mat4, mount_transform
from simready.world.motion import PoseTrack
from simready.world.template_model.base import MAX_IMAGE_PX, MAX_INT
from simready.world.template_model.rig import camera_readout_s

#: Stated bound of one LiDAR turn (rays): a typo in ``--set lidar.azimuth_steps`` must not cast 10¹² rays.
MAX_LIDAR_RAYS_PER_TURN = 10_000_000


class RigError(SimreadyError):
    kind = "rig"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CameraModel(_Model):
    """Pinhole camera with optional Brown lens distortion and rolling shutter.

    Declared by templates: ``width_px, height_px, hfov_deg, near_m, far_m,
    rate_hz, phase_s, shutter, line_time_s, distortion_k1``. Defaults:
    ``distortion_k2 = 0`` (radial, on normalized coordinates),
    ``exposure_ev = 0`` (linear gain 2**ev before tone mapping),
    ``vignette = 0.3`` (brightness falls to 1 − vignette at the image corner,
    quadratically in radius), ``tone_map = "reinhard"`` (x/(1+x); ``clip``
    clamps at 1). Rolling shutter samples row r at ``t0 + r·line_time_s``
    (row 0 at the top); global samples every row at ``t0``.
    """

    width_px: int = Field(gt=0, le=MAX_IMAGE_PX)
    height_px: int = Field(gt=0, le=MAX_IMAGE_PX)
    hfov_deg: float = Field(gt=0.0, lt=180.0)
    near_m: float = Field(gt=0.0)
    far_m: float = Field(gt=0.0)
    rate_hz: float = Field(gt=0.0)
    phase_s: float = Field(ge=0.0)
    shutter: Literal["rolling", "global"]
    line_time_s: float = Field(ge=0.0)
    distortion_k1: float
    distortion_k2: float = 0.0
    exposure_ev: float = 0.0
    vignette: float = Field(default=0.3, ge=0.0, le=1.0)
    tone_map: Literal["reinhard", "clip"] = "reinhard"
    #: Stochastic effects on (see the module doc's ``noise=off``); the camera has none, so this is a record only.
    noise: bool = True

    @model_validator(mode="after")
    def _ranges(self) -> "CameraModel":
        if self.far_m <= self.near_m:
            raise ValueError("far_m must exceed near_m")
        return self

    @property
    def readout_s(self) -> float:
        """Time from the first to the last row's sample, (height_px − 1)·line_time_s (0 for a global shutter).

        :func:`simready.world.template_model.rig.camera_readout_s`, the definition the
        template's scenario view uses too.
        """
        return camera_readout_s(self.height_px, self.line_time_s, self.shutter)


class DropoutModel(_Model):
    """LiDAR return loss: a beam whose surface is darker than
    ``dark_reflectance_below`` or hit at an incidence angle (from the surface
    normal) above ``grazing_incidence_deg_above`` is lost with ``probability``."""

    dark_reflectance_below: float = Field(default=0.05, ge=0.0, le=1.0)
    grazing_incidence_deg_above: float = Field(default=85.0, ge=0.0, le=90.0)
    probability: float = Field(default=0.5, ge=0.0, le=1.0)


class LidarModel(_Model):
    """Spinning LiDAR: ``channels`` beams per column, ``azimuth_steps`` columns per turn.

    Declared by templates: ``channels, vertical_fov_deg, rotation_hz,
    azimuth_steps, max_range_m, phase_s``. Give either ``vertical_fov_deg``
    ``[lo, hi]`` (channels spread evenly, lo and hi included) or explicit
    ``vertical_angles_deg`` (one per channel). Defaults:
    ``points_per_second`` = channels × azimuth_steps × rotation_hz (a given
    value must agree within 1 %), ``min_range_m = 0.3``,
    ``range_noise_m = 0.02`` (1σ Gaussian), ``dropout`` as in
    :class:`DropoutModel`, ``noise = True`` (False: no range noise, no rain
    range spread, and the dropout and rain-loss decisions take their more
    likely outcome; see the module doc's ``noise=off``).
    """

    channels: int = Field(gt=0, le=MAX_INT)
    vertical_fov_deg: tuple[float, float] | None = None
    vertical_angles_deg: tuple[float, ...] | None = None
    rotation_hz: float = Field(gt=0.0)
    azimuth_steps: int = Field(gt=0, le=MAX_INT)
    points_per_second: float | None = None
    min_range_m: float = Field(default=0.3, ge=0.0)
    max_range_m: float = Field(gt=0.0)
    range_noise_m: float = Field(default=0.02, ge=0.0)
    dropout: DropoutModel = DropoutModel()
    phase_s: float = Field(ge=0.0)
    noise: bool = True

    @model_validator(mode="after")
    def _vertical(self) -> "LidarModel":
        if (self.vertical_fov_deg is None) == (self.vertical_angles_deg is None):
            raise ValueError("give exactly one of vertical_fov_deg or vertical_angles_deg")
        if self.vertical_angles_deg is not None and len(self.vertical_angles_deg) != self.channels:
            raise ValueError(f"vertical_angles_deg has {len(self.vertical_angles_deg)} angles for {self.channels} channels")
        if self.vertical_fov_deg is not None and self.vertical_fov_deg[0] > self.vertical_fov_deg[1]:
            raise ValueError("vertical_fov_deg must be [lo, hi] with lo <= hi")
        if self.channels * self.azimuth_steps > MAX_LIDAR_RAYS_PER_TURN:
            raise ValueError(f"channels x azimuth_steps = {self.channels * self.azimuth_steps} rays per turn, "
                             f"more than the limit of {MAX_LIDAR_RAYS_PER_TURN}")
        derived = self.channels * self.azimuth_steps * self.rotation_hz
        if self.points_per_second is None:
            object.__setattr__(self, "points_per_second", derived)
        elif abs(self.points_per_second - derived) > 0.01 * derived:
            raise ValueError(f"points_per_second {self.points_per_second} disagrees with "
                             f"channels x azimuth_steps x rotation_hz = {derived}")
        if self.min_range_m >= self.max_range_m:
            raise ValueError("min_range_m must be below max_range_m")
        return self

    @property
    def rate_hz(self) -> float:
        return self.rotation_hz

    @property
    def sweep_s(self) -> float:
        return 1.0 / self.rotation_hz

    def elevations_rad(self) -> NDArray[np.float64]:
        """(channels,) beam elevation angles, radians, channel 0 lowest for an fov."""
        if self.vertical_angles_deg is not None:
            return np.radians(np.asarray(self.vertical_angles_deg, np.float64))
        lo, hi = self.vertical_fov_deg  # type: ignore[misc]
        return np.radians(np.linspace(lo, hi, self.channels))


class RadarModel(_Model):
    """Imaging radar: ray grid over the field of view, one detection per instance.

    Declared by templates: ``rate_hz, phase_s, hfov_deg, vfov_deg,
    max_range_m``. Defaults: ``range_res_m = 0.2``,
    ``velocity_res_mps = 0.1``, ``azimuth_res_deg = 1.0`` (reported with the
    settings; cells are not used to split instances), 1σ Gaussian noise
    ``range_noise_m = 0.1``, ``velocity_noise_mps = 0.05``,
    ``azimuth_noise_deg = 0.2``; detection:
    ``rcs_detect_dbsm_at_50m = -5`` (the RCS detected with probability 0.5 at
    50 m), ``snr_threshold_db = 12`` and ``pd_slope_db = 1.5`` (logistic
    detection probability in SNR), ``rcs_gain = 4`` (optical-to-radar gain in
    the RCS estimate), ``ray_spacing_deg = 0.25`` (ray grid pitch, both axes),
    ``exclude_semantic_ids = ()`` (classes never reported, e.g. road clutter),
    ``noise = True`` (False: no measurement noise, and a cluster is
    detected iff its detection probability exceeds ½).
    """

    rate_hz: float = Field(gt=0.0)
    phase_s: float = Field(ge=0.0)
    hfov_deg: float = Field(gt=0.0, lt=180.0)
    vfov_deg: float = Field(gt=0.0, lt=180.0)
    max_range_m: float = Field(gt=0.0)
    min_range_m: float = Field(default=0.5, ge=0.0)
    range_res_m: float = Field(default=0.2, gt=0.0)
    velocity_res_mps: float = Field(default=0.1, gt=0.0)
    azimuth_res_deg: float = Field(default=1.0, gt=0.0)
    range_noise_m: float = Field(default=0.1, ge=0.0)
    velocity_noise_mps: float = Field(default=0.05, ge=0.0)
    azimuth_noise_deg: float = Field(default=0.2, ge=0.0)
    rcs_detect_dbsm_at_50m: float = -5.0
    snr_threshold_db: float = 12.0
    pd_slope_db: float = Field(default=1.5, gt=0.0)
    rcs_gain: float = Field(default=4.0, gt=0.0)
    ray_spacing_deg: float = Field(default=0.25, gt=0.0)
    exclude_semantic_ids: tuple[int, ...] = ()
    noise: bool = True


SensorModel = CameraModel | LidarModel | RadarModel
_SensorModelT = TypeVar("_SensorModelT", CameraModel, LidarModel, RadarModel)

MODEL_BY_TYPE: dict[SensorType, type[_Model]] = {
    SensorType.camera: CameraModel,
    SensorType.lidar: LidarModel,
    SensorType.radar: RadarModel,
}


@dataclass(frozen=True)
class Mount:
    """Where a sensor sits on the ego body: its type and ``T_body_mount`` (4×4)."""

    type: SensorType
    T_body_mount: Mat4

    @property
    def T_body_sensor(self) -> Mat4:
        return self.T_body_mount @ mount_to_sensor(self.type)


@dataclass(frozen=True)
class Rig:
    """Sensors mounted on one ego body.

    Attributes:
        mounts: ``{name: Mount}``; every sensor has one.
        sensors: ``{name: model}`` matching the mount's type.
        body: the ego's world trajectory (``PoseTrack``; constant identity by
            default, i.e. the rig at the world origin).
    """

    mounts: dict[str, Mount]
    sensors: dict[str, SensorModel]
    body: PoseTrack = field(default_factory=PoseTrack.constant)

    def __post_init__(self) -> None:
        mounts = {n: m if isinstance(m, Mount) else Mount(SensorType(m[0]), np.asarray(m[1], np.float64))
                  for n, m in self.mounts.items()}
        object.__setattr__(self, "mounts", dict(sorted(mounts.items())))
        object.__setattr__(self, "sensors", dict(sorted(self.sensors.items())))
        if set(self.mounts) != set(self.sensors):
            raise RigError("rig", "", f"mounts {sorted(self.mounts)} and sensors {sorted(self.sensors)} differ")
        for name, model in self.sensors.items():
            expected = MODEL_BY_TYPE[self.mounts[name].type]
            if not isinstance(model, expected):
                raise RigError("rig", f"sensors.{name}", f"is {type(model).__name__}, mount says {expected.__name__}")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], body: PoseTrack | None = None, source: str = "rig") -> "Rig":
        """Rig from plain data: ``{"mounts": {name: mount}, "sensors": {name: {fields}}}``.

        A mount is ``{"type": "camera", "translation_m": [x, y, z],
        "rpy_deg": [roll, pitch, yaw]}`` or ``{"type": ..., "T_body_mount": 4×4}``.
        """
        mounts: dict[str, Mount] = {}
        for name, m in dict(data.get("mounts", {})).items():
            mounts[name] = _parse_mount(m, f"mounts.{name}", source)
        sensors: dict[str, SensorModel] = {}
        for name, fields in dict(data.get("sensors", {})).items():
            if name not in mounts:
                raise RigError(source, f"sensors.{name}", "has no mount")
            sensors[name] = _validate(MODEL_BY_TYPE[mounts[name].type], fields, f"sensors.{name}", source)
        return cls(mounts, sensors, body if body is not None else PoseTrack.constant())

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], body: PoseTrack | None = None, source: str = "rig") -> "Rig":
        """The rig :meth:`settings` wrote (``render.json``'s ``rig``), checked as :meth:`from_dict` checks."""
        if not isinstance(settings, Mapping) or not all(isinstance(s, Mapping) for s in settings.values()):
            raise RigError(source, "rig", "is not a mapping of sensor name to {type, T_body_mount, model}")
        try:
            mounts = {n: {"type": s["type"], "T_body_mount": s["T_body_mount"]} for n, s in settings.items()}
            sensors = {n: s["model"] for n, s in settings.items()}
        except KeyError as exc:
            raise RigError(source, "rig", f"a sensor lacks {exc.args[0]!r}") from None
        return cls.from_dict({"mounts": mounts, "sensors": sensors}, body, source)

    def on_body(self, body: PoseTrack) -> "Rig":
        """The same rig mounted on another ego trajectory."""
        return replace(self, body=body)

    def names(self, sensor_type: SensorType | str | None = None) -> list[str]:
        if sensor_type is None:
            return list(self.sensors)
        st = SensorType(sensor_type)
        return [n for n, m in self.mounts.items() if m.type == st]

    def camera(self, name: str) -> CameraModel:
        """The camera ``name``'s model (a RigError when ``name`` is another type of sensor)."""
        return self._model(name, CameraModel)

    def lidar(self, name: str) -> LidarModel:
        """The LiDAR ``name``'s model (a RigError when ``name`` is another type of sensor)."""
        return self._model(name, LidarModel)

    def radar(self, name: str) -> RadarModel:
        """The radar ``name``'s model (a RigError when ``name`` is another type of sensor)."""
        return self._model(name, RadarModel)

    def _model(self, name: str, kind: type[_SensorModelT]) -> _SensorModelT:
        model = self.sensors[name]
        if not isinstance(model, kind):
            raise RigError("rig", f"sensors.{name}", f"is {type(model).__name__}, not {kind.__name__}")
        return model

    def T_body_sensor(self, name: str) -> Mat4:
        return self.mounts[name].T_body_sensor

    def T_world_sensor(self, name: str, t_s: float | ArrayLike, *, clamp: bool = False) -> NDArray[np.float64]:
        """``T_world_body(t) @ T_body_mount @ T_mount_sensor``: (4, 4) for a scalar t, (M, 4, 4) for an array."""
        scalar = np.ndim(t_s) == 0
        T = self.body.poses_at(np.atleast_1d(t_s), clamp=clamp) @ self.T_body_sensor(name)
        return T[0] if scalar else T

    def settings(self) -> dict[str, Any]:
        """Everything that defines the rig's measurements, JSON-ready (for render.json)."""
        return {
            name: {
                "type": self.mounts[name].type.value,
                "T_body_mount": self.mounts[name].T_body_mount.tolist(),
                "model": self.sensors[name].model_dump(mode="json"),
            }
            for name in self.sensors
        }


def _parse_mount(m: object, path: str, source: str) -> Mount:
    if not isinstance(m, Mapping) or "type" not in m:
        raise RigError(source, path, "a mount needs a 'type' and a transform")
    try:
        st = SensorType(m["type"])
    except ValueError:
        raise RigError(source, f"{path}.type", f"unknown sensor type {m['type']!r}") from None
    extra = set(m) - {"type", "translation_m", "rpy_deg", "T_body_mount"}
    if extra:
        raise RigError(source, path, f"unknown mount fields {sorted(extra)}")
    if "T_body_mount" in m:
        T = np.asarray(m["T_body_mount"], np.float64)
        if T.shape != (4, 4) or not np.allclose(T[:3, :3] @ T[:3, :3].T, np.eye(3), atol=1e-9):
            raise RigError(source, f"{path}.T_body_mount", "must be a rigid 4x4 transform")
        return Mount(st, T)
    return Mount(st, mount_transform(m.get("translation_m", [0, 0, 0]), m.get("rpy_deg", [0, 0, 0])))


def _validate(model_cls: type[_Model], fields: Any, path: str, source: str) -> Any:
    try:
        return model_cls.model_validate(fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise RigError(source, f"{path}.{loc}" if loc else path, pydantic_reason(err)) from None


# --- overrides -------------------------------------------------------------

_LENS_ALIASES = ("lens.distortion", "lens.k1", "lens.k2")


def parse_set_args(items: Iterable[str]) -> dict[str, Any]:
    """``["a.b=1", "c=global"]`` (CLI ``--set``) → ``{"a.b": 1, "c": "global"}``."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise RigError("--set", item, "expected key=value")
        out[key.strip()] = _parse_value(raw.strip())
    return out


def _parse_value(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def _has_field(model: _Model, field_path: str) -> bool:
    if field_path in _LENS_ALIASES:
        return isinstance(model, CameraModel)
    head, _, rest = field_path.partition(".")
    if head not in type(model).model_fields:
        return False
    if not rest:
        return True
    sub = getattr(model, head)
    return isinstance(sub, _Model) and _has_field(sub, rest)


def _targets(rig: Rig, key: str) -> tuple[list[str], str]:
    """Sensor names a key selects and the field path left over (see module doc)."""
    head, _, rest = key.partition(".")
    if rest and head in rig.sensors:
        return [head], rest
    if rest and head in {t.value for t in SensorType}:
        return rig.names(head), rest
    if rest and head == "*":
        return list(rig.sensors), rest
    return list(rig.sensors), key


def _updated(model: _Model, field_path: str, value: Any) -> dict[str, Any]:
    data = model.model_dump()
    if isinstance(model, LidarModel) and "points_per_second" not in model.model_fields_set:
        del data["points_per_second"]  # derived: re-derive it from the new values
    if field_path == "lens.distortion":
        scale = float(value)
        # "+ 0.0" keeps a zeroed coefficient +0.0 rather than -0.0 in the settings.
        data["distortion_k1"] = data["distortion_k1"] * scale + 0.0
        data["distortion_k2"] = data["distortion_k2"] * scale + 0.0
        return data
    if field_path in ("lens.k1", "lens.k2"):
        data[f"distortion_{field_path[-2:]}"] = value
        return data
    node = data
    parts = field_path.split(".")
    for p in parts[:-1]:
        node = node[p]
    node[parts[-1]] = value
    return data


def apply_overrides(rig: Rig, overrides: Mapping[str, Any] | Iterable[str]) -> tuple[Rig, dict[str, Any]]:
    """Apply ``--set`` style overrides in key order given; return the new rig and the resolved settings.

    The resolved dict holds each override with the sensors it reached and
    the full settings of every sensor afterwards, so ``render.json`` states
    exactly what was rendered.
    """
    items = overrides.items() if isinstance(overrides, Mapping) else parse_set_args(overrides).items()
    sensors = dict(rig.sensors)
    applied = []
    for key, raw in items:
        value = _parse_value(raw)
        names, field_path = _targets(rig, key)
        names = [n for n in names if _has_field(sensors[n], field_path)]
        if not names:
            raise RigError("--set", key, "matches no sensor field")
        for n in names:
            sensors[n] = _validate(type(sensors[n]), _updated(sensors[n], field_path, value), f"sensors.{n}", "--set")
        applied.append({"key": key, "value": value, "sensors": names})
    new_rig = replace(rig, sensors=sensors)
    return new_rig, {"overrides": applied, "sensors": new_rig.settings()}
