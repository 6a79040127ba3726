"""Top-down picture of a rollout (and its branches) over the template, for reviewers.

Why: a reviewer judges a brake/coast pair faster from one picture of both ego
paths against the parked van and the crossing pedestrian than from tables.
Drawn with matplotlib's Agg canvas (no pyplot global state).
"""

from __future__ import annotations

from collections.abc import Mapping
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Polygon

from simready.common.atomic import write_bytes_atomic
from simready.world.template import WorldTemplate
from simready.world.frames import footprint_corners
from simready.world.template_plot import draw_lanes, draw_regions

if TYPE_CHECKING:
    from simready.sim.storage.trace import Trace

ACTOR_COLOURS = {"ego": "#d9480f", "parked": "#495057", "agent": "#1c7ed6"}
BRANCH_STYLES = {"brake": ("#2b8a3e", "-"), "coast": ("#c92a2a", "--")}
#: The role :func:`plot_rollout` reads as background traffic: drawn thin and grey, one legend entry for all of them,
#: and left out of the picture's extent (a city's traffic spans the map; the scenario is what a reviewer looks at).
BACKGROUND_ROLE = "background"
BACKGROUND_COLOUR = "#343a40"
#: With background traffic, the picture spans at least this much each way around the scenario (m).
BACKGROUND_MIN_SPAN_M = 80.0


def _actor_rows(trace: Trace) -> dict[str, np.ndarray]:
    """Per actor id (sorted), the indices of its present rows in the ticks table, in table order (one stable sort
    of the ids' codes, not a pandas group-by: a picture reads three traces).

    The ids are coded by arrow's hash (its dictionary encoding, a few distinct values) and the few values sorted,
    not by ``np.unique`` over a Python string a row (sorting those was ~28 ms of a traffic picture's trace)."""
    encoded = trace.ticks.column("actor_id").combine_chunks().dictionary_encode()
    values = [str(v) for v in encoded.dictionary.to_pylist()]
    by_name = sorted(range(len(values)), key=values.__getitem__)
    names = [values[i] for i in by_name]
    rank = np.empty(len(values), np.int64)
    rank[by_name] = np.arange(len(values))
    codes = rank[encoded.indices.to_numpy(zero_copy_only=False)]
    order = np.argsort(codes, kind="stable")
    present = np.asarray(trace.column("present"), bool)[order]
    bounds = np.cumsum(np.bincount(codes, minlength=len(names)))[:-1]
    return {str(a): rows[keep] for a, rows, keep in zip(names, np.split(order, bounds), np.split(present, bounds))}


def _paths(trace: Trace, rows: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Per actor id, its present rows' ``(x, y, t)`` (an (n, 3) array in tick order)."""
    xyt = np.column_stack([np.asarray(trace.column(c), np.float64) for c in ("x", "y", "t")])
    return {a: xyt[r] for a, r in (_actor_rows(trace) if rows is None else rows).items()}


def plot_rollout(
    template: WorldTemplate,
    trace: Trace,
    out_png: Path,
    *,
    roles: Mapping[str, str],
    dims: Mapping[str, tuple[float, float]],
    branches: Mapping[str, Trace] | None = None,
    title: str = "",
) -> Path:
    """Actor paths (start footprint, end marker, collisions) and, if given, each branch's ego path, as a PNG."""
    fig = rollout_figure(template, trace, roles=roles, dims=dims, branches=branches, title=title)
    buf = BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return write_bytes_atomic(out_png, buf.getvalue())


def rollout_figure(
    template: WorldTemplate,
    trace: Trace,
    *,
    roles: Mapping[str, str],
    dims: Mapping[str, tuple[float, float]],
    branches: Mapping[str, Trace] | None = None,
    title: str = "",
) -> Figure:
    """The figure :func:`plot_rollout` writes (one axes, its legend beside it)."""
    rows = _actor_rows(trace)
    paths = _paths(trace, rows)
    framed = {a: p for a, p in paths.items() if roles.get(a) != BACKGROUND_ROLE} or paths
    xy = np.concatenate([p[:, :2] for p in framed.values() if len(p)]) if framed else np.zeros((1, 2))
    lo, hi = xy.min(axis=0) - 12.0, xy.max(axis=0) + 12.0
    if len(framed) < len(paths):  # traffic around a scenario: enough street around it to see the traffic
        grow = np.maximum(BACKGROUND_MIN_SPAN_M - (hi - lo), 0.0) / 2.0
        lo, hi = lo - grow, hi + grow
    fig = Figure(figsize=(10, max(3.0, 10 * (hi[1] - lo[1]) / max(hi[0] - lo[0], 1.0))))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    draw_regions(ax, template)
    draw_lanes(ax, template, view=(float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1])))
    background: list[Line2D] = []
    start_yaw = _start_yaws(trace, rows)
    for actor_id, p in sorted(paths.items()):
        if not len(p):
            continue
        role = roles.get(actor_id, "agent")
        if role == BACKGROUND_ROLE:
            # Added as artists: what ax.plot and ax.fill make, without their argument parsing and data-limit
            # updates (the limits are set below); ~100 of each in a city's traffic, the same PNG bytes.
            line = Line2D(p[:, 0], p[:, 1], color=BACKGROUND_COLOUR, lw=1.0, alpha=0.5, zorder=3.5)
            ax.add_artist(line)
            background.append(line)
            length, width = dims.get(actor_id, (1.0, 1.0))
            ax.add_artist(Polygon(footprint_corners(p[0, 0], p[0, 1], start_yaw[actor_id], length / 2, width / 2),
                                  closed=True, color=BACKGROUND_COLOUR, alpha=0.5, zorder=3.5))
            continue
        colour = ACTOR_COLOURS.get(role, "#1c7ed6")
        ax.plot(p[:, 0], p[:, 1], color=colour, lw=1.5, label=f"{actor_id} ({role})")
        length, width = dims.get(actor_id, (1.0, 1.0))
        yaw = start_yaw[actor_id]
        ax.fill(*footprint_corners(p[0, 0], p[0, 1], yaw, length / 2, width / 2).T, color=colour, alpha=0.35)
        ax.plot(p[-1, 0], p[-1, 1], marker="o", color=colour, ms=4)
    for label, branch_trace in sorted((branches or {}).items()):
        ego = next((a for a, r in roles.items() if r == "ego"), None)
        branch_paths = _paths(branch_trace) if ego else {}
        bp = branch_paths.get(ego) if ego else None
        if bp is not None and len(bp):
            colour, style = BRANCH_STYLES.get(label.split("#")[0], ("#7048e8", ":"))
            ax.plot(bp[:, 0], bp[:, 1], color=colour, ls=style, lw=2.2, label=f"ego — {label}")
            # Where the branch's contacts happened, and the other party's path in that branch (it may be shoved).
            for ev in branch_trace.events:
                if ev.get("type") == "collision" and ev.get("point") and ego in (ev["a"], ev["b"]):
                    other = ev["b"] if ev["a"] == ego else ev["a"]
                    op = branch_paths.get(other)
                    if op is not None and len(op):
                        ax.plot(op[:, 0], op[:, 1], color=colour, ls=":", lw=1.0)
                    ax.plot(*ev["point"], marker="X", color=colour, ms=11, mec="k",
                            label=f"{label}: hits {other} at {ev['relative_speed_mps']:.1f} m/s, t={ev['t']:.2f} s")
    for ev in trace.events:
        if ev.get("type") == "collision" or ev.get("kind") == "collision":
            pos = ev.get("position") or ev.get("point")
            if pos:
                ax.plot(pos[0], pos[1], marker="x", color="k", ms=10, mew=2)
    if background:
        background[0].set_label(f"background traffic ({len(background)})")
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal")
    ax.set_xlabel("x east [m]")
    ax.set_ylabel("y north [m]")
    ax.set_title(title or trace.header.get("input_hash", "")[:19], fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    # Laid out once, here: without an engine left on the figure (tight_layout leaves a placeholder), savefig draws
    # it once instead of twice (its first, invisible draw is for a layout engine; ~35 % of the picture's CPU).
    fig.set_layout_engine(None)
    return fig


def _start_yaws(trace: Trace, rows: Mapping[str, np.ndarray]) -> dict[str, float]:
    """Each actor's yaw at its first present row (``rows``: :func:`_actor_rows`; actors never present have none)."""
    qz, qw = trace.column("qz"), trace.column("qw")
    return {a: 2.0 * float(np.arctan2(float(qz[r[0]]), float(qw[r[0]]))) for a, r in rows.items() if len(r)}
