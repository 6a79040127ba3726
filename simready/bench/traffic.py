"""``make bench`` section ``traffic``: background traffic in kinematic-v1 (issue 31: ≤ 1 ms per agent per simulated s).

The scenario is a lead-vehicle sample on the imported ``city_crossing`` map
with 40 background vehicles per lane km (about 50 vehicles), rolled out for
its clip and warm-up (12 s + 2 s) at dt = 20 ms, beside the same sample without
traffic, and again with background pedestrians and cyclists besides
(:data:`PEDESTRIANS` per 100 m of sidewalk, :data:`CYCLISTS` per km). Printed: the whole rollout per agent per simulated second, the
traffic's marginal cost (with minus without, over the background vehicles),
and the floor under it: the car-following arithmetic alone (the IDM and the
integration for as many agents and ticks, vectorized, no perception, no
junctions, no recording). SUMO's figure for the same street (libsumo 1.28,
measured once when choosing, see ``docs/traffic.md``) is printed beside it.
Then dynamic-v1: the same street over a 20 s clip beside the ``sim``
section's 10-actor scenario (issue 31: ≤ 3× it), measured in alternation in
the same run; background vehicles away from the ego and the scenario's
vehicles are driven kinematically there (see
:mod:`simready.sim.backends.dynamic.backend`).
Medians of CPU time on a shared machine: orders of magnitude.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from simready.bench.sim import _setup
from simready.catalog.catalog import ensure_catalog
from simready.scenario.generator import generate, resolve_template
from simready.scenario.traffic import BACKGROUND_TAG, TrafficSpec
from simready.sim.controllers import longitudinal
from simready.sim.run import run_simulation

DENSITY = 40.0
#: Background pedestrians per 100 m of sidewalk and cyclists per km of kerbside lane of the all-kinds street.
PEDESTRIANS, CYCLISTS = 10.0, 20.0
TARGET_MS = 1.0
#: libsumo 1.28 on city_crossing.xodr through netconvert, 40 vehicles, dt 20 ms (docs/traffic.md).
SUMO_MS = 0.23


def _cpu(fn: Callable[[], Any], repeats: int) -> float:
    out = []
    for _ in range(repeats):
        c0 = time.process_time()
        fn()
        out.append(time.process_time() - c0)
    return statistics.median(out)


def _idm_floor(n: int, ticks: int, dt: float) -> float:
    rng = np.random.default_rng(0)
    u = np.sort(rng.uniform(0, 1000, n))
    v = rng.uniform(5, 12, n)
    ones = np.ones(n)
    c0 = time.process_time()
    for _ in range(ticks):
        gap = np.append(np.diff(u), np.inf) - 4.7
        v_lead = np.append(v[1:], 0.0)
        a = np.minimum(longitudinal.track_speed(v, 13.0 * ones, 0.0 * ones),
                       longitudinal.idm_interaction(v, v_lead, gap, 2.0 * ones, 1.5 * ones, 1.5 * ones, 2.0 * ones))
        u, v = longitudinal.integrate(u, v, a, dt)
    return time.process_time() - c0


def run(repeats: int = 3) -> dict[str, float]:
    catalog = ensure_catalog()
    template = resolve_template("city_crossing")
    (busy,) = generate(template.id, "lead_vehicle_brakes", 1, template=template, catalog=catalog,
                       traffic=TrafficSpec(vehicles_per_lane_km=DENSITY)).manifests
    (plain,) = generate(template.id, "lead_vehicle_brakes", 1, template=template, catalog=catalog).manifests
    (mixed,) = generate(template.id, "lead_vehicle_brakes", 1, template=template, catalog=catalog,
                        traffic=TrafficSpec(vehicles_per_lane_km=DENSITY, pedestrians_per_sidewalk_100m=PEDESTRIANS,
                                            cyclists_per_km=CYCLISTS)).manifests
    # Present at start (the reserves waiting at the map's entries spawn as vehicles leave: the same count).
    n_bg = sum(BACKGROUND_TAG in a.tags and a.present_at_start for a in busy.actors)
    n_reserve = sum(BACKGROUND_TAG in a.tags and not a.present_at_start for a in busy.actors)
    sim_s = busy.clip_s + busy.warmup_s
    out: dict[str, float] = {}
    for name, m in (("traffic", busy), ("plain", plain), ("mixed", mixed)):
        result = run_simulation(m, template, backend="kinematic-v1", catalog=catalog)  # warm (compiled kernels)
        out[name] = _cpu(lambda m=m: run_simulation(m, template, backend="kinematic-v1", catalog=catalog), repeats)
        if name != "plain":
            present = result.trace.df.groupby("actor_id").present.mean()
            out[f"{name}_agent_s"] = float(present.sum()) * sim_s
    out["agent_s"] = out["traffic_agent_s"]
    whole = out["traffic"] / out["agent_s"] * 1e3
    marginal = (out["traffic"] - out["plain"]) / (n_bg * sim_s) * 1e3
    ticks = round(sim_s / busy.dt)
    floor = statistics.median(_idm_floor(n_bg, ticks, busy.dt) for _ in range(3)) / (n_bg * sim_s) * 1e3
    print(f"traffic      kinematic-v1, {n_bg} background vehicles ({DENSITY:g}/lane km, {n_reserve} reserves) on "
          "city_crossing, "
          f"{busy.clip_s:g} s + {busy.warmup_s:g} s warm-up: {out['traffic'] * 1e3:7.1f} ms CPU/run "
          f"(without traffic {out['plain'] * 1e3:6.1f} ms)")
    print(f"traffic      {whole:6.3f} ms per present agent per simulated s (whole rollout), marginal "
          f"{marginal:6.3f} ms per background vehicle per simulated s (target ≤ {TARGET_MS:g} ms); floor: the IDM "
          f"arithmetic alone {floor:6.3f} ms; SUMO (libsumo, measured once) {SUMO_MS:g} ms")
    kinds = {k: sum(BACKGROUND_TAG in a.tags and a.kind == k for a in mixed.actors) for k in ("pedestrian", "cyclist")}
    mixed_ms = out["mixed"] / out["mixed_agent_s"] * 1e3
    n_mixed = round(out["mixed_agent_s"] / sim_s)
    mixed_floor = statistics.median(_idm_floor(n_mixed, ticks, busy.dt) for _ in range(3)) / (n_mixed * sim_s) * 1e3
    print(f"traffic      + {kinds['pedestrian']} pedestrians ({PEDESTRIANS:g}/100 m) and {kinds['cyclist']} cyclists "
          f"({CYCLISTS:g}/km): {out['mixed'] * 1e3:7.1f} ms CPU/run, {mixed_ms:6.3f} ms per present agent per simulated s "
          f"(target ≤ {TARGET_MS:g} ms) = {mixed_ms / mixed_floor:5.1f}× the floor for as many agents "
          f"({mixed_floor:6.3f} ms, the IDM arithmetic alone)")
    out.update(whole_ms=whole, marginal_ms=marginal, floor_ms=floor, mixed_ms=mixed_ms, mixed_floor_ms=mixed_floor)
    # dynamic-v1: the busy street over a 20 s clip beside the sim section's 10-actor scenario (issue 31: ≤ 3×).
    ten, ten_template, _ = _setup()
    long = busy.model_copy(update={"clip_s": 20.0})
    runs: dict[str, list[float]] = {"busy": [], "ten": []}
    pairs = (("busy", long, template), ("ten", ten, ten_template))
    for _name, m, t in pairs:
        run_simulation(m, t, backend="dynamic-v1", catalog=catalog)
    for _ in range(repeats):  # in alternation: both medians see the same load
        for name, m, t in pairs:
            runs[name].append(_cpu(lambda m=m, t=t: run_simulation(m, t, backend="dynamic-v1", catalog=catalog), 1))
    dyn = {k: statistics.median(v) for k, v in runs.items()}
    print(f"traffic      dynamic-v1, {n_bg} background vehicles (+{n_reserve} reserves) + "
          f"{len(long.actors) - n_bg - n_reserve} scenario actors on "
          f"city_crossing, 20 s + {long.warmup_s:g} s: {dyn['busy']:6.2f} s CPU; the sim section's {len(ten.actors)} "
          f"actors, 20 s + {ten.warmup_s:g} s: {dyn['ten']:6.2f} s: {dyn['busy'] / dyn['ten']:4.1f}× (target ≤ 3×)")
    out.update(dynamic_busy=dyn["busy"], dynamic_ten=dyn["ten"])
    return out
