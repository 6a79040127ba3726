"""Validity-gate benchmark (issue 6: the gate on one sample, without re-running sensors, ≤ 50 ms).

``python -m simready.bench.gate`` prints, on the synthetic street scene of
:mod:`simready.testing.synthetic` (20 s at dt = 0.02 s: 1001 ticks per actor,
a 20 Hz camera and a 10 Hz LiDAR):

* ``validate_scenario`` on evidence in memory, with a baseline, sensor
  detections and a frozen reference profile, for 3 and 6 actors, with the
  time per check;
* the same with the reference pool given as a table (profile rebuilt per sample);
* a sample folder read from disk (``evidence_from_sample_dir``: manifest,
  trace Parquet, observations with 20 of its 200 ASCII PLY sweeps) plus the gate;
* the Great Expectations suites (``trajectories`` per sample, ``validity_reports``
  over 24 reports), after GX's one-off import.

Figures are medians of repeated runs on shared cores: read them as orders of magnitude.
"""

from __future__ import annotations

import dataclasses
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from simready.testing.synthetic import street_evidence, write_street_sample
from simready.validity import expectations as gx_suites
from simready.validity import gate
from simready.validity.features import ReferenceProfile

TARGET_MS = 50.0


def _median_ms(fn: Callable[[], object], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e3


def _per_check_ms(ev: gate.ScenarioEvidence, repeats: int) -> dict[str, float]:
    inputs = gate.GateInput.of(ev)
    times = {"prepare": _median_ms(lambda: gate.GateInput.of(ev), repeats)}
    for c in gate.CHECKS:
        times[c.name] = _median_ms(lambda c=c: c.check(inputs), repeats)
    return times


def run(repeats: int = 15) -> None:
    for extra in (0, 3):
        ev = street_evidence(extra_vehicles=extra)
        pool = ev.reference_pool
        frozen = dataclasses.replace(ev, reference_pool=ReferenceProfile.from_pool(pool))
        gate.validate_scenario(frozen)
        t = _median_ms(lambda: gate.validate_scenario(frozen), repeats)
        t_pool = _median_ms(lambda: gate.validate_scenario(ev), repeats)
        n_actors = ev.ticks["actor_id"].nunique()
        verdict = "ok" if t <= TARGET_MS else "OVER TARGET"
        print(f"gate         {n_actors} actors × {len(ev.ticks) // n_actors} ticks, sensor + baseline + frozen pool: "
              f"{t:7.1f} ms/sample  (target ≤ {TARGET_MS:.0f} ms: {verdict});  pool as table: {t_pool:7.1f} ms")
        parts = _per_check_ms(frozen, repeats)
        print("               " + "  ".join(f"{k} {v:.1f}" for k, v in parts.items()) + "  (ms)")

    with tempfile.TemporaryDirectory() as tmp:
        sample = write_street_sample(Path(tmp) / "street-000001")
        load = _median_ms(lambda: gate.evidence_from_sample_dir(sample), 5)
        both = _median_ms(lambda: gate.validate_scenario(gate.evidence_from_sample_dir(sample)), 5)
        print(f"gate         from a sample folder (read manifest + trace + observations, then gate): {both:7.1f} ms/sample"
              f"  (of which reading {load:.1f} ms)")


    ev = street_evidence(with_pool=False)
    t0 = time.perf_counter()
    frame = gx_suites.trajectory_frame(ev.ticks, ev.actor_classes)
    gx_suites.run_suite("trajectories", frame)
    first = time.perf_counter() - t0
    traj = _median_ms(lambda: gx_suites.run_suite("trajectories", frame), 5)
    reports = [gate.validate_scenario(dataclasses.replace(ev, sample_id=f"s{i}")) for i in range(24)]
    vframe = gx_suites.validity_frame(reports)
    gx_suites.run_suite("validity_reports", vframe)
    rep = _median_ms(lambda: gx_suites.run_suite("validity_reports", vframe), 5)
    print(f"expectations first suite (GX import + context): {first:5.2f} s;  trajectories per sample: {traj:6.1f} ms;"
          f"  validity_reports × 24: {rep:6.1f} ms")


if __name__ == "__main__":
    run()
