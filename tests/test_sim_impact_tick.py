"""Momentum and support at the impact tick in dynamic-v1 (issue 26 item 1), tick by tick.

Over a contact, the pair's horizontal momentum may change only by what the
ground can supply: the tyres' (or the agents' drive model's) friction limit
μ·Σm·g per second. The check is per tick, not over the whole window, and
uses each body's centre-of-mass velocity, v + ω × R·c: the trace records
the velocity of the body *origin* (the footprint centre on the ground, up
to 1.4 m below the centre of mass), which a pitching or rolling body moves
relative to its centre of mass. Three crashes, built by hand:

* **rear-end** (``residential_crosswalk_v3``): a sedan at 15 m/s into the
  back of the shuttle at rest (the scene of ``test_sim_contact``);
* **T-bone** (``urban_signalized_intersection``): a sedan at 12 m/s on the
  west–east crossing into the flank of the shuttle standing in the junction
  on the south–north crossing;
* **oblique**: the same sedan on the east arm's left turn towards the south
  (heading turning through south-west) into the shuttle.

Besides momentum: no body is pressed into its support at the impact (the
downward vertical speed of either body at the impact tick and the next
≤ 0.05 m/s); a body the geometry makes climb (the shuttle's box, bottom edge
0.3 m above the road, riding on the sedan's lower, sloped hull) rises.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pybullet as p
import pytest

from simready.sim.run import run_simulation
from simready.testing import demo
from tests.fixtures.sim import catalog, template

pytestmark = pytest.mark.slow

DT = 0.02
MU = 0.9
G = 9.81
JUNCTION = "urban_signalized_intersection"


def _rear_end() -> Any:
    cat = catalog()
    ego = demo.vehicle(cat, "ego", demo.SHUTTLE, "lane_eb", 40.0, (40.0, -1.75, 0.0), 0.0, role="ego", cruise=0.0)
    car = demo.vehicle(cat, "car", demo.SEDAN, "lane_eb", 30.0, (30.0, -1.75, 0.0), 15.0)
    return demo.assemble(template(), cat, "impact-rear", [ego, car], [], clip_s=1.5, warmup_s=0.2, dt=DT), template()


def _junction(car: dict[str, Any], sample: str) -> Any:
    cat, t = catalog(), template(JUNCTION)
    ego = demo.vehicle(cat, "ego", demo.SHUTTLE, "s_to_n", 10.0, (1.75, 0.0, math.pi / 2), 0.0, role="ego", cruise=0.0)
    return demo.assemble(t, cat, sample, [ego, car], [], clip_s=1.5, warmup_s=0.2, dt=DT), t


def _t_bone() -> Any:
    car = demo.vehicle(catalog(), "car", demo.SEDAN, "w_to_e", 5.0, (-5.0, -1.75, 0.0), 12.0, route=["w_to_e"])
    return _junction(car, "impact-tbone")


def _oblique() -> Any:
    # On e_to_s 2 m in, heading a little north of west: its left turn brings it into the shuttle's side at an angle.
    car = demo.vehicle(catalog(), "car", demo.SEDAN, "e_to_s", 2.0, (8.02, 2.04, math.radians(165.0)), 9.0, route=["e_to_s"])
    return _junction(car, "impact-oblique")


def _impact(build: Any) -> dict[str, Any]:
    m, t = build()
    r = run_simulation(m, t, backend="dynamic-v1", catalog=catalog())
    tr = r.trace
    ids = tr.header["actor_ids"]
    n = len(ids)
    rows = len(tr.ticks) // n
    col = {k: tr.column(k).reshape(rows, n) for k in ("t", "vx", "vy", "vz", "wx", "wy", "wz", "qx", "qy", "qz", "qw")}
    (hit,) = [e for e in tr.events if e["type"] == "collision" and {e["a"], e["b"]} == {"car", "ego"}]
    cat = catalog()
    assets = {a.id: a.asset_id for a in m.actors}
    v_com = {}
    for j, a in enumerate(ids):
        com = np.asarray(cat.entry(assets[a]).center_of_mass_m, dtype=np.float64)
        out = np.empty((rows, 3))
        for k in range(rows):
            R = np.array(p.getMatrixFromQuaternion([col[c][k, j] for c in ("qx", "qy", "qz", "qw")])).reshape(3, 3)
            w = np.array([col["wx"][k, j], col["wy"][k, j], col["wz"][k, j]])
            out[k] = np.array([col["vx"][k, j], col["vy"][k, j], col["vz"][k, j]]) + np.cross(w, R @ com)
        v_com[a] = out
    mass = {a: cat.entry(assets[a]).mass_kg for a in ids}
    k0 = int(round((hit["t"] - col["t"][0, 0]) / DT))
    k1 = int(round((hit["t_end"] - col["t"][0, 0]) / DT))
    P = sum(mass[a] * v_com[a][:, :2] for a in ids)
    bound = MU * sum(mass.values()) * G * DT
    dP = np.linalg.norm(np.diff(P, axis=0), axis=1)  # dP[k - 1]: the change into tick k
    return {"hit": hit, "ratios": dP[k0 - 1:k1] / bound, "vz": {a: v_com[a][k0:k0 + 2, 2] for a in ids},
            "exchanged": mass["car"] * float(np.linalg.norm(v_com["car"][k1, :2] - v_com["car"][k0 - 1, :2])) / bound,
            "accepted": not r.issues}


@pytest.mark.parametrize("build", [_rear_end, _t_bone, _oblique], ids=["rear-end", "t-bone", "oblique"])
def test_the_pair_keeps_its_momentum_tick_by_tick(build: Any) -> None:
    f = _impact(build)
    assert f["hit"]["relative_speed_mps"] > 5.0 and f["hit"]["t"] > 0.0
    # A real exchange: the car's own momentum changes by many ticks' worth of the friction bound…
    assert f["exchanged"] > 5.0, f["exchanged"]
    # …while the pair's changes, every tick of the contact, by no more than the ground can supply.
    assert f["ratios"].max() <= 1.0, f["ratios"].round(2).tolist()
    # Nothing is pressed into its support.
    for a, vz in f["vz"].items():
        assert vz.min() >= -0.05, (a, vz.round(3).tolist())


@pytest.mark.parametrize("build", [_rear_end, _t_bone, _oblique], ids=["rear-end", "t-bone", "oblique"])
def test_the_collision_event_starts_at_the_first_footprint_overlap(build: Any) -> None:
    """Issue 26 item 3: no tick with overlapping footprints before the pair's collision event (shapely, independent
    of the engine's footprint kernel)."""
    import shapely

    m, t = build()
    tr = run_simulation(m, t, backend="dynamic-v1", catalog=catalog()).trace
    df = tr.df
    dims = {a.id: (a.dims.l, a.dims.w) for a in m.actors}
    (hit,) = [e for e in tr.events if e["type"] == "collision" and {e["a"], e["b"]} == {"car", "ego"}]

    def footprint(row: Any, actor: str) -> Any:
        yaw = 2.0 * math.atan2(row.qz, row.qw)
        c, s = math.cos(yaw), math.sin(yaw)
        length, width = dims[actor]
        return shapely.Polygon([(row.x + c * u * length / 2 - s * v * width / 2, row.y + s * u * length / 2 + c * v * width / 2)
                                for u, v in ((1, 1), (-1, 1), (-1, -1), (1, -1))])

    first = None
    for t_s in sorted(set(df.t)):
        rows = df[df.t == t_s].set_index("actor_id")
        if footprint(rows.loc["car"], "car").intersection(footprint(rows.loc["ego"], "ego")).area > 0.0:
            first = t_s
            break
    assert first is not None and hit["t"] == pytest.approx(first), (hit["t"], first)
