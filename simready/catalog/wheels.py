"""Vehicles as vehicles (issue 30): an entry's wheels found among its render parts, and the figures a chassis needs.

Input is the render mesh as written (body frame: x forward, y left, z up, metres; origin at the footprint's
centre on the ground) with its parts. A wheel is a part, or a few parts sharing one centre (a tyre and its rim),
that is **round about the y axis**: its x and z extents agree within :data:`ROUND_REL` and its y extent (the
tread width) is the smallest. Wheels are found

1. by name: parts whose name says ``wheel``, ``tire`` or ``tyre`` (not ``steering``), when at least two axles of
   them are round; otherwise
2. by shape: four round parts of one radius (within :data:`SAME_RADIUS_REL`) touching the ground plane at the
   corners: two axles, each with a wheel on either side of the centre line.

Wheels sharing an x (within half a radius) are one axle. From them: ``wheelbase_m`` (front axle x − rear axle x),
``track_m`` (mean over the axles of the left wheels' mean y − the right wheels'), ``wheel_radius_m`` (mean), and
``ground_clearance_m``: the lowest body point above the ground under the wheels, over the body's vertices outside
every wheel's circle in the x–z plane (hubs, brakes and steering knuckles at a wheel are not the underside).
All figures are rounded to the file's 1 µm grid, so the record is a function of render.obj alone and
certification recomputes it (:func:`vehicle_record`).
"""

from __future__ import annotations

import re

import numpy as np
from numpy.typing import NDArray

from simready.catalog.contract import VehicleRecord, Wheel
from simready.catalog.meshio import ObjMesh

#: x and z extents of a wheel agree within this fraction of the larger.
ROUND_REL = 0.15
#: Wheels found by shape have radii within this fraction of their median.
SAME_RADIUS_REL = 0.05
#: A wheel found by shape touches the ground: its lowest point within this fraction of its radius of z = 0.
GROUND_REL = 0.05
_WHEEL_NAME = re.compile(r"wheel|tire|tyre", re.IGNORECASE)
_NOT_WHEEL_NAME = re.compile(r"steer", re.IGNORECASE)
_DECIMALS = 6


def _um(x: float | np.floating) -> float:
    return float(round(float(x), _DECIMALS)) + 0.0


def _part_points(mesh: ObjMesh) -> dict[str, NDArray[np.float64]]:
    """Each part's vertices (a part's name may appear in several groups)."""
    out: dict[str, list[NDArray[np.float64]]] = {}
    for name, first, count in mesh.groups:
        idx = np.unique(mesh.faces[first:first + count])
        out.setdefault(name, []).append(mesh.vertices[idx])
    return {name: np.concatenate(v) for name, v in out.items() if sum(len(x) for x in v)}


def _round_wheel(parts: list[str], points: NDArray[np.float64]) -> Wheel | None:
    lo, hi = points.min(axis=0), points.max(axis=0)
    ext = hi - lo
    diameter = max(ext[0], ext[2])
    if diameter <= 0 or abs(ext[0] - ext[2]) > ROUND_REL * diameter or ext[1] >= diameter:
        return None
    centre = (lo + hi) / 2
    return Wheel(parts=sorted(parts), center_m=tuple(_um(c) for c in centre),
                 radius_m=_um(diameter / 2), width_m=_um(ext[1]))


def _centre_and_radius(pts: NDArray[np.float64]) -> tuple[NDArray[np.float64], float]:
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    return (lo + hi) / 2, float(max(hi[0] - lo[0], hi[2] - lo[2])) / 2


def _merged(candidates: dict[str, NDArray[np.float64]]) -> list[Wheel]:
    """Round wheels from the candidate parts; parts whose centres coincide within half a radius (a tyre and its
    rim) are one wheel. Parts in name order, so the result does not depend on the file's order."""
    clusters: list[list[str]] = []
    for name in sorted(candidates):
        centre, size = _centre_and_radius(candidates[name])
        for names in clusters:
            c, r = _centre_and_radius(np.concatenate([candidates[n] for n in names]))
            if np.linalg.norm(centre - c) <= 0.5 * max(size, r):
                names.append(name)
                break
        else:
            clusters.append([name])
    wheels = [_round_wheel(names, np.concatenate([candidates[n] for n in names])) for names in clusters]
    return [w for w in wheels if w is not None]


def _axles(wheels: list[Wheel]) -> list[list[Wheel]]:
    """Wheels grouped by x (within half the larger radius), front axle first."""
    axles: list[list[Wheel]] = []
    for w in sorted(wheels, key=lambda w: (-w.center_m[0], w.center_m[1])):
        if axles and abs(axles[-1][0].center_m[0] - w.center_m[0]) <= 0.5 * max(w.radius_m, axles[-1][0].radius_m):
            axles[-1].append(w)
        else:
            axles.append([w])
    return axles


def _by_shape(points: dict[str, NDArray[np.float64]]) -> list[Wheel]:
    """Four round parts of one radius on the ground, at the corners (two axles, a wheel either side)."""
    round_parts = [w for w in (_round_wheel([n], p) for n, p in points.items()) if w is not None]
    grounded = [w for w in round_parts if abs(w.center_m[2] - w.radius_m) <= GROUND_REL * w.radius_m]
    if len(grounded) < 4:
        return []
    radius = float(np.median([w.radius_m for w in grounded]))
    same = [w for w in grounded if abs(w.radius_m - radius) <= SAME_RADIUS_REL * radius]
    axles = _axles(same)
    if len(same) != 4 or len(axles) != 2 or any(sorted(np.sign(w.center_m[1]) for w in a) != [-1, 1] for a in axles):
        return []
    return same


def _record(wheels: list[Wheel], found_by: str, body: NDArray[np.float64]) -> VehicleRecord | None:
    axles = _axles(wheels)
    if len(axles) < 2:
        return None
    tracks = []
    for axle in axles:
        left = [w.center_m[1] for w in axle if w.center_m[1] > 0]
        right = [w.center_m[1] for w in axle if w.center_m[1] < 0]
        tracks.append(float(np.mean(left) - np.mean(right)) if left and right else 0.0)
    front = float(np.mean([w.center_m[0] for w in axles[0]]))
    rear = float(np.mean([w.center_m[0] for w in axles[-1]]))
    ground = min(w.center_m[2] - w.radius_m for w in wheels)
    clearance = None
    if len(body):
        outside = np.ones(len(body), dtype=bool)
        for w in wheels:
            outside &= np.hypot(body[:, 0] - w.center_m[0], body[:, 2] - w.center_m[2]) > w.radius_m
        if outside.any():
            clearance = _um(float(body[outside, 2].min()) - ground)
    return VehicleRecord(found_by=found_by, wheels=sorted(wheels, key=lambda w: w.parts),
                         wheel_radius_m=_um(np.mean([w.radius_m for w in wheels])), front_axle_x_m=_um(front),
                         rear_axle_x_m=_um(rear), wheelbase_m=_um(front - rear), track_m=_um(np.mean(tracks)),
                         ground_clearance_m=clearance)


def vehicle_record(render: ObjMesh) -> VehicleRecord | None:
    """The wheels of a render mesh and the chassis figures, or None when it has no two axles of wheels."""
    points = _part_points(render)
    named = {n: p for n, p in points.items() if _WHEEL_NAME.search(n.rsplit("/", 1)[-1])
             and not _NOT_WHEEL_NAME.search(n.rsplit("/", 1)[-1])}
    wheels, found_by = _merged(named), "names"
    if len(_axles(wheels)) < 2:
        wheels, found_by = _by_shape(points), "shape"
    if not wheels:
        return None
    used = {n for w in wheels for n in w.parts}
    rest = [p for n, p in points.items() if n not in used]
    body = np.concatenate(rest) if rest else np.zeros((0, 3))
    return _record(wheels, found_by, body)
