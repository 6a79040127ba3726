"""Scene illumination for the RGB pass: the sun, the sky and ambient light, the ego's headlights, and their
presets from a manifest's ``environment`` block.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray


def _rgb(values: Iterable[float]) -> tuple[float, float, float]:
    r, g, b = values
    return r, g, b


@dataclass(frozen=True)
class Lighting:
    """Scene illumination for the RGB pass (linear RGB radiometric units, arbitrary scale).

    Attributes:
        sun_elevation_deg: above the horizon; ≤ 0 means no direct sun.
        sun_azimuth_deg: compass bearing of the sun, clockwise from north (+y) — 90 = east (+x).
        sun_rgb: irradiance of direct sun on a surface facing it.
        ambient_rgb: uniform sky/bounce light, no occlusion.
        sky_rgb: radiance of pixels that see nothing.
        headlights: whether the ego's low beams are on.
        headlight_positions_body_m: lamp positions in the ego body frame.
        headlight_intensity: radiant intensity per lamp (irradiance at 1 m on axis).
        headlight_half_angle_deg: cone half angle; light falls smoothly to 0 at the edge.
        headlight_pitch_deg: lamp axis below the body x axis.
    """

    sun_elevation_deg: float = 50.0
    sun_azimuth_deg: float = 135.0
    sun_rgb: tuple[float, float, float] = (1.6, 1.55, 1.45)
    ambient_rgb: tuple[float, float, float] = (0.30, 0.33, 0.38)
    sky_rgb: tuple[float, float, float] = (0.45, 0.6, 0.9)
    headlights: bool = False
    headlight_positions_body_m: tuple[tuple[float, float, float], ...] = ((2.3, 0.75, 0.7), (2.3, -0.75, 0.7))
    headlight_intensity: float = 60.0
    headlight_half_angle_deg: float = 25.0
    headlight_pitch_deg: float = 2.0

    #: Sun elevation, degrees, below which the presets switch the headlights on.
    HEADLIGHTS_BELOW_DEG = 8.0

    @classmethod
    def from_environment(cls, env: Mapping[str, Any] | None) -> "Lighting":
        """Lighting from a manifest ``environment`` block.

        Reads ``sun_elevation_deg`` / ``sun_azimuth_deg`` when given, else a
        preset from ``illumination`` (day | dusk | night; default day), and
        ``headlights`` (default: on when the sun is below 8°). Ambient and
        sky scale with the sun's height so night is dark, not grey.
        """
        env = dict(env or {})
        preset = {"day": 50.0, "dusk": 3.0, "night": -20.0}
        illum = str(env.get("illumination", "day"))
        if illum not in preset and "sun_elevation_deg" not in env:
            raise ValueError(f"unknown illumination {illum!r}; expected one of {sorted(preset)}")
        el = float(env.get("sun_elevation_deg", preset.get(illum, 50.0)))
        az = float(env.get("sun_azimuth_deg", 135.0))
        day = float(np.clip(math.sin(math.radians(el + 6.0)) / math.sin(math.radians(56.0)), 0.0, 1.0))
        sun = max(0.0, math.sin(math.radians(el))) ** 0.5
        warm = (1.0, 0.85 + 0.15 * day, 0.7 + 0.3 * day)
        return cls(
            sun_elevation_deg=el,
            sun_azimuth_deg=az,
            sun_rgb=_rgb(1.7 * sun * c for c in warm),
            ambient_rgb=_rgb(0.01 + 0.3 * day * c for c in (1.0, 1.1, 1.27)),
            sky_rgb=_rgb(0.005 + day * c for c in (0.45, 0.6, 0.9)),
            headlights=bool(env.get("headlights", el < cls.HEADLIGHTS_BELOW_DEG)),
        )

    def sun_direction_world(self) -> NDArray[np.float64]:
        """Unit vector toward the sun (world: x east, y north, z up)."""
        el, az = math.radians(self.sun_elevation_deg), math.radians(self.sun_azimuth_deg)
        return np.array([math.cos(el) * math.sin(az), math.cos(el) * math.cos(az), math.sin(el)])
