"""Radar: a ray grid over the field of view, one detection per hit instance.

A radar frame is instantaneous at its sample time t (no scan within the
frame). Rays are cast on a grid of pitch ``ray_spacing_deg`` over
[−hfov/2, hfov/2] × [−vfov/2, vfov/2]; the hits of each entity form its
cluster, reported as one detection:

* position: mean of the cluster's hit points, reported in the radar frame
  (x boresight, y left, z up): range, azimuth ``atan2(y, x)`` (positive to
  the left), elevation ``atan2(z, hypot(x, y))``;
* radial velocity from the *relative twist*, never from finite
  differences: the target's velocity at that point, ``v_b + ω_b × (p − o_b)``,
  minus the sensor's own velocity, ``v_e + ω_e × (o_s − o_e)`` (the ego's
  lever arm), projected on the line of sight from sensor to point.
  **Sign: positive = receding** (range increasing);
* RCS estimate: ``σ = rcs_gain · Σ_hits ρ·|cos θ|·r²·Ω`` (m²) — each ray
  covers ``r²·Ω`` square metres normal to it (Ω its solid angle), weighted by
  the surface reflectance ρ and the incidence cosine; reported in dBsm;
* SNR from the radar equation relative to a reference:
  ``snr_db = snr_threshold_db + (rcs_dbsm − rcs_detect_dbsm_at_50m) − 40·log10(r / 50 m)``;
* detection probability ``1 / (1 + exp(−(snr_db − snr_threshold_db) / pd_slope_db))``.

Contributors (SPEC §11, :class:`RadarContributors`): for every detection,
the parts (bodies: an entity's rigid pieces, each with its element and
geometry hash) whose surfaces its rays hit, each with its share of the
returned power — every ray's power ∝ ``ρ·|cos θ|·Ω / r²`` (the RCS of its
patch over r⁴), summed per part over the cluster's — its hit count, its
hits' centroid in the radar frame and its own noise-free radial velocity
(the relative twist at that centroid, on its line of sight). Shares sum to
1 per detection. Noise-free: the detection's noise and draws do not touch
them.

Noise and detection draws come from the ``numpy.random.Generator`` passed in:
a (K, 3) block of standard normals (range, velocity, azimuth noise) then K
uniforms (detection), clusters in ascending compact-id order, so the draws
do not depend on ray order. Noise off (``RadarModel.noise`` False,
``--set noise=off``): nothing is drawn; the normals are taken as 0 (the
true range, azimuth and radial velocity) and the uniforms as ½ (a cluster
is detected iff its detection probability exceeds ½, i.e. its SNR exceeds
``snr_threshold_db``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from numpy.typing import NDArray

from simready.common.atomic import write_bytes_atomic
from simready.sensors_hw.models import RadarModel, Rig
from simready.raycast.geometry import SceneGeometry
from simready.raycast.hits import Hits
from simready.world.motion import TrackSample

CSV_HEADER = "range_m,azimuth_rad,elevation_rad,radial_velocity_mps,rcs_dbsm,snr_db,instance_id"
REFERENCE_RANGE_M = 50.0


@dataclass
class RadarDetections:
    """Detections of one radar frame (K rows, ascending instance id).

    Attributes:
        sensor, t_s: sensor name and frame time.
        range_m, azimuth_rad, elevation_rad, radial_velocity_mps: measured (noise included).
        rcs_dbsm, snr_db: cluster RCS estimate and SNR.
        instance_id: (K,) uint32 compact entity ids (as camera and LiDAR).
        hit_count: rays in the cluster; detection_probability: p_d used.
        true_range_m, true_azimuth_rad, true_radial_velocity_mps: noise-free values.
    """

    sensor: str
    t_s: float
    range_m: NDArray[np.float64]
    azimuth_rad: NDArray[np.float64]
    elevation_rad: NDArray[np.float64]
    radial_velocity_mps: NDArray[np.float64]
    rcs_dbsm: NDArray[np.float64]
    snr_db: NDArray[np.float64]
    instance_id: NDArray[np.uint32]
    hit_count: NDArray[np.int64]
    detection_probability: NDArray[np.float64]
    true_range_m: NDArray[np.float64]
    true_azimuth_rad: NDArray[np.float64]
    true_radial_velocity_mps: NDArray[np.float64]

    def __len__(self) -> int:
        return len(self.instance_id)

    def select(self, mask: NDArray[np.bool_]) -> "RadarDetections":
        return RadarDetections(self.sensor, self.t_s, *(getattr(self, f)[mask] for f in _ARRAY_FIELDS))


_ARRAY_FIELDS = ("range_m", "azimuth_rad", "elevation_rad", "radial_velocity_mps", "rcs_dbsm", "snr_db",
                 "instance_id", "hit_count", "detection_probability", "true_range_m", "true_azimuth_rad",
                 "true_radial_velocity_mps")


#: Columns of ``<radar>/<tick>.contributors.parquet``, one row per (detection, part), by detection then part.
CONTRIBUTOR_COLUMNS = ("detection", "instance_id", "entity", "part", "body", "element", "geometry_hash", "hits",
                       "power_share", "radial_velocity_mps", "x", "y", "z")


@dataclass
class RadarContributors:
    """The surfaces behind each detection of one radar frame (M rows, by detection then body index).

    Attributes:
        detection: (M,) row of the detection in the frame's CSV.
        instance_id: (M,) the detection's compact id; entity, element, geometry_hash: (M,) the part's.
        part: (M,) the part's rank among its entity's bodies in the scene (0, 1, …); body: (M,) the scene's body index.
        hits: (M,) rays of the cluster that hit the part.
        power_share: (M,) the part's share of the detection's returned power (sums to 1 per detection).
        radial_velocity_mps: (M,) the part's noise-free radial velocity (positive = receding).
        x, y, z: (M,) the part's hits' centroid in the radar frame (m).
    """

    detection: NDArray[np.int64]
    instance_id: NDArray[np.uint32]
    entity: NDArray[np.object_]
    part: NDArray[np.int64]
    body: NDArray[np.int64]
    element: NDArray[np.object_]
    geometry_hash: NDArray[np.object_]
    hits: NDArray[np.int64]
    power_share: NDArray[np.float64]
    radial_velocity_mps: NDArray[np.float64]
    x: NDArray[np.float64]
    y: NDArray[np.float64]
    z: NDArray[np.float64]

    def __len__(self) -> int:
        return len(self.detection)

    def table(self) -> pa.Table:
        return pa.table({k: pa.array(getattr(self, k), type=CONTRIBUTOR_TYPES[k]) for k in CONTRIBUTOR_COLUMNS})


CONTRIBUTOR_TYPES = {"detection": pa.int64(), "instance_id": pa.uint32(), "entity": pa.string(), "part": pa.int64(),
                     "body": pa.int64(), "element": pa.string(), "geometry_hash": pa.string(), "hits": pa.int64(),
                     "power_share": pa.float64(), "radial_velocity_mps": pa.float64(), "x": pa.float64(),
                     "y": pa.float64(), "z": pa.float64()}


@lru_cache(maxsize=8)
def ray_grid(model: RadarModel) -> tuple[NDArray[np.float64], float]:
    """(R, 3) unit directions in the radar frame and the solid angle of one ray (sr)."""
    step = math.radians(model.ray_spacing_deg)
    n_az = max(1, round(model.hfov_deg / model.ray_spacing_deg))
    n_el = max(1, round(model.vfov_deg / model.ray_spacing_deg))
    az = (np.arange(n_az) - (n_az - 1) / 2) * step
    el = (np.arange(n_el) - (n_el - 1) / 2) * step
    A, E = np.meshgrid(az, el)
    d = np.stack([np.cos(E) * np.cos(A), np.cos(E) * np.sin(A), np.sin(E)], axis=-1).reshape(-1, 3)
    d.setflags(write=False)
    return d, step * step


@dataclass(frozen=True)
class _Clusters:
    """Hits grouped per entity (K clusters, ascending compact id), and the clusters' rays' hit points."""

    ids: NDArray[np.uint32]
    counts: NDArray[np.int64]
    centroid_world: NDArray[np.float64]
    sigma_m2: NDArray[np.float64]
    body: NDArray[np.int32]
    ray_power: NDArray[np.float64]
    #: (M, 3) world hit point of each of the clusters' rays ``h`` (:func:`_cluster_hits`' order).
    points: NDArray[np.float64]


def _cluster_hits(hits: Hits, model: RadarModel) -> NDArray[np.intp]:
    """The rays that count (hits not of an excluded class), stably sorted by compact id: the clusters in order."""
    h = hits.hit_index
    if model.exclude_semantic_ids:
        h = h[~np.isin(hits.semantic[h], model.exclude_semantic_ids)]
    return h[np.argsort(hits.compact_id[h], kind="stable")]


def _clusters(scene: SceneGeometry, hits: Hits, model: RadarModel, ray_solid_angle_sr: float,
              h: NDArray[np.intp]) -> _Clusters:
    """The clusters of the rays ``h`` (:func:`_cluster_hits`, sorted by compact id).

    Each per-ray quantity is computed for the rays ``h`` alone (a radar frame hits a fraction of its grid:
    ``Hits.normals_of``, ``dir_world_of``, ``point_world_of``), with the operations the whole-frame arrays
    (``normal_world``, ``dir_world``, ``point_world``) apply row by row, so the values are the same; the clusters are the runs of equal ids in ``h`` (what ``np.unique`` of the
    sorted ids gives, without sorting them again).
    """
    cid = hits.compact_id[h]
    if len(cid) == 0:
        return _Clusters(np.zeros(0, np.uint32), np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros(0),
                         np.zeros(0, np.int32), np.zeros(0), np.zeros((0, 3)))
    start = np.flatnonzero(np.concatenate(([True], cid[1:] != cid[:-1])))
    ids, counts = cid[start], np.diff(np.append(start, len(cid)))
    r = hits.distance_m[h]
    cos_inc = np.abs(np.einsum("ij,ij->i", hits.normals_of(h), hits.dir_world_of(h)))
    body = hits.body_index[h]
    area = scene.reflectance_of_body[body] * cos_inc * r * r * ray_solid_angle_sr
    points = hits.point_world_of(h)
    centroid = np.add.reduceat(points, start, axis=0) / counts[:, None]
    # Each ray's returned power (∝ its patch's RCS over r⁴), for the contributor table.
    return _Clusters(ids.astype(np.uint32), counts.astype(np.int64), centroid,
                     model.rcs_gain * np.add.reduceat(area, start), body[start], area / (r * r) ** 2, points)


def _point_velocity(scene: SceneGeometry, body_index: int, point_world: NDArray[np.float64], t_s: float
                    ) -> NDArray[np.float64]:
    """World velocity of a point rigidly attached to a body: ``v + ω × (p − origin)``."""
    if scene.is_static(body_index):
        return np.zeros(3)
    smp = scene.bodies[body_index].track.sample([t_s])
    v: NDArray[np.float64] = smp.velocity_mps[0] + np.cross(smp.angular_velocity_rps[0], point_world - smp.position_m[0])
    return v


def _points_velocity(scene: SceneGeometry, body_index: NDArray[np.integer], point_world: NDArray[np.float64],
                     t_s: float) -> NDArray[np.float64]:
    """(K, 3) :func:`_point_velocity` of each body and point: zero for static bodies without a call each (a street's
    clusters are mostly static), the moving ones' one by one."""
    out = np.zeros((len(body_index), 3))
    for i, b in enumerate(body_index.tolist()):
        if not scene.is_static(b):
            out[i] = _point_velocity(scene, b, point_world[i], t_s)
    return out


def _sensor_velocity(ego: TrackSample, radar_origin_world: NDArray[np.float64]) -> NDArray[np.float64]:
    """World velocity of the radar: the ego's ``v + ω × (o_radar − o_ego)`` (the lever arm), from the ego's track
    sampled at the frame's time (what ``PoseTrack.twist_at`` and ``pose_at`` sample)."""
    v, w = ego.velocity_mps[0], ego.angular_velocity_rps[0]
    out: NDArray[np.float64] = v + np.cross(w, radar_origin_world - ego.matrices()[0][:3, 3])
    return out


def _contributors(scene: SceneGeometry, hits: Hits, h: NDArray[np.intp], c: _Clusters, R: NDArray[np.float64],
                  o_s: NDArray[np.float64], v_s: NDArray[np.float64], v_cluster: NDArray[np.float64], t_s: float,
                  keep: NDArray[np.bool_]) -> RadarContributors:
    """Each kept cluster's parts (bodies), by cluster then body index (``h``: the clusters' rays; ``v_cluster``:
    (K, 3) each cluster's relative velocity at its centroid, reused for a cluster of one part; ``keep``: (K,) the
    clusters detected).

    The rays come sorted by cluster; where they are already by body within each cluster too (a street's clusters
    are mostly one body each) the sort by (cluster, body) is the identity and is skipped, and where every cluster
    is one part, the parts' centroids are the clusters' (the same sums over the same rays, reused); the parts'
    names are the scene's (:attr:`SceneGeometry.names_of_body`, :attr:`~SceneGeometry.part_of_body`)."""
    ids = c.ids
    cluster = np.repeat(np.arange(len(ids)), c.counts)
    body = hits.body_index[h].astype(np.int64)
    key = cluster * (len(scene.bodies) + 1) + body
    points, power = c.points, c.ray_power
    if len(key) > 1 and not bool(np.all(key[1:] >= key[:-1])):
        order = np.lexsort((body, cluster))
        body, cluster, key = body[order], cluster[order], key[order]
        points, power = points[order], power[order]
    first = np.flatnonzero(np.diff(key, prepend=-1)) if len(key) else np.zeros(0, np.int64)
    counts = np.diff(np.append(first, len(key)))
    part_cluster, part_body = cluster[first], body[first]
    part_power = np.add.reduceat(power, first) if len(first) else np.zeros(0)
    if len(first) == len(ids):  # one part a cluster: the parts' rays are the clusters'
        centroid = c.centroid_world
    else:
        centroid = np.add.reduceat(points, first, axis=0) / counts[:, None] if len(first) else np.zeros((0, 3))
    total = np.bincount(part_cluster, weights=part_power, minlength=len(ids))
    rank = np.cumsum(keep) - 1
    sel = keep[part_cluster] if len(part_cluster) else np.zeros(0, bool)
    pc, pb, pp, pn, pw = part_cluster[sel], part_body[sel], part_power[sel], counts[sel], centroid[sel]
    single = np.bincount(pc, minlength=len(ids))[pc] == 1 if len(pc) else np.zeros(0, bool)
    v_rel = np.empty((len(pc), 3))
    v_rel[single] = v_cluster[pc[single]]
    several = ~single  # a part of a cluster of several: its own velocity at its centroid
    v_rel[several] = _points_velocity(scene, pb[several], pw[several], t_s) - v_s
    los = pw - o_s
    dist = np.linalg.norm(los, axis=1)
    vr = np.einsum("ij,ij->i", v_rel, los / np.maximum(dist, 1e-12)[:, None])
    local = los @ R
    names = scene.names_of_body
    return RadarContributors(
        rank[pc].astype(np.int64), ids[pc].astype(np.uint32), names["entity"][pb], scene.part_of_body[pb],
        pb.astype(np.int64), names["element"][pb], names["geometry_hash"][pb], pn.astype(np.int64), pp / total[pc], vr,
        local[:, 0], local[:, 1], local[:, 2])


def detect(scene: SceneGeometry, rig: Rig, radar_name: str, t_s: float, rng: np.random.Generator,
           *, ignore: Iterable[str] = (), keep_undetected: bool = False,
           contributors: bool = False) -> RadarDetections | tuple[RadarDetections, RadarContributors]:
    """One radar frame at ``t_s``: detections that pass the detection draw (all clusters if ``keep_undetected``);
    with ``contributors``, also the parts behind each of them (:class:`RadarContributors`)."""
    model = rig.sensors[radar_name]
    if not isinstance(model, RadarModel):
        raise TypeError(f"{radar_name} is not a radar")
    dirs_s, omega = ray_grid(model)
    # Rig.T_world_sensor's product, the ego's track sampled once for it and for the radar's own velocity.
    ego = rig.body.sample([t_s])
    T = (ego.matrices() @ rig.T_body_sensor(radar_name))[0]
    R, o_s = T[:3, :3], T[:3, 3]
    hits = scene.cast(o_s, dirs_s @ R.T, t_s, model.max_range_m, model.min_range_m, ignore=ignore)
    h = _cluster_hits(hits, model)
    c = _clusters(scene, hits, model, omega, h)
    k = len(c.ids)
    v_s = _sensor_velocity(ego, o_s)
    v_rel = _points_velocity(scene, c.body, c.centroid_world, t_s) - v_s
    los = c.centroid_world - o_s
    true_range = np.linalg.norm(los, axis=1)
    true_vr = np.einsum("ij,ij->i", v_rel, los / np.maximum(true_range, 1e-12)[:, None])
    local = los @ R  # radar frame
    true_az = np.arctan2(local[:, 1], local[:, 0])
    elev = np.arctan2(local[:, 2], np.hypot(local[:, 0], local[:, 1]))
    rcs_dbsm = 10.0 * np.log10(np.maximum(c.sigma_m2, 1e-12))
    snr = (model.snr_threshold_db + rcs_dbsm - model.rcs_detect_dbsm_at_50m
           - 40.0 * np.log10(np.maximum(true_range, 1e-3) / REFERENCE_RANGE_M))
    p_d = 1.0 / (1.0 + np.exp(-(snr - model.snr_threshold_db) / model.pd_slope_db))
    if model.noise:
        noise = rng.standard_normal((k, 3))  # range, velocity, azimuth
        detected = rng.random(k) < p_d
    else:
        noise, detected = np.zeros((k, 3)), 0.5 < p_d
    out = RadarDetections(
        radar_name, float(t_s),
        true_range + model.range_noise_m * noise[:, 0],
        true_az + math.radians(model.azimuth_noise_deg) * noise[:, 2],
        elev,
        true_vr + model.velocity_noise_mps * noise[:, 1],
        rcs_dbsm, snr, c.ids, c.counts, p_d, true_range, true_az, true_vr,
    )
    kept = np.ones(k, bool) if keep_undetected else np.asarray(detected, bool)
    det = out if keep_undetected else out.select(detected)
    if not contributors:
        return det
    return det, _contributors(scene, hits, h, c, R, o_s, v_s, v_rel, t_s, kept)


def radar_csv_bytes(detections: RadarDetections) -> bytes:
    """The bytes of :func:`write_radar_csv`."""
    lines = [CSV_HEADER]
    for row in zip(detections.range_m, detections.azimuth_rad, detections.elevation_rad,
                   detections.radial_velocity_mps, detections.rcs_dbsm, detections.snr_db,
                   detections.instance_id):
        lines.append("{:.4f},{:.6f},{:.6f},{:.4f},{:.2f},{:.2f},{:d}".format(*row[:6], int(row[6])))
    return ("\n".join(lines) + "\n").encode("utf-8")


def write_radar_csv(path: str | Path, detections: RadarDetections) -> Path:
    """CSV with header ``range_m,azimuth_rad,elevation_rad,radial_velocity_mps,rcs_dbsm,snr_db,instance_id``."""
    return write_bytes_atomic(path, radar_csv_bytes(detections))


#: Codec of ``<radar>/<tick>.contributors.parquet``. A frame's table is a few rows, where zstd's per-column setup is
#: most of the file's cost and finds less than LZ4: a 12-row street frame's table took 0.83 ms with zstd and 0.22 ms
#: with LZ4, 4 945 and 4 800 bytes.
CONTRIBUTOR_COMPRESSION = "lz4"

#: The rest of the contributor table's Parquet settings. A table of a few rows is mostly fixed costs per column and
#: per file: no column statistics (a reader reads the frame's table whole), no dictionaries (a few strings each),
#: and no Arrow schema beside Parquet's (its types give the same columns back: int64, uint32, string, float64).
#: A 13-row street frame's table 0.25 -> 0.16 ms (CPU, alone) and 4 982 -> 2 386 bytes, the same values read back.
CONTRIBUTOR_PARQUET = {"compression": CONTRIBUTOR_COMPRESSION, "write_statistics": False, "use_dictionary": False,
                       "store_schema": False}


def contributors_parquet(contributors: RadarContributors) -> bytes:
    """The bytes of ``<radar>/<tick>.contributors.parquet`` (:data:`CONTRIBUTOR_PARQUET`), columns
    :data:`CONTRIBUTOR_COLUMNS`, encoded in Arrow's memory (no Python file object to call per write)."""
    sink = pa.BufferOutputStream()
    pq.write_table(contributors.table(), sink, **CONTRIBUTOR_PARQUET)
    data: bytes = sink.getvalue().to_pybytes()
    return data


def write_contributors(path: str | Path, contributors: RadarContributors) -> Path:
    """``<radar>/<tick>.contributors.parquet`` (:func:`contributors_parquet`), written atomically."""
    return write_bytes_atomic(path, contributors_parquet(contributors))


def read_radar_csv(path: str | Path) -> dict[str, NDArray[Any]]:
    """Columns of a radar CSV written by :func:`write_radar_csv`, by header name (``instance_id`` uint32, the
    rest float64); a file without that header row is refused (ValueError)."""
    lines = Path(path).read_text(encoding="ascii").splitlines()
    if not lines or lines[0] != CSV_HEADER:
        raise ValueError(f"{path}: the header row is not {CSV_HEADER!r}")
    names = CSV_HEADER.split(",")
    table = np.array([v for line in lines[1:] for v in line.split(",")], np.float64).reshape(-1, len(names))
    return {k: table[:, i].astype(np.uint32) if k == "instance_id" else table[:, i] for i, k in enumerate(names)}
