"""Static instances (poses, repeats), the ego and its sensor rig: mounts and camera, LiDAR and radar settings."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, Union

from pydantic import Field, PrivateAttr, model_validator

from simready.world.frames import Mat4, make_transform, mount_transform, rot_z, rotation_from_rpy
from simready.world.template_model.base import (MAX_REPEAT_COUNT, AssetRef, Coordinate, ImageSide, Model, Name,
                                                NonNegReal, OptionalFacts, PathName, Point2, PositiveInt, PositiveReal,
                                                Real, Vec3)


class Pose(OptionalFacts):
    """Pose of an instance's body origin: metres, yaw in degrees (authored).

    ``pitch_deg`` / ``roll_deg`` (degrees, intrinsic z-y'-x'': yaw, then pitch
    about the body's y, then roll about its x; ``R = Rz(yaw) Ry(pitch) Rx(roll)``)
    tilt a tile onto a sloped road where a map gives heights (simready.world.street);
    absent (level) everywhere else, and left out of the dump while unset, so a
    level pose hashes as before they existed.
    """

    _OMIT = ("pitch_deg", "roll_deg")

    x: Coordinate
    y: Coordinate
    z: Coordinate = 0.0
    yaw_deg: Real = 0.0
    pitch_deg: Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-89.0, le=89.0)] | None = None
    roll_deg: Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-89.0, le=89.0)] | None = None

    @property
    def yaw_rad(self) -> float:
        return math.radians(self.yaw_deg)

    @property
    def level(self) -> bool:
        """No pitch and no roll (every hand-written instance)."""
        return not self.pitch_deg and not self.roll_deg

    def rotation(self) -> Any:
        """``R_world_body`` (3×3)."""
        if self.level:
            return rot_z(self.yaw_rad)
        return rotation_from_rpy(math.radians(self.roll_deg or 0.0), math.radians(self.pitch_deg or 0.0), self.yaw_rad)

    def matrix(self) -> Mat4:
        """``T_world_body`` (4×4)."""
        return make_transform(self.rotation(), [self.x, self.y, self.z])


class Repeat(Model):
    """``count`` copies, the k-th shifted by ``k * step_m`` (world dx, dy metres)."""

    count: Annotated[int, Field(strict=True, gt=0, le=MAX_REPEAT_COUNT)]
    step_m: Point2


class Instance(Model):
    """A static instance of a certified asset; ``repeat`` is expanded at parse time."""

    name: Name
    asset: AssetRef
    pose: Pose
    repeat: Repeat | None = Field(default=None, exclude=True)
    _authored_index: int = PrivateAttr(-1)


class Ego(Model):
    """The ego vehicle: asset, lane route (successor chain), start and cruise speed."""

    asset: AssetRef
    route: tuple[Name, ...] = Field(min_length=1)
    start_s_m: NonNegReal
    cruise_speed_mps: PositiveReal


SensorKind = Literal["camera", "lidar", "radar"]


class Mount(Model):
    """``T_body_mount`` from config: translation (m) and roll/pitch/yaw (deg) on the ego body."""

    type: SensorKind
    parent: Literal["ego"]
    translation_m: Vec3
    rpy_deg: Vec3 = (0.0, 0.0, 0.0)

    def matrix(self) -> Mat4:
        return mount_transform(self.translation_m, self.rpy_deg)


def _check_phase(phase_s: float, rate_hz: float) -> None:
    if phase_s >= 1.0 / rate_hz:
        raise ValueError(f"phase_s {phase_s} must be below the period 1/rate = {1.0 / rate_hz:.6g} s")


def camera_readout_s(height_px: int, line_time_s: float, shutter: str) -> float:
    """A camera frame's readout (s): the time from the first row's sample to the last row's.

    Row r (0 at the top) of a rolling shutter is sampled at
    ``t0 + r·line_time_s``, so the readout is ``(height_px − 1)·line_time_s``;
    a global shutter samples every row at ``t0`` (0). The one definition of
    the readout: the scenario view's camera clock (:func:`simready.world.rig_view.sensor_clocks`,
    hashed with the world), the template's readout-fits-the-period check and
    the renderer's schedule (:attr:`simready.sensors_hw.models.CameraModel.readout_s`)
    all call this, so acceptance and rendering count the same frames.
    """
    return (height_px - 1) * line_time_s if shutter == "rolling" else 0.0


class CameraSettings(Model):
    """Pinhole camera. ``line_time_s`` is the row-to-row readout delay (rolling), 0 for global.

    The readout, first row's sample to last row's, is
    (height_px − 1)·line_time_s (:func:`camera_readout_s`);
    a rolling shutter needs line_time_s > 0 and a readout within one period.
    """

    type: Literal["camera"]
    mount: Name
    width_px: ImageSide
    height_px: ImageSide
    hfov_deg: Annotated[float, Field(strict=True, gt=0.0, lt=180.0)]
    near_m: PositiveReal
    far_m: PositiveReal
    rate_hz: PositiveReal
    phase_s: NonNegReal
    shutter: Literal["rolling", "global"]
    line_time_s: NonNegReal
    distortion_k1: Real

    @model_validator(mode="after")
    def _consistent(self) -> CameraSettings:
        if self.near_m >= self.far_m:
            raise ValueError(f"near_m {self.near_m} must be below far_m {self.far_m}")
        _check_phase(self.phase_s, self.rate_hz)
        readout_s = camera_readout_s(self.height_px, self.line_time_s, self.shutter)
        if self.shutter == "global" and self.line_time_s != 0.0:
            raise ValueError("a global shutter reads every row at once: line_time_s must be 0")
        if self.shutter == "rolling" and not (self.line_time_s > 0.0 and readout_s <= 1.0 / self.rate_hz):
            raise ValueError(f"rolling readout (height_px - 1)*line_time_s = {readout_s:.6g} s needs line_time_s > 0 "
                             f"and at most 1/rate_hz = {1.0 / self.rate_hz:.6g} s")
        return self


class LidarSettings(Model):
    """Spinning LiDAR: ``channels`` beams over ``vertical_fov_deg = [lo, hi]``, one turn per 1/rotation_hz."""

    type: Literal["lidar"]
    mount: Name
    channels: PositiveInt
    vertical_fov_deg: tuple[Real, Real]
    rotation_hz: PositiveReal
    azimuth_steps: PositiveInt
    max_range_m: PositiveReal
    phase_s: NonNegReal

    @model_validator(mode="after")
    def _consistent(self) -> LidarSettings:
        lo, hi = self.vertical_fov_deg
        if not -90.0 <= lo < hi <= 90.0:
            raise ValueError(f"vertical_fov_deg must be [lo, hi] with -90 <= lo < hi <= 90, got {[lo, hi]}")
        _check_phase(self.phase_s, self.rotation_hz)
        return self


class RadarSettings(Model):
    """Radar scan of ``hfov_deg`` × ``vfov_deg`` at ``rate_hz``."""

    type: Literal["radar"]
    mount: Name
    rate_hz: PositiveReal
    phase_s: NonNegReal
    hfov_deg: Annotated[float, Field(strict=True, gt=0.0, le=360.0)]
    vfov_deg: Annotated[float, Field(strict=True, gt=0.0, le=180.0)]
    max_range_m: PositiveReal

    @model_validator(mode="after")
    def _consistent(self) -> RadarSettings:
        _check_phase(self.phase_s, self.rate_hz)
        return self


Sensor = Annotated[Union[CameraSettings, LidarSettings, RadarSettings], Field(discriminator="type")]


class SensorRig(Model):
    """Mounts (transforms on the ego body) and the sensors that sit on them."""

    mounts: dict[Name, Mount]
    sensors: dict[PathName, Sensor]
