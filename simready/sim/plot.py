"""Top-down plot of a rollout (PNG) for review: the map, every actor's track, footprints once a second, events.

World metres (x east, y north), equal aspect; the view is cropped to where
the actors went. With ``branches``, the subject's track in each branch is
overlaid (one colour per branch) on the first trace. Uses matplotlib's
object API with the Agg canvas (no ``pyplot`` global state).
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Polygon as PolygonPatch

from simready.sim.trace import Trace
from simready.world.frames import footprint_corners
from simready.world.template import WorldTemplate
from simready.world.template_plot import REGION_COLOURS

KIND_COLOURS = {"vehicle": "#2e86c1", "pedestrian": "#27ae60", "cyclist": "#8e44ad"}
SUBJECT_COLOUR = "#e67e22"
BRANCH_COLOURS = ("#c0392b", "#16a085", "#2c3e50", "#d35400", "#7f8c8d", "#f1c40f")
FOOTPRINT_EVERY_S = 1.0
MARGIN_M = 8.0


def _tracks(trace: Trace) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    ids = trace.header["actor_ids"]
    n = len(ids)
    r = len(trace.ticks) // n
    xy = np.stack([trace.column("x"), trace.column("y")], 1).reshape(r, n, 2)
    q = np.stack([trace.column("qz"), trace.column("qw")], 1).reshape(r, n, 2)
    yaw = 2.0 * np.arctan2(q[..., 0], q[..., 1])
    present = trace.column("present").astype(bool).reshape(r, n)
    t = trace.column("t").reshape(r, n)[:, 0]
    return ids, xy, yaw, present, t


def plot_rollout(trace: Trace, template: WorldTemplate, *, branches: Sequence[Trace] = (), dpi: int = 110) -> bytes:
    """PNG bytes of the rollout (and of the subject's track in each branch)."""
    ids, xy, yaw, present, t = _tracks(trace)
    kinds = trace.header.get("actor_kinds", {})
    subject = trace.header["metric_subject"]
    seen = xy[present]
    lo, hi = seen.min(axis=0) - MARGIN_M, seen.max(axis=0) + MARGIN_M
    width = max(hi[0] - lo[0], 10.0)
    height = max(hi[1] - lo[1], 10.0)
    fig = Figure(figsize=(min(14.0, 2.0 + width / 8.0), min(10.0, 2.0 + height / 8.0)), dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    for region in template.regions:
        ax.add_patch(PolygonPatch(list(region.polygon), closed=True, facecolor=REGION_COLOURS.get(region.type, "#cccccc"),
                                  edgecolor="none", alpha=0.6, zorder=0))
    for lane in template.lanes:
        pts = np.asarray(lane.polyline)
        ax.plot(pts[:, 0], pts[:, 1], color="#f4d03f", lw=0.8, ls="--", zorder=1)
    stride = max(1, int(round(FOOTPRINT_EVERY_S / trace.header["dt"])))
    for j, actor in enumerate(ids):
        colour = SUBJECT_COLOUR if actor == subject else KIND_COLOURS.get(kinds.get(actor, "vehicle"), "#555555")
        live = present[:, j]
        if not live.any():
            continue
        ax.plot(xy[live, j, 0], xy[live, j, 1], color=colour, lw=1.6 if actor == subject else 1.0, zorder=3, label=actor)
        for k in range(0, len(t), stride):
            if live[k]:
                c = footprint_corners(xy[k, j, 0], xy[k, j, 1], yaw[k, j], _half(trace, actor, 0), _half(trace, actor, 1))
                ax.add_patch(PolygonPatch(c, closed=True, fill=False, edgecolor=colour, lw=0.6, alpha=0.7, zorder=4))
    for k, other in enumerate(branches):
        b_ids, b_xy, _, b_present, _ = _tracks(other)
        j = b_ids.index(subject)
        label = (other.header.get("branch") or {}).get("label", f"branch {k}")
        live = b_present[:, j]
        ax.plot(b_xy[live, j, 0], b_xy[live, j, 1], color=BRANCH_COLOURS[k % len(BRANCH_COLOURS)], lw=1.4, ls=":", zorder=5,
                label=f"{subject} ({label})")
    for ev in trace.events:
        if ev["type"] == "collision":
            j = ids.index(ev["a"])
            row = ev["tick"] - trace.header["warmup_ticks"]
            if 0 <= row < len(t):
                ax.plot(*xy[row, j], marker="x", color="#c0392b", ms=10, mew=2.5, zorder=6)
    reveal = trace.metrics.get("reveal_to_conflict")
    if reveal:
        j = ids.index(reveal["actor"])
        row = int(round(reveal["t_reveal"] / trace.header["dt"]))
        ax.plot(*xy[min(row, len(t) - 1), j], marker="o", mfc="none", mec="#c0392b", ms=12, zorder=6)
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal")
    ax.set_xlabel("x (m, east)")
    ax.set_ylabel("y (m, north)")
    term = trace.header.get("termination")
    ax.set_title(f"{trace.header['sample_id']}  {trace.header['backend']}  t ∈ [0, {t[-1]:.1f}] s"
                 + (f"  STOPPED: {term['reason']}" if term else ""), fontsize=9)
    ax.legend(loc="upper right", fontsize=7, framealpha=0.8)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _half(trace: Trace, actor: str, axis: int) -> float:
    dims = trace.header.get("actor_dims", {}).get(actor)
    if dims is None:
        return 0.5
    return 0.5 * float(dims[axis])
