"""The planner's compiled kernels return exactly what the vectorized / scalar forms they replaced do.

The reference forms live here, not in the library: the lane-gap matrix and
argmin leader search, the sight-line test over footprint and static edges,
the corridor perception of pedestrians, and the obstacle-gap / IDM /
limits sequence of the planner, each run against its kernel on random
inputs (ties, NaN lane starts, degenerate sight lines included) and
compared bit for bit.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from simready.sim.core import constants as C
from simready.sim.core import geometry as geo
from simready.sim.behavior import junctions
from simready.sim.controllers import longitudinal
from simready.sim.core import planner_kernels as pk
from simready.sim.controllers.planner import goal_references
from simready.sim.core.profiles import Profile
from simready.sim.core.state import GapGoal, SpeedGoal

RNG_SEEDS = range(40)


def _bits(x: np.ndarray) -> list[int]:
    return np.ascontiguousarray(x, dtype=np.float64).view(np.int64).tolist()


# --- lane gaps and leaders -------------------------------------------------------------------------------------


def _ref_lane_gaps(lane, s, u, present, lane_bound, lane_u0, hl):  # type: ignore[no-untyped-def]
    on = (lane >= 0) & present & lane_bound
    with np.errstate(invalid="ignore"):
        big = lane_u0[:, np.maximum(lane, 0)] + s[None, :]
        ahead = np.isfinite(big) & on[None, :] & on[:, None] & (big > u[:, None])
    np.fill_diagonal(ahead, False)
    gap = big - u[:, None] - (hl[:, None] + hl[None, :])
    lg = np.where(ahead, gap, np.inf)
    j = np.argmin(lg, axis=1)
    return lg, np.where(np.isfinite(lg[np.arange(len(j)), j]), j, -1)


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_lane_gap_kernel_matches_vectorized(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(25):
        n, nl = int(rng.integers(1, 12)), int(rng.integers(1, 5))
        lane = rng.integers(-1, nl, n)
        lane_u0 = rng.integers(-3, 30, (n, nl)).astype(float) * 2.5  # coarse grid: equal gaps (ties) happen
        lane_u0[rng.random((n, nl)) < 0.3] = np.nan
        s = np.where(lane >= 0, rng.integers(0, 20, n) * 1.25, np.nan)
        u = rng.integers(0, 40, n) * 1.25
        if rng.random() < 0.1:
            u[0] = -np.inf
        present, lane_bound = rng.random(n) < 0.9, rng.random(n) < 0.8
        hl = rng.choice([0.5, 2.25, 2.5], n)
        want_g, want_l = _ref_lane_gaps(lane, s, u, present, lane_bound, lane_u0, hl)
        gaps, leaders = np.empty((n, n)), np.empty(n, dtype=np.int64)
        # No background follower: the sibling lanes are never read.
        pk.lane_gaps(lane, s, u, present, lane_bound, lane_u0, hl, gaps, leaders, lane_u0, np.zeros(n, dtype=bool), 20.0)
        assert _bits(gaps) == _bits(want_g)
        assert leaders.tolist() == want_l.tolist()


# --- sight lines ------------------------------------------------------------------------------------------------


def _ref_segments_blocked(a, b, e0, e1, skip):  # type: ignore[no-untyped-def]
    d = (b - a)[:, None, :]
    e = (e1 - e0)[None, :, :]
    w = e0[None, :, :] - a[:, None, :]
    denom = d[..., 0] * e[..., 1] - d[..., 1] * e[..., 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (w[..., 0] * e[..., 1] - w[..., 1] * e[..., 0]) / denom
        s = (w[..., 0] * d[..., 1] - w[..., 1] * d[..., 0]) / denom
    hit = (denom != 0.0) & (t > 0.0) & (t < 1.0) & (s >= 0.0) & (s <= 1.0)
    return (hit & ~skip).any(axis=1)


def _ref_visible(xy, yaw, hl, hw, present, occluder, e0s, e1s, o, t):  # type: ignore[no-untyped-def]
    idx = np.flatnonzero(present & occluder)
    if len(idx):
        edges = geo.rect_edges(xy[idx, 0], xy[idx, 1], yaw[idx], hl[idx], hw[idx])
        owner = np.concatenate([np.full(len(e0s), -1), np.repeat(idx, 4)])
        e0 = np.concatenate([e0s, edges[:, :, 0].reshape(-1, 2)])
        e1 = np.concatenate([e1s, edges[:, :, 1].reshape(-1, 2)])
    else:
        e0, e1, owner = e0s, e1s, np.full(len(e0s), -1)
    hu = np.stack([np.cos(yaw), np.sin(yaw)], -1)  # body x axes
    eye = xy[o] + hu[o] * (C.EYE_FORWARD_FRACTION * hl[o])[:, None]
    offs = np.array([0.0, 0.8, -0.8])
    pts = xy[t][:, None, :] + hu[t][:, None, :] * (offs[None, :, None] * hl[t][:, None, None])
    if len(e0):
        skip = (owner[None, :] == np.repeat(o, 3)[:, None]) | (owner[None, :] == np.repeat(t, 3)[:, None])
        blocked = _ref_segments_blocked(np.repeat(eye, 3, axis=0), pts.reshape(-1, 2), e0, e1, skip).reshape(-1, 3)
    else:
        blocked = np.zeros((len(o), 3), dtype=bool)
    return ~blocked.all(axis=1) & present[o] & present[t]


def _scene_arrays(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Actors on a coarse grid with right-angle headings half the time (collinear and touching edges happen)."""
    grid = rng.random() < 0.5
    xy = rng.integers(-8, 9, (n, 2)) * 2.0 if grid else rng.uniform(-20.0, 20.0, (n, 2))
    yaw = rng.integers(-2, 3, n) * (math.pi / 2) if grid else rng.uniform(-math.pi, math.pi, n)
    m = int(rng.integers(0, 4)) * 4
    box = rng.integers(-8, 9, (m // 4, 1, 2)) * 2.0 + np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]])
    e0 = box.reshape(-1, 2)
    e1 = np.roll(box, -1, axis=1).reshape(-1, 2)
    return {"xy": xy, "yaw": yaw, "hl": rng.choice([0.3, 1.0, 2.25], n), "hw": rng.choice([0.3, 0.9, 1.0], n),
            "present": rng.random(n) < 0.9, "occluder": rng.random(n) < 0.6, "e0": e0, "e1": e1}


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_sight_line_kernel_matches_vectorized(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    for _ in range(10):
        n = int(rng.integers(2, 11))
        a = _scene_arrays(rng, n)
        o, t = (x.ravel() for x in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
        want = _ref_visible(a["xy"], a["yaw"], a["hl"], a["hw"], a["present"], a["occluder"], a["e0"], a["e1"], o, t)
        out = np.empty(len(o), dtype=bool)
        pk.sight_lines(a["xy"], a["yaw"], a["hl"], a["hw"], a["present"], a["occluder"], a["e0"], a["e1"], o, t,
                       C.EYE_FORWARD_FRACTION, out)
        assert out.tolist() == want.tolist()


# --- corridor perception of pedestrians ---------------------------------------------------------------------------


def _ref_corridor(a, vel, v, lane_bound, avoid, yield_, is_ped, dc):  # type: ignore[no-untyped-def]
    xy, yaw, hl, hw, present = a["xy"], a["yaw"], a["hl"], a["hw"], a["present"]
    veh = np.flatnonzero(lane_bound & present & (avoid | yield_))
    peds = np.flatnonzero(is_ped & present)
    if len(veh) == 0 or len(peds) == 0:
        return []
    rel = xy[peds][None, :, :] - xy[veh][:, None, :]
    vv = v[veh][:, None]
    reach = vv * vv / (2.0 * dc[veh][:, None]) + C.OBSTACLE_LOOKAHEAD_M + hl[veh][:, None]
    near = np.einsum("ijk,ijk->ij", rel, rel) < reach * reach
    c, s = np.cos(yaw[veh]), np.sin(yaw[veh])
    dx = rel[..., 0] * c[:, None] + rel[..., 1] * s[:, None]
    dy = -rel[..., 0] * s[:, None] + rel[..., 1] * c[:, None]
    vlat = -vel[peds][None, :, 0] * s[:, None] + vel[peds][None, :, 1] * c[:, None]
    ahead = dx - hl[veh][:, None]
    half = hw[veh][:, None] + C.CORRIDOR_MARGIN_M + C.PEDESTRIAN_RADIUS_M
    with np.errstate(invalid="ignore"):
        t_arr = np.maximum(ahead, 0.0) / np.maximum(vv, 0.5)
        future = dy + vlat * t_arr
        entering = (np.minimum(dy, future) < half) & (np.maximum(dy, future) > -half) & yield_[veh][:, None]
        cand = near & (ahead > -0.5) & ((np.abs(dy) < half) | entering)
    vi, pj = np.nonzero(cand)
    seen = _ref_visible(xy, yaw, hl, hw, present, a["occluder"], a["e0"], a["e1"], veh[vi], peds[pj])
    return [(int(veh[x]), int(peds[y])) for x, y, ok in zip(vi, pj, seen) if ok]


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_corridor_kernel_matches_vectorized(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    for _ in range(10):
        n = int(rng.integers(2, 11))
        a = _scene_arrays(rng, n)
        is_ped = rng.random(n) < 0.4
        lane_bound = ~is_ped & (rng.random(n) < 0.9)
        avoid, yield_ = rng.random(n) < 0.6, rng.random(n) < 0.6
        v = np.where(rng.random(n) < 0.2, 0.0, rng.uniform(0.0, 15.0, n))
        vel = rng.uniform(-2.0, 2.0, (n, 2))
        if rng.random() < 0.2:
            vel[int(rng.integers(n))] = np.nan
        dc = rng.choice([2.0, 3.0], n)
        want = _ref_corridor(a, vel, v, lane_bound, avoid, yield_, is_ped, dc)
        out = np.empty((n * n, 2), dtype=np.int64)
        m = pk.corridor_pedestrians(a["xy"], vel, a["yaw"], v, a["present"], lane_bound, avoid, yield_, is_ped,
                                    a["hl"], a["hw"], dc, a["occluder"], a["e0"], a["e1"], C.OBSTACLE_LOOKAHEAD_M,
                                    C.CORRIDOR_MARGIN_M, C.PEDESTRIAN_RADIUS_M, C.EYE_FORWARD_FRACTION, out)
        assert [tuple(p) for p in out[:m].tolist()] == want


# --- obstacle gaps and accelerations --------------------------------------------------------------------------------


def _ref_accelerations(x: dict) -> tuple[list[float], list[float]]:  # type: ignore[type-arg]
    """The planner's former sequence: leader, signal, pedestrian percepts, yields, pedestrians; scalar IDM and limits."""
    n = len(x["u"])
    u, v, present, hl, s0 = x["u"].tolist(), x["v"].tolist(), x["present"].tolist(), x["hl"].tolist(), x["s0"].tolist()
    gap, v_obs = [math.inf] * n, [0.0] * n
    lane, s = x["lane"].tolist(), x["s"].tolist()
    u0 = x["lane_u0"].tolist()
    for i, j in enumerate(x["leaders"]):
        if j < 0 or lane[j] < 0:
            continue
        u_j = u0[i][lane[j]] + s[j]
        g = u_j - u[i] - (hl[i] + hl[j])
        if g < gap[i] and present[j] and u_j > u[i] and math.isfinite(g):
            gap[i], v_obs[i] = g, v[j]
    if x["stop_u"].shape[1]:
        stop_col = x["stop_col"]
        code = np.where(stop_col >= 0, x["codes"][np.maximum(stop_col, 0)], 0)
        g = x["stop_u"] - x["u"][:, None] - x["hl"][:, None]
        v2 = (x["v"] * x["v"])[:, None]
        with np.errstate(invalid="ignore"):
            stop = np.isin(code, (2, 3)) | ((code == 1) & (v2 <= 2.0 * C.AMBER_DECEL_LIMIT * np.maximum(g, 1e-6)))
            use = stop & (g > 0.0) & x["obeys"][:, None]
        best = np.min(np.where(use, g, np.inf), axis=1) + (x["s0"] - C.STOP_LINE_STANDOFF_M)
        for i, b in enumerate(best.tolist()):
            if b < gap[i]:
                gap[i], v_obs[i] = b, 0.0
    xy, yaw = x["xy"].tolist(), x["yaw"].tolist()
    for i, j in x["percepts"]:
        if not present[j]:
            continue
        dx = (xy[j][0] - xy[i][0]) * math.cos(yaw[i]) + (xy[j][1] - xy[i][1]) * math.sin(yaw[i])
        g = dx - hl[i] - C.PEDESTRIAN_RADIUS_M
        if dx > 0.0 and g < gap[i]:
            gap[i], v_obs[i] = g, 0.0
    for i, u_wait in x["yields"]:
        g = u_wait - u[i] - hl[i] + s0[i]
        if g < gap[i]:
            gap[i], v_obs[i] = g, 0.0
    for i, end_gap, kerb_gap in x["peds"]:
        if end_gap < gap[i]:
            gap[i], v_obs[i] = max(end_gap, 0.0), 0.0
        if kerb_gap < gap[i]:
            gap[i], v_obs[i] = kerb_gap, 0.0
    a_des = []
    fg = x["friction"] * C.GRAVITY_MPS2
    dt = x["dt"]
    root2 = (2.0 * np.sqrt(x["accel_max"] * x["decel_comfort"])).tolist()
    for i in range(n):
        vi, g, vo, vr = v[i], gap[i], v_obs[i], float(x["v_ref"][i])
        amax, dc = float(x["accel_max"][i]), float(x["decel_comfort"][i])
        dm, tg = float(x["decel_max"][i]), float(x["time_gap"][i])
        gc, aff, c = float(x["gap_cmd"][i]), float(x["a_ff"][i]), float(x["commanded"][i])
        a_track = gc if math.isfinite(gc) else aff + C.SPEED_TRACK_GAIN * (vr - vi)
        xx = vi * tg + vi * (vi - vo) / root2[i]
        s_star = s0[i] + (0.0 if 0.0 > xx else xx)
        ratio = s_star / g if g > 0.0 else 1e3
        if not ratio < 1e3:
            ratio = 1e3
        a_idm = amax * (1.0 - ratio * ratio)
        a = a_track if a_track < a_idm else a_idm
        closing_in = vi < 0.5 and g < s0[i] + 1.0 and vo < 0.1
        if vi < C.STANDSTILL_MPS and closing_in and not a < 0.0:
            a = 0.0
        resting = (a < 0.0 and closing_in) or (a <= 0.0 and vi < C.STANDSTILL_MPS) or (vr <= 0.0 and vi < C.STANDSTILL_MPS)
        if resting:
            m = -vi / dt
            a = a if a < m else m
        elif vr <= 0.0:
            m = -vi / dt
            lo = -dc
            m = m if m > lo else lo
            a = a if a < m else m
        lo = -(dm if dm < fg else fg)
        a = a if a > lo else lo
        a = a if a < amax else amax
        if c != math.inf:
            a = c
        if x["parked"][i] or not present[i]:
            a = 0.0
        a_des.append(a)
    accel = [0.0 if math.isnan(a) else a for a in a_des]
    return a_des, [0.0 if (vi <= 0.0 and a < 0.0) else a for vi, a in zip(v, accel)]


def _random_tick(rng: np.random.Generator) -> dict:  # type: ignore[type-arg]
    n, nl = int(rng.integers(1, 11)), 3
    is_ped = rng.random(n) < 0.3
    lane_bound = ~is_ped & (rng.random(n) < 0.9)
    lane = np.where(lane_bound & (rng.random(n) < 0.9), rng.integers(0, nl, n), -1)
    lane_u0 = rng.integers(-4, 20, (n, nl)) * 2.5
    lane_u0 = np.where(rng.random((n, nl)) < 0.2, np.nan, lane_u0)
    u = rng.integers(0, 40, n) * 1.25 + np.where(rng.random(n) < 0.5, rng.uniform(0.0, 1.0, n), 0.0)
    v = np.where(rng.random(n) < 0.3, rng.choice([0.0, 0.01, 0.3], n), rng.uniform(0.0, 15.0, n))
    k = int(rng.integers(0, 3))
    stop_u = np.where(rng.random((n, k)) < 0.7, rng.uniform(0.0, 60.0, (n, k)), np.inf)
    stop_col = np.where(np.isfinite(stop_u), rng.integers(0, 2, (n, k)), -1)
    vehicles = np.flatnonzero(lane_bound)
    peds = np.flatnonzero(is_ped)
    leaders = [int(rng.choice(vehicles)) if len(vehicles) and lane_bound[i] and rng.random() < 0.6 else -1 for i in range(n)]
    percepts = [(int(i), int(j)) for i in vehicles for j in peds if rng.random() < 0.5]
    yields = [(int(i), float(u[i] + rng.uniform(-3.0, 30.0))) for i in vehicles if rng.random() < 0.3]
    ped_gaps = [(int(i), float(rng.choice([rng.uniform(-2.0, 30.0), math.inf, -0.0])),
                 float(rng.choice([rng.uniform(-1.0, 10.0), math.inf]))) for i in peds]
    commanded = np.where(rng.random(n) < 0.8, np.inf, rng.choice([-C.BRANCH_BRAKE_DECEL, np.nan], n))
    return {
        "u": u, "v": v, "present": rng.random(n) < 0.9, "lane": lane, "lane_u0": lane_u0, "is_ped": is_ped,
        "s": np.where(lane >= 0, u - lane_u0[np.arange(n), np.maximum(lane, 0)], np.nan),
        "hl": rng.choice([0.25, 2.25, 2.5], n), "s0": rng.choice([1.0, 2.0], n), "time_gap": rng.choice([0.8, 1.5], n),
        "accel_max": rng.choice([1.5, 2.5], n), "decel_comfort": rng.choice([2.0, 3.3], n),
        "decel_max": rng.choice([6.0, 8.0], n), "parked": rng.random(n) < 0.1, "obeys": lane_bound & (rng.random(n) < 0.8),
        "leaders": leaders, "percepts": percepts, "yields": yields, "peds": ped_gaps,
        "xy": rng.uniform(-30.0, 30.0, (n, 3))[:, :2], "yaw": rng.uniform(-math.pi, math.pi, n),
        "stop_u": stop_u, "stop_col": stop_col, "codes": rng.integers(0, 5, 2).astype(np.int8),
        "v_ref": np.where(rng.random(n) < 0.2, 0.0, rng.uniform(0.0, 14.0, n)),
        "a_ff": np.where(rng.random(n) < 0.7, 0.0, rng.uniform(-1.0, 1.0, n)),
        "commanded": commanded, "gap_cmd": np.where(rng.random(n) < 0.8, np.inf, rng.uniform(-3.0, 2.0, n)),
        "friction": float(rng.choice([0.3, 0.8])), "dt": 0.02,
    }


def _fixed_gaps(x: dict) -> np.ndarray:  # type: ignore[type-arg]
    """The planner's stationary obstacles as it gathers them before the kernel (yields, then pedestrians from inf)."""
    fixed = np.full(len(x["u"]), np.inf)
    for i, u_wait in x["yields"]:
        g = u_wait - float(x["u"][i]) - float(x["hl"][i]) + float(x["s0"][i])
        if g < fixed[i]:
            fixed[i] = g
    for i, end_gap, kerb_gap in x["peds"]:
        if end_gap < fixed[i]:
            fixed[i] = max(end_gap, 0.0)
        if kerb_gap < fixed[i]:
            fixed[i] = kerb_gap
    return fixed


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_acceleration_kernel_matches_scalar_sequence(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    for _ in range(50):
        x = _random_tick(rng)
        n = len(x["u"])
        consts = np.empty((9, n))
        consts[pk.HL], consts[pk.S0] = x["hl"], x["s0"]
        consts[pk.TIME_GAP], consts[pk.ACCEL_MAX] = x["time_gap"], x["accel_max"]
        consts[pk.IDM_ROOT2] = 2.0 * np.sqrt(x["accel_max"] * x["decel_comfort"])
        consts[pk.DECEL_COMFORT], consts[pk.DECEL_MAX] = x["decel_comfort"], x["decel_max"]
        consts[pk.PARKED], consts[pk.OBEYS] = x["parked"], x["obeys"]
        refs = np.empty((5, n))
        refs[pk.V_REF], refs[pk.A_FF] = x["v_ref"], x["a_ff"]
        refs[pk.COMMANDED], refs[pk.GAP_CMD] = x["commanded"], x["gap_cmd"]
        refs[pk.FIXED_GAP] = _fixed_gaps(x)
        a_des, accel = np.empty(n), np.empty(n)
        pk.accelerations(consts, refs, x["u"], x["v"], x["present"], x["lane"], x["s"], x["lane_u0"],
                         np.array(x["leaders"], dtype=np.int64), np.array(x["percepts"], dtype=np.int64).reshape(-1, 2),
                         x["xy"], x["yaw"], x["stop_u"], x["stop_col"], x["codes"], x["dt"], x["friction"] * C.GRAVITY_MPS2,
                         C.STANDSTILL_MPS, C.SPEED_TRACK_GAIN, 2.0 * C.AMBER_DECEL_LIMIT, C.STOP_LINE_STANDOFF_M,
                         C.PEDESTRIAN_RADIUS_M, a_des, accel)
        want_des, want_acc = _ref_accelerations(x)
        assert _bits(a_des) == _bits(np.array(want_des))
        assert _bits(accel) == _bits(np.array(want_acc))


def test_rest_clamp_matches_scalar_rule() -> None:
    for v in (-1.0, -0.0, 0.0, 1e-9, 2.0):
        for a in (-2.0, -0.0, 0.0, 1.0):
            assert math.copysign(1.0, pk.rest_clamp(v, a)) == math.copysign(1.0, 0.0 if (v <= 0.0 and a < 0.0) else a)
            assert pk.rest_clamp(v, a) == (0.0 if (v <= 0.0 and a < 0.0) else a)


# --- goal references ------------------------------------------------------------------------------------------------


def _ref_goal_references(view, goals, cruise):  # type: ignore[no-untyped-def]
    """The former list-based goal references (v_ref, a_ff, commanded, gap_cmd)."""
    n = len(goals)
    v_ref, a_ff, commanded, gap_cmd = list(cruise), [0.0] * n, [math.inf] * n, [math.inf] * n
    tick, dt = view.tick, view.scene.dt
    for i, goal in enumerate(goals):
        if goal is None:
            continue
        if isinstance(goal, GapGoal):
            t = goal.target
            g_now = float(view.lane_gaps[i, t])
            if not math.isfinite(g_now):
                a = view.scene.actors
                g_now = view.centre_distance(i, t) - float(a.hl[i] + a.hl[t])
            g_goal = goal.value if goal.unit == "distance" else goal.value * float(view.v[i])
            f = goal.profile.at(tick, dt)[0]
            g_ref = goal.profile.q0 + (g_goal - goal.profile.q0) * f
            gap_cmd[i] = longitudinal.gap_control(g_now, g_ref, float(view.v[i]), float(view.v[t]))
        elif goal.kind == "brake":
            commanded[i] = -C.BRANCH_BRAKE_DECEL
        elif goal.kind == "coast":
            commanded[i] = math.nan
        elif goal.kind == "match":
            w = goal.profile.at(tick, dt)[0]
            v_ref[i] = goal.v0 + (float(view.v[goal.target]) - goal.v0) * w
            a_ff[i] = 0.0
        else:
            v_ref[i], a_ff[i], _ = goal.profile.at(tick, dt)
    return v_ref, a_ff, commanded, gap_cmd


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_goal_references_match_list_form(seed: int) -> None:
    """Gap verbs (distance and time, leader on or off the lane chain), match, brake, coast and profile goals."""
    rng = np.random.default_rng(400 + seed)
    for _ in range(20):
        n = int(rng.integers(2, 9))
        xy = rng.uniform(-30.0, 30.0, (n, 2))
        lane_gaps = np.where(rng.random((n, n)) < 0.5, rng.uniform(-1.0, 40.0, (n, n)), np.inf)
        hl = rng.choice([0.25, 2.25], n)
        view = SimpleNamespace(tick=int(rng.integers(0, 500)), v=rng.uniform(0.0, 15.0, n), lane_gaps=lane_gaps,
                               scene=SimpleNamespace(dt=0.02, actors=SimpleNamespace(hl=hl)),
                               centre_distance=lambda i, j, xy=xy: float(math.hypot(*(xy[j] - xy[i]))))
        goals = []
        for i in range(n):
            prof = Profile(str(rng.choice(["linear", "cubic", "sinusoidal", "step"])), float(rng.uniform(0.0, 12.0)),
                           float(rng.uniform(0.0, 12.0)), int(rng.integers(0, 400)), float(rng.uniform(0.0, 4.0)))
            t = int((i + 1 + rng.integers(0, n - 1)) % n)
            kind = rng.choice(["none", "gap", "match", "brake", "coast", "profile"])
            goals.append(None if kind == "none" else
                         GapGoal("x", t, str(rng.choice(["distance", "time"])), float(rng.uniform(1.0, 20.0)), prof)
                         if kind == "gap" else SpeedGoal(str(kind), "x", prof, t, float(rng.uniform(0.0, 10.0))))
        cruise = rng.uniform(0.0, 14.0, n)
        refs = np.full((5, n), np.inf)
        refs[pk.V_REF], refs[pk.A_FF] = cruise, 0.0
        goal_references(view, SimpleNamespace(longitudinal=tuple(goals)), refs)
        want = _ref_goal_references(view, goals, cruise)
        for row, col in zip((pk.V_REF, pk.A_FF, pk.COMMANDED, pk.GAP_CMD), want):
            assert _bits(refs[row]) == _bits(np.array(col))


# --- junction yields --------------------------------------------------------------------------------------------


def _ref_yield_stops(view, route_conflicts):  # type: ignore[no-untyped-def]
    """The former numpy-indexed form of :func:`simready.sim.behavior.junctions.yield_stops`."""
    scene = view.scene
    a = scene.actors
    out = []
    for i in np.flatnonzero(a.yield_ & a.lane_bound & view.present).tolist():
        u_i = float(view.u[i])
        v_i = max(float(view.v[i]), 1.0)
        front = u_i + float(a.hl[i])
        wait = math.inf
        for u_x, other, s_other, u_wait in route_conflicts[i]:
            if front > u_wait + 0.5 or u_x - front > junctions.CONFLICT_LOOKAHEAD_M or u_wait >= wait:
                continue
            li = scene.lane_index[other]
            t_clear = (u_x - u_i + float(a.hl[i]) + 2.0) / v_i
            for j in np.flatnonzero(view.present & a.lane_bound).tolist():
                if j == i or not np.isfinite(view.table.lane_u0[j, li]):
                    continue
                d_j = float(view.table.lane_u0[j, li]) + s_other - float(view.u[j])
                clearance = float(a.hl[j]) + float(a.hw[i]) + junctions.CLEARANCE_M
                if d_j < -clearance:
                    continue
                v_j = float(view.v[j])
                if d_j < clearance or (v_j > 0.5 and d_j / v_j < t_clear + C.JUNCTION_GAP_S):
                    wait = u_wait
                    break
        if math.isfinite(wait):
            out.append((i, wait))
    return tuple(out)


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_yield_stops_match_numpy_form(seed: int) -> None:
    rng = np.random.default_rng(500 + seed)
    lanes = ("a", "b", "c")
    for _ in range(30):
        n = int(rng.integers(1, 9))
        yield_, lane_bound = rng.random(n) < 0.6, rng.random(n) < 0.8
        hl, hw = rng.choice([0.25, 2.25, 2.5], n), rng.choice([0.3, 0.9], n)
        lane_u0 = np.where(rng.random((n, 3)) < 0.5, rng.uniform(-20.0, 40.0, (n, 3)), np.nan)
        u = rng.uniform(0.0, 50.0, n)
        v = np.where(rng.random(n) < 0.3, rng.choice([0.0, 0.4, 0.6], n), rng.uniform(0.0, 12.0, n))
        present = rng.random(n) < 0.9
        actors = SimpleNamespace(yield_=yield_, lane_bound=lane_bound, hl=hl, hw=hw, py=SimpleNamespace(
            n=n, yield_=yield_.tolist(), lane_bound=lane_bound.tolist(), hl=hl.tolist(), hw=hw.tolist()))
        view = SimpleNamespace(scene=SimpleNamespace(actors=actors, lane_index={k: i for i, k in enumerate(lanes)}),
                               u=u, v=v, present=present, u_py=u.tolist(), present_py=present.tolist(),
                               table=SimpleNamespace(lane_u0=lane_u0, lane_u0_py=lane_u0.tolist()))
        conflicts = tuple(tuple(sorted((float(u[i] + rng.uniform(-5.0, 45.0)), str(rng.choice(lanes)),
                                        float(rng.uniform(0.0, 30.0)), float(u[i] + rng.uniform(-8.0, 40.0)))
                                       for _ in range(int(rng.integers(0, 4))))) for i in range(n))
        assert junctions.yield_stops(view, conflicts) == _ref_yield_stops(view, conflicts)
