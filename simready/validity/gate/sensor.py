"""Check 3, ``sensor``: camera and LiDAR agree on positions, and on detection rates as the conditions expect.

Camera vs LiDAR position agreement for the same instance on the ground plane
(the camera row carries the body origin, on the ground; the LiDAR row the
centroid of the returns, up the body's side, so their heights are not
comparable) (camera frame and LiDAR sweep within
:data:`~simready.validity.policy.SENSOR_PAIR_MAX_DT_S`, tolerance grown by
both positions' extents and the distance the actor moves in the time offset),
and condition expectations over the same paired opportunities: at night the
camera detection rate may not exceed the LiDAR rate; in rain LiDAR must be
attenuated (fewer returns per sweep, else a lower detection rate) against a
dry reference when one is given. Score: the minimum of the agreeing fraction
and each expectation's score (1 met, 0 violated). Without sensor evidence, or
without any pair to compare, the agreement score is
:data:`~simready.validity.policy.SENSOR_ABSENT_SCORE` (0: no evidence, no
credit), which makes trajectory-only samples low-fidelity.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from simready.validity import policy
from simready.validity.evidence import SensorEvidence, local_actor_id
from simready.validity.gate.findings import Findings, clamp_score, count_suffix, fmt_t
from simready.validity.gate.inputs import F, GateInput, Rows
from simready.validity.gate.report import CheckResult


def _speed_lookup(rows: Rows) -> dict[str, tuple[F, F]]:
    out = {}
    for code, r in rows.actor_rows().items():
        r = r[rows.valid[r]]
        out[local_actor_id(rows.names[code])] = (rows.t[r], np.where(np.isfinite(rows.speed[r]), rows.speed[r], 0.0))
    return out


def _paired_opportunities(det: pd.DataFrame) -> pd.DataFrame:
    """Camera rows joined to the LiDAR rows of the same actor whose sweep is nearest in time (within the pair window)."""
    cam = det[det["sensor_type"] == "camera"]
    lid = det[det["sensor_type"] == "lidar"]
    if cam.empty or lid.empty:
        return pd.DataFrame()
    lid_times = np.unique(lid["t"].to_numpy(np.float64))
    lid_times = lid_times[np.isfinite(lid_times)]
    if len(lid_times) == 0:
        return pd.DataFrame()
    ct = cam["t"].to_numpy(np.float64)
    i = np.clip(np.searchsorted(lid_times, ct), 1, len(lid_times)) - 1
    j = np.clip(i + 1, 0, len(lid_times) - 1)
    nearest = np.where(np.abs(lid_times[j] - ct) < np.abs(lid_times[i] - ct), lid_times[j], lid_times[i])
    cam = cam.rename(columns={"t": "t_cam"}).assign(t_lidar=nearest)
    cam = cam[np.abs(nearest - ct) <= policy.SENSOR_PAIR_MAX_DT_S]
    lid = lid.rename(columns={"t": "t_lidar"})
    return cam.merge(lid, on=["t_lidar", "actor_id"], suffixes=("_cam", "_lid"))


def check_sensor(g: GateInput) -> CheckResult:
    ev, rows = g.evidence, g.rows
    found = Findings()
    sensor = ev.sensor
    if sensor is None:
        found.notes.append(f"no sensor evidence: score {policy.SENSOR_ABSENT_SCORE} (SENSOR_ABSENT_SCORE), "
                           "so this sample counts as low-fidelity evidence")
        return CheckResult(check="sensor", passed=True, score=clamp_score(policy.SENSOR_ABSENT_SCORE),
                           detail=found.detail("no sensor evidence: camera/LiDAR consistency unverified",
                                               evidence="absent", sub_scores={}))
    found.notes.extend(sensor.notes)
    det = sensor.detections
    sub: dict[str, float] = {}
    figures: dict[str, Any] = {"evidence": "present", "illumination": sensor.illumination, "weather": sensor.weather}
    if ev.ego_id is not None:  # the ego does not observe itself
        det = det[det["actor_id"] != local_actor_id(ev.ego_id)]
    paired = _paired_opportunities(det)
    figures["paired_opportunities"] = len(paired)

    # Position agreement of the same instance seen by both.
    both = paired[paired["detected_cam"].astype(bool) & paired["detected_lid"].astype(bool)] if len(paired) else paired
    if len(both):
        # Ground-plane distance: a body origin (camera row) and a surface centroid (LiDAR row) differ in height by design.
        pc = both[["x_cam", "y_cam"]].to_numpy(np.float64)
        pl = both[["x_lid", "y_lid"]].to_numpy(np.float64)
        diff = pc - pl
        dist = np.sqrt((diff * diff).sum(axis=1))
        comparable = np.isfinite(dist)
    else:
        dist = np.empty(0)
        comparable = np.zeros(0, bool)
    if comparable.any():
        b = both[comparable]
        dist = dist[comparable]
        speeds = _speed_lookup(rows)
        t_cam = b["t_cam"].to_numpy(np.float64)
        moved = _speeds_at(speeds, b["actor_id"].to_numpy(), t_cam) * np.abs(t_cam - b["t_lidar"].to_numpy(np.float64))
        tol = policy.SENSOR_POSITION_TOL_M + b["extent_m_cam"].to_numpy(np.float64) + b["extent_m_lid"].to_numpy(np.float64) + moved
        agree = dist <= tol
        frac = float(agree.mean())
        sub["position_agreement"] = frac
        figures["positions_compared"] = int(len(dist))
        figures["positions_agreeing"] = int(agree.sum())
        found.see(float((dist / tol).max()))
        if frac < policy.SENSOR_AGREEMENT_MIN_FRACTION:
            worst_by_actor: defaultdict[str, tuple[float, float, float, int]] = defaultdict(lambda: (-1.0, 0.0, 0.0, 0))
            for a, d, tl, t_c, ok in zip(b["actor_id"], dist, tol, b["t_cam"], agree):
                if not ok:
                    w = worst_by_actor[a]
                    worst_by_actor[a] = max(w[:3], (d, tl, t_c)) + (w[3] + 1,)
            for a, (d, tl, t_c, n) in sorted(worst_by_actor.items()):
                found.add(a, f"actor {a}: camera and LiDAR positions differ by {d:.2f} m at {fmt_t(t_c)} "
                             f"(tolerance {tl:.2f} m){count_suffix(n, 'frame')}; {frac:.0%} of pairs agree, "
                             f"{policy.SENSOR_AGREEMENT_MIN_FRACTION:.0%} needed", d / tl)
    else:
        sub["position_agreement"] = policy.SENSOR_ABSENT_SCORE
        found.notes.append("no instance detected by both camera and LiDAR with known positions: agreement unverified, "
                           f"score {policy.SENSOR_ABSENT_SCORE}")

    if len(paired):
        cam_det = paired["detected_cam"].astype(bool).to_numpy()
        lid_det = paired["detected_lid"].astype(bool).to_numpy()
        figures["camera_rate"] = round(float(cam_det.mean()), 6)
        figures["lidar_rate"] = round(float(lid_det.mean()), 6)
        if sensor.illumination == "night":
            sub["night_camera_below_lidar"] = _night_expectation(paired, cam_det, lid_det, found)
    if sensor.weather == "rain":
        if sensor.dry_reference is None:
            found.notes.append("rain without a dry reference: LiDAR attenuation not checked")
        else:
            sub["rain_attenuates_lidar"] = _rain_expectation(det, sensor, found)
    score = min(sub.values())
    figures["sub_scores"] = {k: round(v, 6) for k, v in sub.items()}
    passed = not found.texts
    summary = "camera and LiDAR agree" if passed else f"{len(found.texts)} inconsistency(ies)"
    return CheckResult(check="sensor", passed=passed, score=clamp_score(score), detail=found.detail(summary, **figures))


def _speeds_at(tracks: Mapping[str, tuple[F, F]], actors: NDArray[Any], t: F) -> F:
    """Each row's actor speed at the nearest tick at or after ``t`` (0 where unknown)."""
    out = np.zeros(len(t))
    for a in np.unique(actors):
        track = tracks.get(str(a))
        m = actors == a
        if track is None or len(track[0]) == 0:
            continue
        i = np.clip(np.searchsorted(track[0], np.nan_to_num(t[m])), 0, len(track[0]) - 1)
        out[m] = track[1][i]
    return out


def _night_expectation(paired: pd.DataFrame, cam_det: NDArray[np.bool_], lid_det: NDArray[np.bool_], found: Findings) -> float:
    cam_rate, lid_rate = float(cam_det.mean()), float(lid_det.mean())
    if cam_rate <= lid_rate:
        return 1.0
    actors = paired["actor_id"].to_numpy()
    excess = {}
    for a in np.unique(actors):
        m = actors == a
        excess[a] = (int(cam_det[m].sum()) - int(lid_det[m].sum()), int(cam_det[m].sum()), int(lid_det[m].sum()), int(m.sum()))
    worst = max(sorted(excess), key=lambda a: excess[a][0])
    _, c, lidar_n, n = excess[worst]
    found.add(worst, f"night: camera detection rate {cam_rate:.2f} exceeds LiDAR rate {lid_rate:.2f} "
                     f"(actor {worst}: camera {c}/{n} vs LiDAR {lidar_n}/{n} paired frames)")
    return policy.SENSOR_CONDITION_FAIL_SCORE


def _rain_expectation(det: pd.DataFrame, sensor: SensorEvidence, found: Findings) -> float:
    ref = sensor.dry_reference
    assert ref is not None
    if ref.returns_per_sweep is not None and sensor.lidar_returns_per_sweep is not None:
        now, before, what = sensor.lidar_returns_per_sweep, ref.returns_per_sweep, "returns per sweep"
    else:
        lid = det[det["sensor_type"] == "lidar"]
        if lid.empty or ref.detection_rate is None:
            found.notes.append("rain: no LiDAR rate on one side: attenuation not checked")
            return 1.0
        now, before, what = float(lid["detected"].astype(bool).mean()), ref.detection_rate, "detection rate"
    if now < before:
        return 1.0
    found.add("lidar", f"rain: LiDAR {what} {now:.2f} is not below the dry reference {before:.2f}")
    return policy.SENSOR_CONDITION_FAIL_SCORE
