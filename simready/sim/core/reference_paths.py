"""Reference paths that controllers track: lane chains (vehicles, cyclists) and walk routes (pedestrians).

A :class:`ReferencePath` is a polyline in the world frame (metres) with arc length
``u`` from its first point. A lane-chain path is its lanes' centrelines in
travel order, each copied verbatim, so on lane ℓ the lane's own arc length
is ``s = u − lane_u0[ℓ]``. A walk path is the walkable-graph nodes in order,
starting at the pedestrian's own position. Lateral offset ``d`` is measured
to the left of travel, as on the lane graph.

:class:`PathTable` packs every actor's path into padded arrays so one tick
evaluates all actors' positions with a handful of numpy operations.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from simready.common.memo import once_per_object
from simready.sim.core import kernels
from simready.world.lanes import LaneGraph
from simready.world.polyline import Polyline

F = NDArray[np.float64]
#: A path's identity, a tagged tuple: ``("lanes", lane ids...)``, ``("walk", x0, y0, via x, y..., node ids...)``
#: or ``("fixed", x, y, yaw)`` (:meth:`simready.sim.core.scene.Scene.path` builds a path from it).
PathKey = tuple[Any, ...]
#: Route continuation beyond the declared lanes stops after this length (m).
MAX_CONTINUATION_M = 2000.0
_COINCIDENT_M = 1e-6


@dataclass(frozen=True, eq=False)
class ReferencePath(Polyline):
    """A controller's reference path: the :class:`~simready.world.polyline.Polyline` primitive (``u`` is its arc
    length ``s``, ``d`` its lateral offset ``t``) plus the lanes it runs on.

    Attributes:
        key: identity: ``("lanes", lane ids...)`` or ``("walk", x0, y0, via x, y..., node ids...)``.
        seg_lane: (P−1,) index into the scene's sorted lane list, −1 off the lane graph.
        lanes: lane ids in path order (empty for a walk).
        lane_u0: u at the start of each of ``lanes``.
        ends_on_map: False when a lane chain ends at a dead end (the actor leaves the map there).
    """

    key: PathKey = ()
    seg_lane: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False)
    lanes: tuple[str, ...] = ()
    lane_u0: tuple[float, ...] = ()
    ends_on_map: bool = True
    _lane_index: dict[str, int] = field(default_factory=dict, repr=False)

    def lane_offset(self, lane: str) -> float | None:
        """u at which ``lane`` starts on this path, None if the path does not use it."""
        i = self._lane_index.get(lane)
        return None if i is None else self.lane_u0[i]

    def project_near(self, x: float, y: float, u_hint: float, window: int = 6) -> tuple[float, float]:
        """``(u, d)`` of the closest point among the segments around ``u_hint`` (scalar, for one body per tick)."""
        pts, dirs, cum = self._lists
        i = self.segment_at(u_hint)
        last = len(dirs) - 1
        best = None
        for k in range(max(i - 2, 0), min(i + window, last) + 1):
            px, py = pts[k]
            dx, dy = dirs[k]
            along = (x - px) * dx + (y - py) * dy
            seg_len = cum[k + 1] - cum[k]
            lo = -math.inf if k == 0 else 0.0
            hi = math.inf if k == last else seg_len
            a = min(max(along, lo), hi)
            fx, fy = px + dx * a, py + dy * a
            dist2 = (x - fx) ** 2 + (y - fy) ** 2
            if best is None or dist2 < best[0]:
                best = (dist2, cum[k] + a, dx * (y - fy) - dy * (x - fx))
        assert best is not None
        return best[1], best[2]

    def project(self, x: float, y: float, u_hint: float | None = None) -> tuple[float, float]:
        """``(u, d)`` of the closest point; with ``u_hint`` only segments near the hint are searched."""
        pts, dirs, cum = self.points, self.seg_dir, self.cum_s
        if u_hint is None:
            lo, hi = 0, len(dirs)
        else:
            i = self.segment_at(u_hint)
            lo, hi = max(i - 12, 0), min(i + 13, len(dirs))
        rel = np.array([x, y]) - pts[lo:hi]
        along = np.einsum("ij,ij->i", rel, dirs[lo:hi])
        seg_len = np.diff(cum)[lo:hi]
        first = lo == 0
        last = hi == len(dirs)
        lo_clip = np.zeros(hi - lo)
        hi_clip = seg_len.copy()
        if first:
            lo_clip[0] = -np.inf
        if last:
            hi_clip[-1] = np.inf
        a = np.clip(along, lo_clip, hi_clip)
        foot = pts[lo:hi] + dirs[lo:hi] * a[:, None]
        k = int(np.argmin(np.hypot(x - foot[:, 0], y - foot[:, 1])))
        dx, dy = dirs[lo + k]
        ox, oy = x - foot[k, 0], y - foot[k, 1]
        return float(cum[lo + k] + a[k]), float(dx * oy - dy * ox)


#: Corner rounding radius of lane chains and of walk routes (m): paths are G1, so a body's
#: velocity direction turns smoothly through a polyline vertex instead of jumping.
LANE_FILLET_M = 50.0
WALK_FILLET_M = 0.6
#: Largest heading change between consecutive segments of a fillet arc (rad).
FILLET_STEP_RAD = math.radians(1.0)


def fillet(points: list[tuple[float, float]], radius_m: float) -> tuple[list[tuple[float, float]], list[int], list[int]]:
    """Round every interior vertex with a circular arc (tangent length capped at half the adjacent segments).

    Returns the new points, for each new segment the index of the original
    segment it came from (an arc's first half belongs to the incoming
    segment, its second half to the outgoing one), and for each original
    vertex the index of the new point that stands for it (the arc's middle).

    Scalar arithmetic on Python floats, operation for operation what numpy does element by element on 2-vectors
    (the segment lengths stay ``np.hypot``'s and the turn's dot product numpy's, so the bits are numpy's).
    """
    pts = [(float(x), float(y)) for x, y in points]
    out: list[tuple[float, float]] = [pts[0]]
    origin: list[int] = []
    vertex: list[int] = [0]
    cos, sin, atan2, copysign = math.cos, math.sin, math.atan2, math.copysign
    if len(pts) > 2:
        # Every segment's length and direction, and every vertex's dot product, in whole-array calls with the
        # per-pair loops' bits (np.hypot's, numpy's dot through np.vecdot).
        seg = np.diff(np.asarray(pts, dtype=np.float64), axis=0)
        length = np.hypot(seg[:, 0], seg[:, 1])
        unit = seg / length[:, None]
        dots = np.vecdot(unit[:-1], unit[1:]).tolist()
        lengths, units = length.tolist(), unit.tolist()
    for k in range(1, len(pts) - 1):
        bx, by = pts[k]
        l_in, l_out = lengths[k - 1], lengths[k]
        (ix, iy), (ox, oy) = units[k - 1], units[k]
        turn = atan2(ix * oy - iy * ox, dots[k - 1])
        if abs(turn) < 1e-4 or radius_m <= 0.0:
            out.append((bx, by))
            origin.append(k - 1)
            vertex.append(len(out) - 1)
            continue
        half = math.tan(abs(turn) / 2.0)
        tangent = min(radius_m * half, 0.5 * l_in, 0.5 * l_out)
        r = tangent / half
        steps = max(2, int(math.ceil(abs(turn) / FILLET_STEP_RAD)))
        steps += steps % 2
        p0x, p0y = bx - ix * tangent, by - iy * tangent
        sign = copysign(1.0, turn)
        nx, ny = -iy * sign, ix * sign
        centre_x, centre_y = p0x + nx * r, p0y + ny * r
        start = atan2(p0y - centre_y, p0x - centre_x)
        sweep = sign * abs(turn)
        mid = steps // 2
        for j in range(steps + 1):
            ang = start + sweep * j / steps
            out.append((centre_x + r * cos(ang), centre_y + r * sin(ang)))
            origin.append(k - 1 if j <= mid else k)
            if j == mid:
                vertex.append(len(out) - 1)
    out.append(pts[-1])
    origin.append(len(pts) - 2)
    vertex.append(len(out) - 1)
    return out, origin, vertex


def _build(key: PathKey, pts: list[tuple[float, float]], seg_lane: list[int], radius_m: float, *,
           lanes: tuple[str, ...] = (), lane_vertex: tuple[int, ...] = (), ends_on_map: bool = True) -> ReferencePath:
    """A path through ``pts`` (corners rounded); ``lane_vertex[k]`` is the raw vertex where ``lanes[k]`` starts."""
    new_pts, origin, vertex = fillet(pts, radius_m)
    points = np.asarray(new_pts, dtype=np.float64)
    delta = np.diff(points, axis=0)
    seg_len = np.hypot(delta[:, 0], delta[:, 1])
    keep = seg_len > 1e-9
    if not keep.all():
        idx = np.concatenate([[0], np.flatnonzero(keep) + 1])
        remap = np.cumsum(np.concatenate([[1], keep.astype(int)])) - 1
        points = points[idx]
        origin = [o for o, k in zip(origin, keep) if k]
        vertex = [int(remap[v]) for v in vertex]
        delta = np.diff(points, axis=0)
        seg_len = np.hypot(delta[:, 0], delta[:, 1])
    cum = np.concatenate([[0.0], np.cumsum(seg_len)])
    lane_of = np.asarray([seg_lane[o] for o in origin], dtype=np.int64)
    u0 = tuple(float(cum[vertex[v]]) for v in lane_vertex)
    for arr in (points, cum, lane_of):
        arr.setflags(write=False)
    return ReferencePath(points, cum, delta / seg_len[:, None], key=key, seg_lane=lane_of, lanes=lanes, lane_u0=u0,
                ends_on_map=ends_on_map, _lane_index={lane: i for i, lane in enumerate(lanes)})


def continue_route(graph: LaneGraph, lanes: Sequence[str]) -> tuple[tuple[str, ...], bool]:
    """``lanes`` extended through first successors (by id) up to :data:`MAX_CONTINUATION_M`.

    Returns the chain and whether it ends on the map (False at a dead end).
    """
    chain = list(lanes)
    length = 0.0
    while length < MAX_CONTINUATION_M:
        nxt = graph.successors[chain[-1]]
        options = [n for n in nxt if n not in chain]
        if not options:
            return tuple(chain), bool(nxt)
        chain.append(options[0])
        length += graph.lanes[chain[-1]].length_m
    return tuple(chain), True


def lane_path(graph: LaneGraph, lanes: Sequence[str], lane_index: dict[str, int]) -> ReferencePath:
    """The path along ``lanes`` (each must succeed the previous), continued past its end.

    Consecutive lanes that meet exactly share a vertex; a small gap (within
    the lane graph's successor tolerance) becomes a joining segment that
    belongs to the next lane. Corners are rounded (:data:`LANE_FILLET_M`), so
    a lane's arc length on the path differs from its own by millimetres.
    """
    chain, on_map = continue_route(graph, lanes)
    # Kept per lane graph object (a path is a value: scenes share theirs by key): every draw of a pool starts on the
    # same few routes, ~2 ms each to build. The lanes' indices complete the key: they are all the path reads of
    # ``lane_index``.
    built = once_per_object(_LANE_PATHS, graph, dict)
    key = (chain, tuple(lane_index[lane] for lane in chain))
    hit = built.get(key)
    if hit is None:
        hit = built[key] = _lane_path(graph, chain, on_map, lane_index)
    return hit


#: Per lane graph object, its lane paths built so far (:func:`lane_path`).
_LANE_PATHS: dict[int, tuple[object, dict[tuple[tuple[str, ...], tuple[int, ...]], ReferencePath]]] = {}


def _lane_path(graph: LaneGraph, chain: tuple[str, ...], on_map: bool, lane_index: dict[str, int]) -> ReferencePath:
    pts: list[tuple[float, float]] = []
    seg_lane: list[int] = []
    first_vertex: list[int] = []
    for lane in chain:
        lp = [(float(x), float(y)) for x, y in graph.lanes[lane].points]
        li = lane_index[lane]
        if pts and math.dist(pts[-1], lp[0]) <= _COINCIDENT_M:
            first_vertex.append(len(pts) - 1)
            lp = lp[1:]
            seg_lane.extend([li] * len(lp))
        else:
            if pts:
                seg_lane.append(li)
            first_vertex.append(len(pts))
            seg_lane.extend([li] * (len(lp) - 1))
        pts.extend(lp)
    return _build(("lanes", *chain), pts, seg_lane, LANE_FILLET_M, lanes=tuple(chain),
                  lane_vertex=tuple(first_vertex), ends_on_map=on_map)


def walk_path(start_xy: tuple[float, float], nodes: Sequence[str], node_xy: dict[str, tuple[float, float]],
              via: Sequence[tuple[float, float]] = ()) -> ReferencePath:
    """Straight legs from ``start_xy`` through each ``via`` point (a mid-block crossing, off the walkable graph),
    then each node, corners rounded; a point on top of the previous one is skipped.

    The key is ``("walk", x0, y0, x1, y1, …, node ids…)``: the via points' coordinates (numbers) come before the
    node ids (strings), so a walk without via points keeps its key.
    """
    pts = [(float(start_xy[0]), float(start_xy[1]))]
    flat: list[float] = []
    for vx, vy in via:
        flat += [round(float(vx), 9), round(float(vy), 9)]
        if math.dist(pts[-1], (vx, vy)) > 1e-3:
            pts.append((float(vx), float(vy)))
    for n in nodes:
        p = node_xy[n]
        if math.dist(pts[-1], p) > 1e-3:
            pts.append((float(p[0]), float(p[1])))
    if len(pts) == 1:
        # Already at the only node: a short stub keeps the heading defined.
        pts.append((pts[0][0] + 1e-3, pts[0][1]))
    key = ("walk", round(pts[0][0], 9), round(pts[0][1], 9), *flat, *nodes)
    return _build(key, pts, [-1] * (len(pts) - 1), WALK_FILLET_M)


def split_walk_key(key: PathKey) -> tuple[tuple[float, float], tuple[tuple[float, float], ...], tuple[str, ...]]:
    """``(start, via points, node ids)`` of a walk path's key (:func:`walk_path`)."""
    rest = key[3:]
    k = 0
    while k < len(rest) and not isinstance(rest[k], str):
        k += 1
    flat = [float(v) for v in rest[:k]]
    via = tuple(zip(flat[0::2], flat[1::2]))
    return (float(key[1]), float(key[2])), via, tuple(rest[k:])


def fixed_path(x: float, y: float, yaw: float) -> ReferencePath:
    """A 1 mm stub at a pose: the 'path' of a parked actor, so its heading is its yaw."""
    p1 = (x + 1e-3 * math.cos(yaw), y + 1e-3 * math.sin(yaw))
    return _build(("fixed", round(x, 9), round(y, 9), round(yaw, 9)), [(x, y), p1], [-1], 0.0)


_HEADINGS: dict[tuple[PathKey, float, bytes], F] = {}


def chord_headings(path: ReferencePath, chord_m: float) -> F:
    """Unwrapped heading (rad) at every vertex of the chord from ``u − L/2`` to ``u + L/2`` (see :mod:`simready.sim.core.kinematics`).

    Cached by (path key, chord, a digest of its points): two maps may name different lanes alike (every imported
    map has a ``road1_sec0_lane1``), so the key alone does not fix the path.
    """
    key = (path.key, chord_m, hashlib.blake2b(path.points.tobytes(), digest_size=16).digest())
    hit = _HEADINGS.get(key)
    if hit is not None:
        return hit
    if len(_HEADINGS) > 4096:
        _HEADINGS.clear()
    h = 0.5 * chord_m
    out = np.empty(len(path.cum_s))
    prev = None
    for k, u in enumerate(path.cum_s.tolist()):
        x0, y0 = path.point_at(u - h)
        x1, y1 = path.point_at(u + h)
        a = math.atan2(y1 - y0, x1 - x0)
        if prev is not None:
            a = prev + (a - prev + math.pi) % (2 * math.pi) - math.pi
        out[k] = prev = a
    out.setflags(write=False)
    _HEADINGS[key] = out
    return out


@dataclass(frozen=True, eq=False)
class PathTable:
    """Every actor's path packed into padded, flattened arrays, for vectorized evaluation.

    Row i (actor i) occupies entries ``i·stride … i·stride + stride − 1`` of
    the flat arrays, ``stride = S + 1`` for the longest path's S segments;
    past a path's end its last vertex and direction repeat and ``cum`` is +inf.

    Attributes:
        paths: one per actor, in actor order.
        pts: (N·stride, 2) vertices; cum: (N·stride,) arc lengths.
        dirs: (N·stride, 2) segment directions; seg_lane: (N·stride,) lane index per segment (−1 off-graph).
        psi: (N·stride,) the actor's chord heading at each vertex (unwrapped), and
        dpsi: (N·stride,) its rate per metre along the segment that starts there.
        lane_u0: (N, L) u at which each scene lane starts on the actor's path, NaN if unused.
        nseg: (N,) real segment counts; lengths: (N,) path lengths; leaves: (N,) the path runs off the map at its end.

    :meth:`lanes_at` remembers its last answer: every reader of one tick
    (the views, the recorder) passes the same ``u`` array; the kinematic
    step hands it the new tick's answer (:meth:`remember_lanes`).
    """

    paths: tuple[ReferencePath, ...]
    stride: int
    base: NDArray[np.int64]
    pts: F
    cum: F
    dirs: F
    seg_lane: NDArray[np.int64]
    psi: F
    dpsi: F
    lane_u0: F
    nseg: NDArray[np.int64]
    lengths: F
    leaves: NDArray[np.bool_]
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def build(cls, paths: Sequence[ReferencePath], lane_ids: Sequence[str],
              chords: Sequence[float] | NDArray[np.float64] | None = None) -> PathTable:
        n = len(paths)
        stride = max(len(p.seg_dir) for p in paths) + 1
        pts = np.zeros((n, stride, 2))
        cum = np.full((n, stride), np.inf)
        dirs = np.zeros((n, stride, 2))
        seg_lane = np.full((n, stride), -1, dtype=np.int64)
        psi = np.zeros((n, stride))
        dpsi = np.zeros((n, stride))
        lane_u0 = np.full((n, len(lane_ids)), np.nan)
        index = {lane: i for i, lane in enumerate(lane_ids)}
        for i, p in enumerate(paths):
            k = len(p.seg_dir)
            pts[i, : k + 1] = p.points
            pts[i, k + 1 :] = p.points[-1]
            cum[i, : k + 1] = p.cum_s
            dirs[i, :k] = p.seg_dir
            dirs[i, k:] = p.seg_dir[-1]
            seg_lane[i, :k] = p.seg_lane
            seg_lane[i, k:] = p.seg_lane[-1]
            heads = chord_headings(p, chords[i] if chords is not None else 0.0)
            psi[i, : k + 1] = heads
            psi[i, k + 1 :] = heads[-1]
            dpsi[i, :k] = np.diff(heads) / np.diff(p.cum_s)
            for lane, u0 in zip(p.lanes, p.lane_u0):
                if np.isnan(lane_u0[i, index[lane]]):
                    lane_u0[i, index[lane]] = u0
        nseg = np.array([len(p.seg_dir) for p in paths], dtype=np.int64)
        lengths = np.array([p.length_m for p in paths])
        leaves = np.array([p.key[0] == "lanes" and not p.ends_on_map for p in paths], dtype=bool)
        base = np.arange(n, dtype=np.int64) * stride
        return cls(tuple(paths), stride, base, pts.reshape(-1, 2), cum.reshape(-1), dirs.reshape(-1, 2),
                   seg_lane.reshape(-1), psi.reshape(-1), dpsi.reshape(-1), lane_u0, nseg, lengths, leaves)

    def segments(self, u: F) -> NDArray[np.int64]:
        """(N,) segment holding each actor's u (the end segments extrapolate): a full search."""
        cum = self.cum.reshape(len(self.base), self.stride)
        seg = np.count_nonzero(cum[:, 1:] <= u[:, None], axis=1)
        out: NDArray[np.int64] = np.minimum(seg, self.nseg - 1)
        return out

    def locate(self, u: F) -> NDArray[np.int64]:
        """Flat indices of the segments holding ``u`` (a full search; the kernels search per actor)."""
        return self.base + self.segments(u)

    @cached_property
    def kernel_arrays(self) -> tuple[F, NDArray[np.int64], NDArray[np.int64], F, F, F, F]:
        """``(cum, base, last segment, pts, dirs, psi, dpsi)`` as C-contiguous arrays, for :mod:`simready.sim.core.kernels`."""
        c = np.ascontiguousarray
        return (c(self.cum), c(self.base), c(self.nseg - 1), c(self.pts), c(self.dirs), c(self.psi), c(self.dpsi))

    def lanes_at(self, u: F) -> tuple[NDArray[np.int64], F]:
        """Lane index (−1 off the lane graph) and s on it at ``u`` (the last answer is reused for the same array)."""
        last = self._memo.get("lanes_u")
        if last is not None and last[0] is u:
            return last[1], last[2]
        cum, base, last_seg = self.kernel_arrays[:3]
        lane, s = np.empty(len(base), dtype=np.int64), np.empty(len(base))
        kernels.lanes_at(cum, base, last_seg, self.seg_lane, self.lane_u0, np.ascontiguousarray(u, dtype=np.float64),
                         lane, s)
        # Shared by every reader of this tick (views, the recorder): read-only.
        lane.setflags(write=False)
        s.setflags(write=False)
        self._memo["lanes_u"] = (u, lane, s)
        return lane, s

    def remember_lanes(self, u: F, lane: NDArray[np.int64], s: F) -> None:
        """Keep ``(lane, s)``, computed by :func:`simready.sim.core.kernels.lanes_at` for the read-only ``u``, as
        :meth:`lanes_at`'s answer for that array (the kinematic step computes them with the integration)."""
        lane.setflags(write=False)
        s.setflags(write=False)
        self._memo["lanes_u"] = (u, lane, s)

    @cached_property
    def lengths_py(self) -> list[float]:
        """:attr:`lengths` as Python floats (each path's ``length_m``)."""
        values: list[float] = self.lengths.tolist()
        return values

    @cached_property
    def lane_u0_py(self) -> list[list[float]]:
        """:attr:`lane_u0` as nested Python lists (scalar lookups)."""
        nested: list[list[float]] = self.lane_u0.tolist()
        return nested
