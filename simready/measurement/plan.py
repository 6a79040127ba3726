"""The plan of one observation run, fixed before anything is rendered: the rig as observed (its ``--set``
overrides and the atmosphere's), which sensors are observed, the time window, every sensor sample in it in time
order, and each sample's noise generator.

Randomness: each sample's noise comes from its own generator, seeded from the manifest's ``sensor/<name>``
stream and the sample's tick (``SeedSequence(seed, spawn_key=(tick,))``), so one frame re-renders alike
whatever else is rendered.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from simready.measurement.options import ObserveOptions
from simready.scenario.streams import StreamSet
from simready.sensors_hw.atmosphere import Atmosphere, apply_atmosphere_overrides, split_overrides
from simready.sensors_hw.models import Rig, apply_overrides, parse_set_args
from simready.sensors_hw.schedule import rig_schedules
from simready.sensors_hw.trace_input import TraceInput
from simready.world.rig_view import SensorSchedule


def resolve_overrides(rig: Rig, atmosphere: Atmosphere, overrides: Mapping[str, Any] | Iterable[str]
                      ) -> tuple[Rig, dict[str, Any], Atmosphere]:
    """Rig overrides applied to the rig, ``atmosphere.*`` ones to the atmosphere; the resolved settings list
    both (rig first, each in the order given)."""
    rig_over, atmo_over = split_overrides(overrides if isinstance(overrides, Mapping) else parse_set_args(overrides))
    rig, resolved = apply_overrides(rig, rig_over)
    atmosphere, applied = apply_atmosphere_overrides(atmosphere, atmo_over)
    return rig, {**resolved, "overrides": resolved["overrides"] + applied}, atmosphere


def sensor_seeds(sample_id: str, streams: Mapping[str, int] | None, sensors: Iterable[str]) -> dict[str, int]:
    """One seed per sensor under the sample's ``sensor`` stream (a redrawn stream seed is honoured)."""
    base = StreamSet.from_seeds(sample_id, dict(streams or {})).seed("sensor")
    return {n: int(np.random.SeedSequence(base, spawn_key=(zlib.crc32(n.encode()),)).generate_state(1, np.uint64)[0]
                   >> np.uint64(1)) for n in sensors}


def sensor_rng(seed: int, tick: int) -> np.random.Generator:
    """The generator of one sample of one sensor: its stream seed and its own tick."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(int(tick),))))


@dataclass(frozen=True)
class SensorSample:
    """One sample of one sensor: its start time (s), the sensor type's rank at equal times, the sensor, its tick."""

    t_s: float
    order: int
    sensor: str
    tick: int


def sensor_samples(rig: Rig, schedules: Mapping[str, SensorSchedule], t_lo: float, t_hi: float,
                   sensors: Iterable[str]) -> list[SensorSample]:
    """Every sample of the observed sensors whose window lies in [t_lo, t_hi], in time order."""
    order = {"camera": 0, "lidar": 1, "radar": 2}
    out = []
    for name in sensors:
        sch = schedules[name]
        for k, t in zip(sch.ticks.tolist(), sch.times_s.tolist()):
            if t >= t_lo - 1e-12 and t + sch.duration_s <= t_hi + 1e-12:
                out.append(SensorSample(t, order[rig.mounts[name].type.value], name, k))
    return sorted(out, key=lambda s: (s.t_s, s.order, s.sensor, s.tick))


@dataclass(frozen=True)
class Plan:
    """What a run observes: each sensor's type (``kinds``), the observed sensors in the rig's order and the cameras
    among them, the window ``[t_lo, t_hi]`` (s), every sensor's schedule up to ``t_hi`` and the samples in the
    window in time order."""

    kinds: dict[str, str]
    observed: list[str]
    cameras: list[str]
    t_lo: float
    t_hi: float
    schedules: dict[str, SensorSchedule]
    samples: list[SensorSample]

    @classmethod
    def of(cls, rig: Rig, trace: TraceInput, options: ObserveOptions) -> Plan:
        """The sensors the passes ask for (a camera for any camera pass or the truth), in the trace's clip cut to
        ``options.from_s`` / ``until_s``."""
        passes = options.passes
        kinds = {n: rig.mounts[n].type.value for n in rig.sensors}
        observed = [n for n in rig.sensors if (kinds[n] == "camera" and (options.camera_passes or "truth" in passes))
                    or kinds[n] in passes]
        cameras = [n for n in observed if kinds[n] == "camera"]
        t_lo = max(0.0, trace.t_start_s, options.from_s or 0.0)
        t_hi = min(trace.clip_s, trace.t_end_s) if options.until_s is None else min(options.until_s, trace.t_end_s)
        schedules = rig_schedules(rig, t_hi)
        samples = sensor_samples(rig, schedules, t_lo, t_hi, observed)
        return cls(kinds, observed, cameras, t_lo, t_hi, schedules, samples)
