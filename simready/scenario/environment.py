"""Correlated environment (illumination and weather), shared by every intent.

Conditions come first, physical values follow from them, never independently:

* **illumination** sets the sun: day is a sun at least 10° up (the
  manifest calls day ≥ 6°), dusk a sun within ±5.5° of the horizon (civil
  twilight is ±6°) on the western sky, night a sun below −7°; headlights are
  on exactly when it is not day.
* **weather** sets one latent road **wetness** (dry 0, wet 0.2–0.8, rain
  from the rain rate), and wetness sets *both* road friction (a dry
  coefficient times ``1 - WET_FRICTION_LOSS · wetness``) and road
  reflectance (``DRY_REFLECTANCE + WET_REFLECTANCE_GAIN · wetness``).

The baseline draws the same nine values independently over their full
ranges — which is exactly what the manifest's consistency checks reject.
"""

from __future__ import annotations

from typing import Any

from simready.scenario.coverage import Cell
from simready.scenario.draws import Draws
from simready.scenario.realization import Realization
from simready.world.template import WorldTemplate

DAY_SUN_ELEVATION_DEG = (10.0, 60.0)
DUSK_SUN_ELEVATION_DEG = (-5.5, 5.5)
NIGHT_SUN_ELEVATION_DEG = (-30.0, -7.0)
DUSK_SUN_AZIMUTH_DEG = (250.0, 290.0)  # sunset: the western sky
DAY_SUN_AZIMUTH_DEG = (90.0, 270.0)
DRY_FRICTION = (0.85, 1.0)
WET_FRICTION_LOSS = 0.45
DRY_REFLECTANCE = 0.08
WET_REFLECTANCE_GAIN = 0.6
WET_WETNESS = (0.2, 0.8)
RAIN_RATE_MMPH = (1.0, 25.0)
RAIN_BASE_WETNESS = 0.6


def conditions(draws: Draws, r: Realization, template: WorldTemplate, cell: Cell | None) -> tuple[str, str]:
    """Illumination and weather: the cell's when it declares them, else drawn from the template's controls."""
    g = draws.group("conditions", "environment")
    out = []
    for dim, options in (("illumination", template.environment_controls.illumination),
                         ("weather", template.environment_controls.weather)):
        value = cell.value(dim) if cell is not None else None
        if value is not None:
            r.set(f"env.{dim}", value, source="cell", parents=[f"cell.{dim}"], rule=f"the coverage cell's {dim}")
        else:
            value = g.choice(dim, sorted(options))
            r.set(f"env.{dim}", value, source="environment", rule=f"uniform over the template's {dim} controls")
        out.append(value)
    return out[0], out[1]


def correlated_environment(draws: Draws, r: Realization, illumination: str, weather: str) -> dict[str, Any]:
    """The manifest ``environment`` block, every value derived from (illumination, weather)."""
    g = draws.group("environment", "environment")
    lo, hi = {"day": DAY_SUN_ELEVATION_DEG, "dusk": DUSK_SUN_ELEVATION_DEG, "night": NIGHT_SUN_ELEVATION_DEG}[illumination]
    elevation = r.set("env.sun_elevation_deg", round(g.uniform("sun_elevation", lo, hi), 3), source="environment",
                      parents=["env.illumination"], rule=f"uniform in [{lo}, {hi}] deg for {illumination}")
    az_lo, az_hi = {"day": DAY_SUN_AZIMUTH_DEG, "dusk": DUSK_SUN_AZIMUTH_DEG, "night": (0.0, 360.0)}[illumination]
    azimuth = r.set("env.sun_azimuth_deg", round(g.uniform("sun_azimuth", az_lo, az_hi), 3), source="environment",
                    parents=["env.illumination"], rule=f"uniform in [{az_lo}, {az_hi}] deg for {illumination}")
    headlights = r.set("env.headlights", illumination != "day", source="derived", parents=["env.illumination"],
                       rule="headlights on unless it is day")
    rain = 0.0
    if weather == "dry":
        wetness = 0.0
        rule = "a dry road has wetness 0"
    elif weather == "wet":
        wetness = g.uniform("wetness", *WET_WETNESS)
        rule = f"uniform in {list(WET_WETNESS)} for a wet road"
    else:
        rain = r.set("env.rain_rate_mmph", round(g.uniform("rain_rate", *RAIN_RATE_MMPH), 3), source="environment",
                     parents=["env.weather"], rule=f"uniform in {list(RAIN_RATE_MMPH)} mm/h for rain")
        wetness = min(1.0, RAIN_BASE_WETNESS + (1 - RAIN_BASE_WETNESS) * rain / RAIN_RATE_MMPH[1])
        rule = f"{RAIN_BASE_WETNESS} + {1 - RAIN_BASE_WETNESS:.1f} * rain_rate / {RAIN_RATE_MMPH[1]}"
    wetness = r.set("env.wetness", round(wetness, 4), source="environment" if weather == "wet" else "derived",
                    parents=["env.weather"] + (["env.rain_rate_mmph"] if weather == "rain" else []), rule=rule)
    dry_mu = g.uniform("dry_friction", *DRY_FRICTION)
    friction = r.set("env.road_friction", round(dry_mu * (1 - WET_FRICTION_LOSS * wetness), 4), source="environment",
                     parents=["env.wetness"],
                     rule=f"dry coefficient uniform in {list(DRY_FRICTION)} x (1 - {WET_FRICTION_LOSS} * wetness)")
    reflectance = r.set("env.road_reflectance", round(DRY_REFLECTANCE + WET_REFLECTANCE_GAIN * wetness, 4),
                        source="derived", parents=["env.wetness"],
                        rule=f"{DRY_REFLECTANCE} + {WET_REFLECTANCE_GAIN} * wetness")
    if weather != "rain":
        r.set("env.rain_rate_mmph", 0.0, source="derived", parents=["env.weather"], rule=f"no rain when {weather}")
    return {"illumination": illumination, "sun_elevation_deg": elevation, "sun_azimuth_deg": azimuth,
            "headlights": headlights, "weather": weather, "wetness": wetness, "road_friction": friction,
            "road_reflectance": reflectance, "rain_rate_mmph": rain}


def independent_environment(draws: Draws, r: Realization, template: WorldTemplate) -> dict[str, Any]:
    """The baseline: each of the same variables drawn on its own over its full range."""
    g = draws.group("environment", "environment")
    env = {
        "illumination": g.choice("illumination", sorted(template.environment_controls.illumination)),
        "sun_elevation_deg": round(g.uniform("sun_elevation", -30.0, 60.0), 3),
        "sun_azimuth_deg": round(g.uniform("sun_azimuth", 0.0, 360.0), 3),
        "headlights": g.unit("headlights") < 0.5,
        "weather": g.choice("weather", sorted(template.environment_controls.weather)),
        "wetness": round(g.uniform("wetness", 0.0, 1.0), 4),
        "road_friction": round(g.uniform("road_friction", 0.3, 1.0), 4),
        "road_reflectance": round(g.uniform("road_reflectance", 0.0, 1.0), 4),
        "rain_rate_mmph": round(g.uniform("rain_rate", 0.0, 25.0), 3),
    }
    for key, value in env.items():
        r.set(f"env.{key}", value, source="environment", rule="independent draw over the full range (baseline)")
    return env
