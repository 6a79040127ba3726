"""Radar: radial velocity from the relative twist (positive = receding), RCS/SNR, CSV (SPEC §10)."""

from __future__ import annotations

import numpy as np
import pytest

from simready.testing.street import box_body, linear_track
from simready.sensors_hw.models import Rig
from simready.sensors_hw.radar import CSV_HEADER, detect, write_radar_csv
from simready.raycast import SceneGeometry
from simready.world import frames as F
from simready.world.motion import PoseTrack

QUIET = {"range_noise_m": 0.0, "velocity_noise_mps": 0.0, "azimuth_noise_deg": 0.0}


def radar(**kw) -> dict:
    return {"rate_hz": 13.0, "phase_s": 0.0, "hfov_deg": 60.0, "vfov_deg": 10.0, "max_range_m": 150.0, **QUIET, **kw}


def rig_with(model: dict, body: PoseTrack | None = None, mount=(0.0, 0.0, 0.75)) -> Rig:
    return Rig.from_dict({"mounts": {"radar": {"type": "radar", "translation_m": list(mount)}},
                          "sensors": {"radar": model}}, body=body)


def car(track: PoseTrack, name: str = "t/actor:car") -> SceneGeometry:
    return SceneGeometry([box_body(name, (4.5, 1.9, 1.5), track, 10, (0.5, 0.5, 0.5), 0.6)])


def test_target_moving_away_reports_plus_its_speed():
    scene = car(linear_track((22.25, 0.0, 0.0), (5.0, 0.0, 0.0), t_end_s=1.0))
    det = detect(scene, rig_with(radar()), "radar", 0.5, np.random.default_rng(0))
    assert len(det) == 1 and det.instance_id[0] == scene.compact_ids["t/actor:car"]
    assert det.radial_velocity_mps[0] == pytest.approx(5.0, abs=0.02)  # + = receding
    assert det.range_m[0] == pytest.approx(22.5, abs=0.05)  # rear face at 20 + 2.5 m
    assert abs(det.azimuth_rad[0]) < 1e-3 and det.hit_count[0] > 50
    approaching = car(linear_track((22.25, 0.0, 0.0), (-5.0, 0.0, 0.0), t_end_s=1.0))
    assert detect(approaching, rig_with(radar()), "radar", 0.5, np.random.default_rng(0)).radial_velocity_mps[0] \
        == pytest.approx(-5.0, abs=0.02)


def test_crossing_target_reports_about_zero():
    scene = car(linear_track((30.0, -5.0, 0.0), (0.0, 10.0, 0.0), t_end_s=1.0))
    det = detect(scene, rig_with(radar()), "radar", 0.5, np.random.default_rng(0))
    assert abs(det.azimuth_rad[0]) < 0.03
    assert abs(det.radial_velocity_mps[0]) < 0.3


def test_rotating_ego_lever_arm_is_accounted_for():
    """Radar 2 m left of a yawing ego's origin, looking forward at a static wall: it moves backward at 2·ω."""
    omega = 1.0
    t = np.arange(0, 51) * 0.02
    ego = PoseTrack(t, np.zeros((len(t), 3)), F.quat_from_yaw(omega * t), np.zeros((len(t), 3)),
                    np.tile([0.0, 0.0, omega], (len(t), 1)))
    wall = SceneGeometry([box_body("t/instance:wall", (1.0, 6.0, 3.0), PoseTrack.constant(
        F.make_transform(np.eye(3), [20.5, 2.0, 0.0])), 3, (0.5, 0.5, 0.5), 0.6)])
    det = detect(wall, rig_with(radar(), ego, mount=(0.0, 2.0, 0.75)), "radar", 0.0, np.random.default_rng(0))
    # Sensor velocity ω ẑ × (0, 2, 0) = (−2ω, 0, 0): away from the wall, so the wall recedes at +2ω.
    assert det.radial_velocity_mps[0] == pytest.approx(2.0 * omega, abs=0.02)


def test_detection_probability_falls_with_rcs_and_range():
    near = car(linear_track((12.25, 0.0, 0.0), (0.0, 0.0, 0.0), t_end_s=1.0))
    det = detect(near, rig_with(radar()), "radar", 0.5, np.random.default_rng(0))
    assert det.detection_probability[0] > 0.99 and det.snr_db[0] > 20
    tiny = SceneGeometry([box_body("t/instance:post", (0.05, 0.05, 1.5), PoseTrack.constant(
        F.make_transform(np.eye(3), [140.0, 0.0, 0.0])), 3, (0.5, 0.5, 0.5), 0.05)])
    rig = rig_with(radar(ray_spacing_deg=0.02, hfov_deg=2.0, vfov_deg=2.0))
    weak = detect(tiny, rig, "radar", 0.0, np.random.default_rng(0), keep_undetected=True)
    assert len(weak) == 1 and weak.detection_probability[0] < 1e-3
    assert len(detect(tiny, rig, "radar", 0.0, np.random.default_rng(0))) == 0


def test_noise_comes_from_the_stream(tmp_path):
    scene = car(linear_track((22.25, 0.0, 0.0), (5.0, 0.0, 0.0), t_end_s=1.0))
    rig = rig_with(radar(range_noise_m=0.2, velocity_noise_mps=0.1, azimuth_noise_deg=0.5))
    a = detect(scene, rig, "radar", 0.5, np.random.default_rng(3))
    b = detect(scene, rig, "radar", 0.5, np.random.default_rng(3))
    assert a.range_m[0] == b.range_m[0] and a.range_m[0] != a.true_range_m[0]
    path = write_radar_csv(tmp_path / "00000000.csv", a)
    lines = path.read_text().splitlines()
    assert lines[0] == CSV_HEADER == "range_m,azimuth_rad,elevation_rad,radial_velocity_mps,rcs_dbsm,snr_db,instance_id"
    fields = lines[1].split(",")
    assert len(fields) == 7 and int(fields[6]) == a.instance_id[0]
    assert float(fields[0]) == pytest.approx(a.range_m[0], abs=1e-4)


def test_contributors_split_one_detection_between_two_reflectors_in_one_cell():
    """Issue 26 item 7: one entity of two plates side by side (mirror images about the boresight, reflectance 0.8
    and 0.4) is one detection; its contributor table has both parts with power shares 0.8 / 1.2 and 0.4 / 1.2
    exactly (the same rays' geometry on each), each with its own radial velocity (the right plate recedes at 2 m/s
    along x: v·loŝ at its centroid; the left one is still)."""
    import dataclasses

    from simready.raycast.geometry import Body

    def plate(y0: float, y1: float, rho: float, track: PoseTrack, element: str) -> Body:
        b = box_body("t/actor:rig", (0.2, y1 - y0, 1.5), track, 10, (0.5, 0.5, 0.5), rho,
                     centre_body_m=(20.0, 0.5 * (y0 + y1), 0.75))
        return dataclasses.replace(b, element=element)

    still = PoseTrack.constant(np.eye(4))
    moving = linear_track((0.0, 0.0, 0.0), (2.0, 0.0, 0.0), t_end_s=1.0)
    scene = SceneGeometry([plate(0.05, 1.0, 0.8, still, "left.obj"), plate(-1.0, -0.05, 0.4, moving, "right.obj")])
    rig = rig_with(radar())
    det, con = detect(scene, rig, "radar", 0.0, np.random.default_rng(0), contributors=True)
    assert len(det) == 1 and len(con) == 2
    assert con.detection.tolist() == [0, 0] and con.entity.tolist() == ["t/actor:rig"] * 2
    assert con.part.tolist() == [0, 1] and con.hits[0] == con.hits[1] and con.hits.sum() == det.hit_count[0]
    assert con.power_share[0] == pytest.approx(0.8 / 1.2, rel=1e-12)
    assert con.power_share[1] == pytest.approx(0.4 / 1.2, rel=1e-12)
    assert con.y[0] > 0.0 > con.y[1]
    o = rig.T_world_sensor("radar", 0.0)[:3, 3]
    c = np.array([con.x[1], con.y[1], con.z[1]]) + o  # radar axes are the world's here
    assert con.radial_velocity_mps[1] == pytest.approx(2.0 * (c - o)[0] / np.linalg.norm(c - o), rel=1e-9)
    assert con.radial_velocity_mps[0] == pytest.approx(0.0, abs=1e-12)


def test_contributors_follow_the_detected_rows_and_are_written_as_parquet(tmp_path):
    import pyarrow.parquet as pq

    from simready.sensors_hw.radar import CONTRIBUTOR_COLUMNS, write_contributors

    scene = SceneGeometry([box_body("t/actor:a", (4.5, 1.9, 1.5), linear_track((20.0, 4.0, 0.0), (0.0, 0.0, 0.0), t_end_s=1.0),
                                    10, (0.5, 0.5, 0.5), 0.6),
                           box_body("t/actor:b", (4.5, 1.9, 1.5), linear_track((30.0, -4.0, 0.0), (3.0, 0.0, 0.0), t_end_s=1.0),
                                    10, (0.5, 0.5, 0.5), 0.6)])
    det, con = detect(scene, rig_with(radar()), "radar", 0.2, np.random.default_rng(0), contributors=True)
    assert len(det) == 2 and con.detection.tolist() == [0, 1] and con.instance_id.tolist() == det.instance_id.tolist()
    assert con.power_share.tolist() == [1.0, 1.0]
    np.testing.assert_allclose(con.radial_velocity_mps, det.true_radial_velocity_mps, atol=1e-9)
    table = pq.read_table(write_contributors(tmp_path / "c.parquet", con))
    assert tuple(table.column_names) == CONTRIBUTOR_COLUMNS and table.num_rows == 2
    # Stored without Arrow's schema, statistics or dictionaries: Parquet's own types give the same table back.
    assert table.equals(con.table()) and table.schema == con.table().schema


def test_clusters_of_the_hit_rays_equal_the_whole_frame_numpy_reference():
    """Issue 29 item 4: a frame's clusters are computed from its hit rays alone (normals, directions and points of
    the rays ``h``, the clusters as runs of the sorted ids): bit for bit what the whole-frame arrays
    (``Hits.normal_world``, ``dir_world``, ``point_world``) and ``np.unique`` gave, moving and static bodies
    hit, rays cast in float64 and float32."""
    from simready.sensors_hw.radar import _cluster_hits, _clusters, ray_grid

    def reference(scene, hits, model, omega, h):
        ids, start, counts = np.unique(hits.compact_id[h], return_index=True, return_counts=True)
        r = hits.distance_m[h]
        cos_inc = np.abs(np.einsum("ij,ij->i", hits.normal_world[h], hits.dir_world[h]))
        area = scene.reflectance_of_body[hits.body_index[h]] * cos_inc * r * r * omega
        centroid = np.add.reduceat(hits.point_world[h], start, axis=0) / counts[:, None]
        return (ids.astype(np.uint32), counts.astype(np.int64), centroid, model.rcs_gain * np.add.reduceat(area, start),
                hits.body_index[h][start], area / (r * r) ** 2, hits.point_world[h])

    wall = box_body("t/instance:wall", (1.0, 30.0, 3.0), PoseTrack.constant(F.make_transform(np.eye(3), [40.0, 0, 0])),
                    3, (0.5, 0.5, 0.5), 0.3)
    scene = SceneGeometry([box_body("t/actor:a", (4.5, 1.9, 1.5), linear_track((20.0, 4.0, 0.0), (0.0, 2.0, 0.0), t_end_s=1.0),
                                    10, (0.5, 0.5, 0.5), 0.6),
                           box_body("t/actor:b", (4.5, 1.9, 1.5), linear_track((30.0, -4.0, 0.0), (3.0, 0.5, 0.0),
                                                                               t_end_s=1.0), 10, (0.5, 0.5, 0.5), 0.7),
                           wall])
    rig = rig_with(radar())
    model = rig.sensors["radar"]
    dirs, omega = ray_grid(model)
    T = rig.T_world_sensor("radar", 0.3)
    for d in (dirs @ T[:3, :3].T, (dirs @ T[:3, :3].T).astype(np.float32)):
        hits = scene.cast(T[:3, 3], d, 0.3, model.max_range_m, model.min_range_m)
        h = _cluster_hits(hits, model)
        got = _clusters(scene, hits, model, omega, h)
        want = reference(scene, hits, model, omega, h)
        assert len(got.ids) == 3
        for a, b in zip((got.ids, got.counts, got.centroid_world, got.sigma_m2, got.body, got.ray_power, got.points),
                        want):
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _contributors_reference(scene, hits, h, c, R, o_s, v_s, v_cluster, t_s, keep):
    """The contributor table's numpy reference: every frame's rays sorted by (cluster, body), each part's sums over
    its own rays, each part of a cluster of several with its own point velocity, the strings looked up a row at a
    time (what ``_contributors`` computed before its shortcuts)."""
    from simready.sensors_hw.radar import RadarContributors, _point_velocity

    start = np.concatenate([[0], np.cumsum(c.counts)[:-1]]).astype(np.int64)
    cluster = np.repeat(np.arange(len(c.ids)), np.diff(np.append(start, len(h))))
    body = hits.body_index[h].astype(np.int64)
    order = np.lexsort((body, cluster))
    body, cluster = body[order], cluster[order]
    key = cluster * (len(scene.bodies) + 1) + body
    first = np.flatnonzero(np.diff(key, prepend=-1))
    counts = np.diff(np.append(first, len(key)))
    part_cluster, part_body = cluster[first], body[first]
    part_power = np.add.reduceat(c.ray_power[order], first)
    centroid = np.add.reduceat(c.points[order], first, axis=0) / counts[:, None]
    total = np.bincount(part_cluster, weights=part_power, minlength=len(c.ids))
    rank = np.cumsum(keep) - 1
    sel = keep[part_cluster]
    pc, pb, pp, pn, pw = part_cluster[sel], part_body[sel], part_power[sel], counts[sel], centroid[sel]
    single = np.bincount(pc, minlength=len(c.ids))[pc] == 1
    v_rel = np.array([v_cluster[k] if one else _point_velocity(scene, int(b), p, t_s) - v_s
                      for k, one, b, p in zip(pc.tolist(), single.tolist(), pb, pw)]).reshape(-1, 3)
    los = pw - o_s
    vr = np.einsum("ij,ij->i", v_rel, los / np.maximum(np.linalg.norm(los, axis=1), 1e-12)[:, None])
    local = los @ R
    ranks, seen = [], {}
    for b in scene.bodies:
        ranks.append(seen.get(b.entity_id, 0))
        seen[b.entity_id] = ranks[-1] + 1
    names = {k: np.array([getattr(scene.bodies[b], k) for b in pb.tolist()], dtype=object)
             for k in ("entity_id", "element", "geometry_hash")}
    return RadarContributors(rank[pc].astype(np.int64), c.ids[pc].astype(np.uint32), names["entity_id"],
                             np.array(ranks, np.int64)[pb], pb, names["element"], names["geometry_hash"], pn, pp / total[pc],
                             vr, local[:, 0], local[:, 1], local[:, 2])


def test_contributors_equal_their_numpy_reference_bit_for_bit(monkeypatch):
    """Issue 29 (the contributor table's cost): the rays' sort by (cluster, body) skipped where it is the identity,
    the parts' centroids taken from the clusters' where every cluster is one part, the velocities and names
    vectorized: the same table bit for bit as the reference, over scenes of entities of one to three parts
    (plates side by side, static or moving), detected or not."""
    import dataclasses

    import simready.sensors_hw.radar as radar_module

    calls = []
    real = radar_module._contributors
    monkeypatch.setattr(radar_module, "_contributors", lambda *a: (calls.append(a), real(*a))[1])
    rng = np.random.default_rng(5)
    several = one = 0
    for trial in range(40):
        bodies = []
        for e in range(int(rng.integers(1, 4))):
            x, y0 = rng.uniform(10.0, 60.0), rng.uniform(-15.0, 15.0)
            for p in range(int(rng.integers(1, 4))):
                track = (PoseTrack.constant(np.eye(4)) if rng.random() < 0.5 else
                         linear_track((0.0, 0.0, 0.0), (rng.uniform(-3, 3), rng.uniform(-3, 3), 0.0), t_end_s=1.0))
                b = box_body(f"t/actor:e{e}", (rng.uniform(0.1, 1.0), rng.uniform(0.2, 1.0), 1.5), track, 10,
                             (0.5, 0.5, 0.5), rng.uniform(0.1, 0.9),
                             centre_body_m=(x + rng.uniform(-0.5, 0.5), y0 + p * rng.uniform(0.3, 1.2), 0.75))
                bodies.append(dataclasses.replace(b, element=f"p{p}.obj"))
        scene = SceneGeometry(bodies)
        rig = rig_with(radar(range_noise_m=0.2, velocity_noise_mps=0.1, azimuth_noise_deg=0.5))
        for undetected in (False, True):
            _, got = detect(scene, rig, "radar", 0.3, np.random.default_rng(trial), contributors=True,
                            keep_undetected=undetected)
            want = _contributors_reference(*calls[-1])
            assert got.table().equals(want.table())
            for name in ("power_share", "radial_velocity_mps", "x", "y", "z"):
                assert getattr(got, name).tobytes() == getattr(want, name).tobytes()
            per_detection = np.bincount(got.detection) if len(got) else np.zeros(0, np.int64)
            several += int((per_detection > 1).sum())
            one += int((per_detection == 1).sum())
    assert several > 20 and one > 20  # both paths taken
