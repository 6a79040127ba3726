"""The atmosphere between a LiDAR and what it hits: rain extinction and range spread.

Model (per beam that hits a surface at range r, metres):

* **Two-way extinction.** The pulse crosses the rain twice, so the returned
  power is scaled by the two-way transmittance ``T² = exp(−2·α·r)``. A
  return is kept with probability ``T²`` (a uniform draw per beam, its own
  third draw after the LiDAR's noise and dropout draws) and its intensity
  is scaled by ``T²``.
* **Extinction coefficient** ``α = a·R^b`` (1/m) with ``R`` the rain rate
  in mm/h. Why this form: rain drops (0.1–5 mm) are thousands of times the
  near-infrared wavelength, so each removes light in proportion to its
  cross-section, and summing cross-sections over an exponential drop-size
  distribution whose slope falls with the rain rate gives a power law in R
  with exponent ≈ 0.6. Why ``a`` is below the geometric-optics value
  (≈ 4e-4 at b = 0.63): light scattered forward by a drop stays inside a
  LiDAR's beam and receiver cone, and a detector with link margin still
  triggers on a weakened pulse, so the *detection* loss is smaller than the
  power loss of a narrow collimated beam. With ``a = 1e-4``, ``b = 0.63``:
  10 mm/h (moderate rain) gives α ≈ 4.3e-4 /m — about 4 % of returns lost
  at 50 m and 10 % at 120 m; 50 mm/h (downpour) about 11 % and 25 %.
* **Range spread.** Drops near the beam's path return weak early echoes
  that blend into the surface echo and spread the range estimate; modelled
  as extra Gaussian noise ``σ_rain = c·R`` (m) added in quadrature to the
  LiDAR's own ``range_noise_m``, drawn from the same per-beam normal, with
  ``c = 1e-3`` m per mm/h (10 mm/h: 1 cm).

With ``rain_rate_mmph = 0`` nothing is drawn and nothing changes: the
LiDAR's output is bitwise its dry output. With the sensors' noise off
(``--set noise=off``, :mod:`simready.sensors_hw.models`) the extinction
stays (intensity × T², a deterministic effect) but the range spread and
the random loss go: a return is kept where T² > ½.

Override from the command line like a rig field: ``--set
atmosphere.rain_rate_mmph=0`` turns rain off (recorded in render.json).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from simready.sensors_hw.models import RigError

#: α = EXTINCTION_A_PER_M · R ** EXTINCTION_B (1/m, R in mm/h); see the module doc.
EXTINCTION_A_PER_M = 1.0e-4
EXTINCTION_B = 0.63
#: σ_rain = RANGE_SPREAD_M_PER_MMPH · R (metres), added in quadrature to the LiDAR's range noise.
RANGE_SPREAD_M_PER_MMPH = 1.0e-3
#: Override keys start with this (``atmosphere.<field>``).
OVERRIDE_PREFIX = "atmosphere."


@dataclass(frozen=True)
class Atmosphere:
    """Weather along the LiDAR's beams.

    Attributes:
        rain_rate_mmph: rain rate, mm/h (0: clear air, the sensors' dry behaviour).
    """

    rain_rate_mmph: float = 0.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.rain_rate_mmph) and self.rain_rate_mmph >= 0.0):
            raise RigError("atmosphere", "rain_rate_mmph", f"must be a finite rate >= 0 mm/h, got {self.rain_rate_mmph!r}")

    @classmethod
    def from_environment(cls, env: Mapping[str, Any] | None) -> "Atmosphere":
        """From a manifest ``environment`` block: its ``rain_rate_mmph`` (0 when absent)."""
        return cls(float(dict(env or {}).get("rain_rate_mmph") or 0.0))

    @property
    def clear(self) -> bool:
        return self.rain_rate_mmph == 0.0

    @property
    def extinction_per_m(self) -> float:
        """α, 1/m."""
        return 0.0 if self.clear else EXTINCTION_A_PER_M * self.rain_rate_mmph ** EXTINCTION_B

    @property
    def range_spread_m(self) -> float:
        """σ_rain, metres."""
        return RANGE_SPREAD_M_PER_MMPH * self.rain_rate_mmph

    def to_json(self) -> dict[str, Any]:
        return {"rain_rate_mmph": self.rain_rate_mmph, "extinction_per_m": self.extinction_per_m,
                "range_spread_m": self.range_spread_m,
                "model": "keep a return with probability exp(-2*alpha*r), intensity * exp(-2*alpha*r); "
                         "alpha = a * R**b; range noise sqrt(sigma**2 + (c*R)**2)",
                "constants": {"a_per_m": EXTINCTION_A_PER_M, "b": EXTINCTION_B,
                              "c_m_per_mmph": RANGE_SPREAD_M_PER_MMPH}}


def split_overrides(overrides: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(rig overrides, atmosphere overrides)``: keys ``atmosphere.<field>`` go to the atmosphere."""
    rig = {k: v for k, v in overrides.items() if not k.startswith(OVERRIDE_PREFIX)}
    atmo = {k: v for k, v in overrides.items() if k.startswith(OVERRIDE_PREFIX)}
    return rig, atmo


def apply_atmosphere_overrides(atmosphere: Atmosphere, overrides: Mapping[str, Any]
                               ) -> tuple[Atmosphere, list[dict[str, Any]]]:
    """Apply ``atmosphere.<field>=value`` overrides; returns the new atmosphere and the applied entries
    (as :func:`~simready.sensors_hw.models.apply_overrides` lists them, ``sensors`` naming ``atmosphere``)."""
    applied = []
    for key, value in overrides.items():
        name = key[len(OVERRIDE_PREFIX):]
        if name not in Atmosphere.__dataclass_fields__:
            raise RigError("--set", key, f"unknown atmosphere field; expected one of "
                                         f"{', '.join(OVERRIDE_PREFIX + f for f in Atmosphere.__dataclass_fields__)}")
        try:
            atmosphere = replace(atmosphere, **{name: float(value)})
        except (TypeError, ValueError):
            raise RigError("--set", key, f"expected a number, got {value!r}") from None
        applied.append({"key": key, "value": value, "sensors": ["atmosphere"]})
    return atmosphere, applied
