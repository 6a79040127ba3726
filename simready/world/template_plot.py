"""Top-down plot of a world template (PNG), for review in the Dagster UI.

Drawn in world metres (x east, y north) at equal aspect: regions filled by
type, lanes with direction arrows, stop lines, the walkable graph, instance
footprints (from catalog dimensions when given), and the ego at its start
pose with its rig mount points and camera field-of-view wedges.

Uses matplotlib's object API with the Agg canvas directly — no ``pyplot``,
so no global backend or figure state is touched (safe in Dagster workers
and tests running in parallel).

The ``draw_*`` helpers draw one layer onto a matplotlib axes and return its
legend handles; :mod:`simready.sim.evaluation.plot` draws the map under a
rollout with them.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Polygon as PolygonPatch, Wedge

from simready.common.atomic import write_bytes_atomic
from simready.world.frames import compose, footprint_corners, pose_2d, yaw_of
from simready.world.identity import parse_asset_id
from simready.world.template import CameraSettings, WorldTemplate, template_hash

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from numpy.typing import NDArray

REGION_COLOURS = {
    "drivable": "#9e9e9e",
    "intersection": "#8a8a8a",
    "parking": "#7aa6c2",
    "sidewalk": "#e0d7c3",
    "crosswalk": "#f5f5f5",
    "building": "#b07d62",
    "median": "#8fbf7f",
}
FAMILY_COLOURS = {
    "road_surface": "#5f5f5f",
    "curb": "#3d3d3d",
    "sidewalk": "#a89f8a",
    "crosswalk_marking": "#ffffff",
    "lane_marking": "#ffffff",
    "terrain": "#8fa67a",
    "building": "#6e4633",
    "pole": "#1f4e79",
    "traffic_light": "#c0392b",
}
VEHICLE_COLOUR = "#2e86c1"
EGO_COLOUR = "#e67e22"
LANE_COLOUR = "#f4d03f"
WALK_COLOUR = "#27ae60"
STOP_LINE_COLOUR = "#c0392b"
#: Length of the drawn camera field-of-view wedge (m); enough to show what
#: the camera covers ahead without swamping the map.
FOV_PLOT_RANGE_M = 30.0
#: One direction arrow per this much lane length (m).
ARROW_SPACING_M = 12.0
ARROW_LENGTH_M = 2.0
#: Footprint drawn for an instance whose dimensions are unknown (m).
UNKNOWN_FOOTPRINT_M = (1.0, 1.0)
#: Ego footprint when the catalog dimensions are not given (m): the shuttle contract's.
DEFAULT_EGO_FOOTPRINT_M = (4.6, 2.1)
MOUNT_MARKERS = {"camera": "^", "lidar": "o", "radar": "s"}
FIGURE_WIDTH_IN = 12.0
DPI = 110


def plot_template(
    template: WorldTemplate,
    out_png: str | Path,
    asset_dims: Mapping[str, tuple[float, float]] | None = None,
) -> Path:
    """Write a top-down PNG of ``template`` to ``out_png`` (atomically) and return its path.

    Args:
        asset_dims: ``{asset id: (length_m, width_m)}`` footprints along body
            x and y; instances without one are drawn as 1 m squares.
    """
    dims = dict(asset_dims or {})
    fig = Figure(figsize=_figure_size(template.bounds))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    handles = draw_regions(ax, template)
    handles += draw_instances(ax, template, dims)
    handles += draw_lanes(ax, template)
    handles += draw_walkable(ax, template)
    handles += draw_ego(ax, template, dims)
    ax.set_aspect("equal")
    xmin, ymin, xmax, ymax = template.bounds
    pad = 3.0
    ax.set_xlim(xmin - pad, xmax + pad)
    ax.set_ylim(ymin - pad, ymax + pad)
    ax.set_xlabel("x east [m]")
    ax.set_ylabel("y north [m]")
    ax.set_title(f"{template.id} v{template.version}   {template_hash(template)[:19]}", fontsize=10)
    ax.grid(True, linewidth=0.3, alpha=0.5)
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    return write_bytes_atomic(out_png, buf.getvalue())


def _figure_size(bounds: tuple[float, float, float, float]) -> tuple[float, float]:
    xmin, ymin, xmax, ymax = bounds
    aspect = (ymax - ymin + 6.0) / (xmax - xmin + 6.0)
    return FIGURE_WIDTH_IN, float(np.clip(FIGURE_WIDTH_IN * aspect, 3.0, FIGURE_WIDTH_IN))


def draw_regions(ax: Axes, template: WorldTemplate) -> list[Artist]:
    """Fill the template's regions by type; legend handles for the types present.

    The patches are added as artists, leaving the axes' data limits alone: both pictures that draw them set their
    limits themselves, and ``add_patch`` measuring each polygon for limits nobody reads was ~40 % of drawing them."""
    present = []
    for region in template.regions:
        colour = REGION_COLOURS[region.type]
        ax.add_artist(PolygonPatch(region.polygon, closed=True, facecolor=colour, edgecolor="#555555",
                                   linewidth=0.5, alpha=0.75, zorder=1))
        if region.type not in present:
            present.append(region.type)
    return [Patch(facecolor=REGION_COLOURS[t], edgecolor="#555555", label=t) for t in present]


def draw_instances(ax: Axes, template: WorldTemplate, dims: Mapping[str, tuple[float, float]]) -> list[Artist]:
    """Outline each instance's footprint (``dims``: ``{asset id: (length_m, width_m)}``), filled for solid families.

    One collection for all of them: a patch each cost ~3 ms in matplotlib's bookkeeping (city_crossing's
    5 472 instances took 26 s to add and 14 s more to draw)."""
    polygons: list[NDArray[np.float64]] = []
    faces: list[str] = []
    edges: list[str] = []
    for inst in template.instances:
        family, _ = parse_asset_id(inst.asset)
        length, width = dims.get(inst.asset, UNKNOWN_FOOTPRINT_M)
        polygons.append(footprint_corners(inst.pose.x, inst.pose.y, inst.pose.yaw_rad, length / 2, width / 2))
        colour = FAMILY_COLOURS.get(family, VEHICLE_COLOUR)
        filled = family not in ("road_surface", "sidewalk", "crosswalk_marking", "terrain")
        faces.append(colour if filled else "none")
        edges.append(colour)
    if polygons:
        ax.add_collection(PolyCollection(polygons, closed=True, facecolors=faces, edgecolors=edges, linewidths=0.6,
                                         alpha=0.9, zorder=2), autolim=False)
    return [Patch(facecolor="none", edgecolor=FAMILY_COLOURS["road_surface"], label="instance footprint")]


def draw_lanes(ax: Axes, template: WorldTemplate,
               view: tuple[float, float, float, float] | None = None) -> list[Artist]:
    """Lane centrelines with direction arrows, and the signals' stop lines.

    ``view``: ``(xmin, ymin, xmax, ymax)``, the axes' limits the caller sets after drawing; arrows whose head lies
    more than :data:`VIEW_MARGIN_M` outside them are left out (matplotlib draws an annotation only where its point
    lies inside the axes: the same picture, without creating, measuring and skipping them).
    """
    graph = template.lane_graph
    for lane in graph.lanes.values():
        ax.plot(lane.points[:, 0], lane.points[:, 1], color=LANE_COLOUR, linewidth=1.0, zorder=3)
        count = max(1, int(lane.length_m // ARROW_SPACING_M))
        for s in (np.arange(count) + 0.5) * lane.length_m / count:
            x, y, yaw = lane.pose_at(float(s))
            head = (x + ARROW_LENGTH_M * math.cos(yaw), y + ARROW_LENGTH_M * math.sin(yaw))
            if view is not None and not (view[0] - VIEW_MARGIN_M <= head[0] <= view[2] + VIEW_MARGIN_M
                                         and view[1] - VIEW_MARGIN_M <= head[1] <= view[3] + VIEW_MARGIN_M):
                continue
            ax.annotate("", xy=head, xytext=(x, y),
                        arrowprops={"arrowstyle": "->", "color": LANE_COLOUR, "lw": 1.2}, zorder=3)
    for signal in template.signals:
        lane = graph.lane(signal.stop_line.lane)
        a = lane.point_at(signal.stop_line.s_m, 0.5 * lane.width_m)
        b = lane.point_at(signal.stop_line.s_m, -0.5 * lane.width_m)
        ax.plot([a[0], b[0]], [a[1], b[1]], color=STOP_LINE_COLOUR, linewidth=2.0, zorder=4)
    handles: list[Artist] = [Line2D([], [], color=LANE_COLOUR, marker=">", label="lane (direction)")]
    if template.signals:
        handles.append(Line2D([], [], color=STOP_LINE_COLOUR, linewidth=2.0, label="stop line"))
    return handles


#: How far outside the view (m) :func:`draw_lanes` still creates an arrow (matplotlib decides at draw time).
VIEW_MARGIN_M = 1.0


def draw_walkable(ax: Axes, template: WorldTemplate) -> list[Artist]:
    """The walkable graph's edges and nodes."""
    walk = template.walk_graph
    for a, neighbours in walk.adjacency.items():
        for b in neighbours:
            if a < b:
                (ax_, ay), (bx, by) = walk.nodes[a], walk.nodes[b]
                ax.plot([ax_, bx], [ay, by], color=WALK_COLOUR, linewidth=0.8, linestyle="--", zorder=3)
    xy = np.array(list(walk.nodes.values()))
    ax.scatter(xy[:, 0], xy[:, 1], s=6, color=WALK_COLOUR, zorder=4)
    return [Line2D([], [], color=WALK_COLOUR, linestyle="--", marker=".", label="walkable graph")]


def draw_ego(ax: Axes, template: WorldTemplate, dims: Mapping[str, tuple[float, float]]) -> list[Artist]:
    """The ego at its start pose, its rig's mount points and each camera's field-of-view wedge."""
    ego = template.ego
    x, y, yaw = template.lane_graph.pose_at(ego.route[0], ego.start_s_m)
    T_world_body = pose_2d(x, y, yaw)
    length, width = dims.get(ego.asset, DEFAULT_EGO_FOOTPRINT_M)
    ax.add_patch(PolygonPatch(footprint_corners(x, y, yaw, length / 2, width / 2), closed=True,
                              facecolor=EGO_COLOUR, edgecolor="black", linewidth=0.8, zorder=5))
    mounts = template.sensor_rig.mounts
    for mount in mounts.values():
        px, py = compose(T_world_body, mount.matrix())[:2, 3]
        ax.scatter([px], [py], s=14, color="black", marker=MOUNT_MARKERS[mount.type], zorder=6)
    for sensor in template.sensor_rig.sensors.values():
        if isinstance(sensor, CameraSettings):
            T = compose(T_world_body, mounts[sensor.mount].matrix())
            heading_deg = math.degrees(yaw_of(T))
            half = 0.5 * sensor.hfov_deg
            ax.add_patch(Wedge((T[0, 3], T[1, 3]), FOV_PLOT_RANGE_M, heading_deg - half, heading_deg + half,
                               facecolor=EGO_COLOUR, alpha=0.15, edgecolor=EGO_COLOUR, zorder=4))
    return [
        Patch(facecolor=EGO_COLOUR, edgecolor="black", label="ego (start)"),
        *(Line2D([], [], color="black", marker=MOUNT_MARKERS[kind], linestyle="none", label=f"{kind} mount")
          for kind in sorted({m.type for m in mounts.values()})),
        Patch(facecolor=EGO_COLOUR, alpha=0.15, label=f"camera FOV ({FOV_PLOT_RANGE_M:g} m)"),
    ]
