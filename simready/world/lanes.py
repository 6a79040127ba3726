"""Directed lane graph (SPEC §5): polylines with arc length, s/t projection, derived topology.

Conventions (world frame, metres, radians):

* A lane is a centreline polyline; its direction of travel is the point order.
* ``s`` is arc length along the centreline from the first point, metres.
* ``t`` is the signed lateral offset from the centreline, metres, positive to
  the *left* of the direction of travel (the +y side of a body driving it).
* Yaw is counter-clockwise about +z from +x; along a polyline it is the
  heading of the segment that contains ``s`` (piecewise constant).

Successors and left/right neighbours are *derived* from geometry, never typed
by hand, so that moving a lane end in a template cannot leave a stale
connection behind: B succeeds A when A's end lies within
``SUCCESSOR_GAP_TOLERANCE_M`` of B's start and the heading turns by less than
``SUCCESSOR_MAX_HEADING_CHANGE_RAD``; B neighbours A when they run the same way
side by side, centrelines one half-width-sum apart.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import shapely
from numpy.typing import NDArray
from shapely.geometry import LineString, Polygon

from simready.world.graph_search import shortest_path
from simready.world.polyline import Polyline, PolylineError

#: End of lane A and start of lane B closer than this are one connection (m).
#: Hand-authored coordinates are rounded to centimetres; 0.5 m is well below a
#: lane width, so adjacent lanes (3+ m apart) can never be mistaken for one.
SUCCESSOR_GAP_TOLERANCE_M = 0.5
#: Largest heading change from A's last segment to B's first segment (rad).
#: Connectors leave and join tangentially; a polyline arc discretised into
#: 10° segments turns by at most 10° at a joint, a U-turn by 180°.
SUCCESSOR_MAX_HEADING_CHANGE_RAD = math.radians(45.0)
#: |measured centreline spacing − (w_A + w_B)/2| allowed for neighbours (m).
NEIGHBOUR_OFFSET_TOLERANCE_M = 0.3
#: Largest heading difference between side-by-side neighbours (rad).
NEIGHBOUR_MAX_HEADING_DIFF_RAD = math.radians(10.0)
#: Samples along A tested against B when deriving neighbours.
NEIGHBOUR_SAMPLES = 9
#: Fraction of A's samples that must lie alongside B for B to be a neighbour.
NEIGHBOUR_MIN_OVERLAP = 0.5
#: A dead end closer than this to the map boundary leaves the map (m).
BOUNDARY_TOLERANCE_M = 1.0
#: Shorter segments are authoring mistakes (repeated points) (m).
MIN_SEGMENT_LENGTH_M = 1e-3


class LaneLike(Protocol):
    """What the graph needs of a lane declaration (the template's ``Lane``, a frozen model: read-only here)."""

    @property
    def id(self) -> str: ...
    @property
    def polyline(self) -> Sequence[Sequence[float]]: ...
    @property
    def width_m(self) -> float: ...
    @property
    def speed_limit_mps(self) -> float: ...
    @property
    def kind(self) -> str: ...


def wrap_angle(angle_rad: float) -> float:
    """Angle wrapped to [-π, π)."""
    return (angle_rad + math.pi) % (2.0 * math.pi) - math.pi


@dataclass(frozen=True, eq=False)
class LaneGeometry(Polyline):
    """One lane's centreline (a :class:`~simready.world.polyline.Polyline`) with its width, limit and kind.

    Attributes:
        id: lane id.
        width_m: lane width, metres.
        speed_limit_mps: legal speed, m/s.
        kind: ``driving`` | ``parking`` | ``turn``.
    """

    id: str = ""
    width_m: float = 0.0
    speed_limit_mps: float = 0.0
    kind: str = "driving"

    @classmethod
    def from_lane(cls, lane: LaneLike) -> LaneGeometry:
        try:
            points, cum_s, seg_dir = Polyline.arrays(lane.polyline, min_segment_m=MIN_SEGMENT_LENGTH_M)
        except PolylineError as exc:
            raise ValueError(f"lane {lane.id!r}: {exc}") from None
        return cls(points, cum_s, seg_dir, lane.id, float(lane.width_m), float(lane.speed_limit_mps), lane.kind)

    def s_window(self, polygon: Polygon) -> tuple[float, float] | None:
        """Arc-length interval ``(s_in, s_out)`` where the centreline is inside ``polygon``.

        Why: the scenario stage needs where a lane crosses a crosswalk (the
        conflict zone) as a lane s-window, not as map geometry.
        """
        inside = LineString(self.points).intersection(polygon)
        if inside.is_empty or inside.length == 0.0:
            return None
        parts = [g for g in getattr(inside, "geoms", [inside]) if g.length > 0.0]
        coords = [c for part in parts for c in part.coords]
        s_values = [self.project(x, y)[0] for x, y in coords]
        return float(min(s_values)), float(max(s_values))


@dataclass(frozen=True)
class DirectionError:
    """A lane that can only be continued against its direction of travel."""

    lane: str
    reason: str


@dataclass(frozen=True)
class LaneGraph:
    """Directed lane graph with derived successors and neighbours.

    Attributes:
        lanes: id -> geometry, sorted by id.
        successors: id -> ids of lanes whose start continues this lane's end.
        predecessors: the inverse of ``successors``.
        left, right: id -> id of the same-direction neighbour on that side, or None.
    """

    lanes: dict[str, LaneGeometry]
    successors: dict[str, tuple[str, ...]]
    predecessors: dict[str, tuple[str, ...]]
    left: dict[str, str | None]
    right: dict[str, str | None]

    @classmethod
    def build(cls, lanes: Iterable[LaneLike]) -> LaneGraph:
        geoms = {g.id: g for g in sorted((LaneGeometry.from_lane(lane) for lane in lanes), key=lambda g: g.id)}
        ids = list(geoms)
        # Spatial indexes keep a city map's build near-linear; candidates come back in id order, so the
        # result is the all-pairs one (successor order by id, neighbour ties to the smaller id).
        starts = _PointGrid([geoms[k].start for k in ids], SUCCESSOR_GAP_TOLERANCE_M)
        succ = {a: tuple(ids[j] for j in starts.near(geoms[a].end) if ids[j] != a and _continues(geoms[a], geoms[ids[j]]))
                for a in ids}
        preds: dict[str, list[str]] = {b: [] for b in ids}
        for a in ids:
            for b in succ[a]:
                preds[b].append(a)
        pred = {b: tuple(v) for b, v in preds.items()}
        samples = {a: _samples(geoms[a]) for a in ids}
        nearby = _alongside_candidates(geoms, samples)
        sides = {a: _neighbours(geoms[a], samples[a], nearby[a]) for a in ids}
        return cls(geoms, succ, pred, {a: v[0] for a, v in sides.items()}, {a: v[1] for a, v in sides.items()})

    def lane(self, lane_id: str) -> LaneGeometry:
        return self.lanes[lane_id]

    def project(self, lane_id: str, x_m: float, y_m: float) -> tuple[float, float]:
        """``(s, t)`` of a world point on lane ``lane_id``."""
        return self.lanes[lane_id].project(x_m, y_m)

    def pose_at(self, lane_id: str, s_m: float) -> tuple[float, float, float]:
        """``(x, y, yaw_rad)`` on lane ``lane_id`` at arc length ``s``."""
        return self.lanes[lane_id].pose_at(s_m)

    def nearest(
        self, x_m: float, y_m: float, yaw_rad: float | None = None, kinds: Iterable[str] | None = None
    ) -> tuple[str, float, float]:
        """``(lane id, s, t)`` of the lane closest to a point (distance past a lane end counts).

        With ``yaw_rad``, lanes heading more than 90° away are skipped, so a
        vehicle is never matched to the opposing lane; ``kinds`` keeps only
        lanes of those kinds. Ties go to the smaller id.
        """
        allowed = None if kinds is None else set(kinds)
        best: tuple[float, str, float, float] | None = None
        for lane_id, g in self.lanes.items():
            if allowed is not None and g.kind not in allowed:
                continue
            s, t = g.project(x_m, y_m)
            if yaw_rad is not None and abs(wrap_angle(g.pose_at(s)[2] - yaw_rad)) > math.pi / 2:
                continue
            gap = max(0.0, -s, s - g.length_m)
            key = (math.hypot(t, gap), lane_id, s, t)
            best = key if best is None or key < best else best
        if best is None:
            raise ValueError("no lane matches the point, heading and kinds")
        return best[1], best[2], best[3]

    def route(self, from_lane: str, to_lane: str) -> list[str] | None:
        """Shortest successor-only lane sequence (by length), ``None`` if unreachable."""
        for lane_id in (from_lane, to_lane):
            if lane_id not in self.lanes:
                raise KeyError(f"unknown lane {lane_id!r}")
        return shortest_path(from_lane, to_lane, lambda a: ((b, self.lanes[b].length_m) for b in self.successors[a]))

    def direction_errors(self) -> list[DirectionError]:
        """Lanes without a successor whose end meets another lane only against its direction.

        Two cases, both a polyline authored backwards: A's end touches B's
        *end* (head to head), or B's start but turned by more than the
        successor heading limit (a reversal).
        """
        out: list[DirectionError] = []
        ids = list(self.lanes)
        # Only lanes with an end or a start near A's end can match: a grid on both keeps a city map near-linear,
        # and candidates come back in id order, so the errors are the all-pairs scan's, in its order.
        ends = _PointGrid([self.lanes[k].end for k in ids], SUCCESSOR_GAP_TOLERANCE_M)
        starts = _PointGrid([self.lanes[k].start for k in ids], SUCCESSOR_GAP_TOLERANCE_M)
        for a, ga in self.lanes.items():
            if self.successors[a]:
                continue
            for j in sorted(set(ends.near(ga.end)) | set(starts.near(ga.end))):
                b, gb = ids[j], self.lanes[ids[j]]
                if b == a:
                    continue
                if _gap(ga.end, gb.end) <= SUCCESSOR_GAP_TOLERANCE_M:
                    out.append(DirectionError(a, f"ends where lane {b!r} ends: one of them runs against its direction"))
                elif _gap(ga.end, gb.start) <= SUCCESSOR_GAP_TOLERANCE_M:
                    turn = math.degrees(abs(wrap_angle(gb.start_yaw_rad - ga.end_yaw_rad)))
                    out.append(DirectionError(a, f"meets lane {b!r} only against its direction (turn {turn:.0f} deg)"))
        return out

    def dead_ends(self, bounds: tuple[float, float, float, float]) -> list[str]:
        """Lanes with no successor whose end is not at the map boundary ``(xmin, ymin, xmax, ymax)``."""
        xmin, ymin, xmax, ymax = bounds
        out = []
        for lane_id, g in self.lanes.items():
            x, y = g.end
            margin = min(x - xmin, xmax - x, y - ymin, ymax - y)
            if not self.successors[lane_id] and margin > BOUNDARY_TOLERANCE_M:
                out.append(lane_id)
        return out

    def s_window(self, lane_id: str, polygon: Polygon) -> tuple[float, float] | None:
        return self.lanes[lane_id].s_window(polygon)


def _gap(p: NDArray[np.float64], q: NDArray[np.float64]) -> float:
    return float(math.hypot(*(p - q)))


def _continues(a: LaneGeometry, b: LaneGeometry) -> bool:
    turn = abs(wrap_angle(b.start_yaw_rad - a.end_yaw_rad))
    return _gap(a.end, b.start) <= SUCCESSOR_GAP_TOLERANCE_M and turn < SUCCESSOR_MAX_HEADING_CHANGE_RAD


class _PointGrid:
    """Points hashed into square cells of side ``radius_m``: :meth:`near` returns, in index order, every point
    within ``radius_m`` of a query point (and a few farther ones)."""

    def __init__(self, points: Sequence[NDArray[np.float64]], radius_m: float) -> None:
        self.cell = radius_m
        self.cells: dict[tuple[int, int], list[int]] = {}
        for i, p in enumerate(points):
            self.cells.setdefault(self._key(p), []).append(i)

    def _key(self, p: NDArray[np.float64]) -> tuple[int, int]:
        return int(math.floor(p[0] / self.cell)), int(math.floor(p[1] / self.cell))

    def near(self, p: NDArray[np.float64]) -> list[int]:
        cx, cy = self._key(p)
        return sorted(i for dx in (-1, 0, 1) for dy in (-1, 0, 1) for i in self.cells.get((cx + dx, cy + dy), ()))


def _samples(a: LaneGeometry) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The points (M, 2) and headings (M,) where a lane's neighbours are measured: M evenly spaced inner samples."""
    samples = np.linspace(0.0, a.length_m, NEIGHBOUR_SAMPLES + 2)[1:-1]
    seg = np.array([a.segment_at(float(s)) for s in samples])
    xy = np.array([a.point_at(float(s)) for s in samples])
    return xy, a.segment_yaw_rad(seg)


def _alongside_candidates(
    geoms: dict[str, LaneGeometry], samples: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]]
) -> dict[str, dict[str, LaneGeometry]]:
    """For each lane, the lanes that may run alongside it, in id order.

    A neighbour lies within ``(w_a + w_b) / 2`` + tolerance of at least
    ``NEIGHBOUR_MIN_OVERLAP`` of the lane's samples (those that project inside
    it), so only lanes that many samples reach (with the widest lane's width
    and half a metre of slack) are candidates: the exact test then sees every
    lane it could accept, and a junction's crossing lanes drop out here.
    """
    ids = list(geoms)
    tree = shapely.STRtree([LineString(geoms[k].points) for k in ids])
    widest = max((g.width_m for g in geoms.values()), default=0.0)
    out = {}
    for k in ids:
        reach = 0.5 * (geoms[k].width_m + widest) + NEIGHBOUR_OFFSET_TOLERANCE_M + 0.5
        xy = samples[k][0]
        _, hits = tree.query(shapely.points(xy), predicate="dwithin", distance=reach)
        count = np.bincount(hits, minlength=len(ids))
        keep = np.flatnonzero(count >= NEIGHBOUR_MIN_OVERLAP * len(xy))
        out[k] = {ids[j]: geoms[ids[j]] for j in sorted(int(h) for h in keep)}
    return out


def _neighbours(
    a: LaneGeometry, samples: tuple[NDArray[np.float64], NDArray[np.float64]], lanes: dict[str, LaneGeometry]
) -> tuple[str | None, str | None]:
    """Closest same-direction lanes alongside ``a`` (sampled at ``samples``): ``(left, right)``, ties to the
    smaller id."""
    xy, yaw = samples
    best: dict[int, tuple[float, str]] = {}
    for b_id, b in lanes.items():
        if b_id == a.id:
            continue
        for side, error in _side_by_side_errors(xy, yaw, a.width_m, b).items():
            if side not in best or (error, b_id) < best[side]:
                best[side] = (error, b_id)
    return (best[+1][1] if +1 in best else None), (best[-1][1] if -1 in best else None)


def _side_by_side_errors(
    xy: NDArray[np.float64], yaw: NDArray[np.float64], width_m: float, b: LaneGeometry
) -> dict[int, float]:
    """Worst spacing error (m) on the side (+1 left, −1 right) where ``b`` runs alongside the sampled lane, if it does.

    Args:
        xy, yaw: samples along lane A, (M, 2) metres and (M,) radians.
        width_m: lane A's width.
    """
    s_b, t_b, seg_b = b.project_many(xy)
    alongside = (s_b > 0.0) & (s_b < b.length_m)
    if alongside.sum() < NEIGHBOUR_MIN_OVERLAP * len(xy):
        return {}
    turn = np.abs((b.segment_yaw_rad(seg_b[alongside]) - yaw[alongside] + np.pi) % (2 * np.pi) - np.pi)
    if np.any(turn > NEIGHBOUR_MAX_HEADING_DIFF_RAD):
        return {}
    out = {}
    for side in (+1, -1):
        # A's samples lie on B's right when B is A's left neighbour, so t_b < 0 there.
        offset = -side * t_b[alongside]
        if np.any(offset <= 0.0):
            continue
        worst = float(np.max(np.abs(offset - 0.5 * (width_m + b.width_m))))
        if worst <= NEIGHBOUR_OFFSET_TOLERANCE_M:
            out[side] = worst
    return out
