"""A sample's reviewer page: ``<sample>/review.html`` (:attr:`simready.artifacts.layout.SampleDir.review_page`).

One static HTML file beside the sample's files, written when the gate has judged it. Everything it shows
comes from those files — the manifest (intent, cell, split), ``validity.json`` (the checks, scores and
weights of the base and of each branch), ``branches/outcomes.json`` and every observation folder's
``render.json`` (the window each video covers) — and every link is relative to the page, so the folder
works from any copy, an archive or a static website.

The sensor videos of the base and of every branch play on one scenario clock: video time 0 is the start of
the folder's observed window (``render.json``'s ``window_s[0]``; the sensor's first sample is at most one
of its periods later), so a video plays ``t − t0`` when the clock reads ``t`` and waits while ``t`` is
outside its window (a branch's window starts at the decision).

Output is deterministic: the same files give the same bytes (no clock, no absolute path).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
import pyarrow.parquet as pq

from simready.artifacts.layout import FOXGLOVE_HOW_TO_OPEN as HOW_TO_OPEN, ObservationDir, SampleDir
from simready.artifacts.records import BranchOutcome, Outcomes, Render, Results, ValidityRecord
from simready.common.atomic import write_text_atomic
from simready.review.summary import KEYS, SampleSummary, page_key, reference_of, sample_summary
from simready.review.text import breakable, number, readable, relative_href
from simready.review.verdict import CheckRow, check_rows, explain, pass_rules
from simready.scenario.manifest import load_manifest
from simready.sim.storage.trace import HEADER_KEY
from simready.validity import policy
from simready.validity.gate import ValidityReport


_TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).with_name("templates")),
    autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
)

_TEMPLATES.filters["num"] = number
_TEMPLATES.filters["readable"] = readable
_TEMPLATES.filters["breakable"] = breakable


@dataclass(frozen=True)
class Clip:
    """One sensor's review video in one observation folder: its link and the scenario time of its first frame;
    a camera's (``camera``) is shown with the LiDAR points and truth boxes drawn over it, the others in a table."""

    sensor: str
    href: str
    t0_s: float
    t1_s: float
    camera: bool = False


@dataclass(frozen=True)
class CameraPanel:
    """A camera's video of one variant with the overlay canvas over it: ``key`` names its drawing in
    ``review-camera.js`` (``<variant>/<camera>``); width and height are the video's (padded to macroblocks)."""

    variant: str
    clip: Clip
    width_px: int
    height_px: int

    @property
    def key(self) -> str:
        return f"{self.variant}/{self.clip.sensor}"


@dataclass(frozen=True)
class Mark:
    """A moment the review clock marks: the decision or a branch's collision; ``at`` is its place on the
    clock's slider in percent (None when outside the clock's range)."""

    t_s: float
    kind: str
    label: str
    at: float | None


def clock_marks(outcomes: Outcomes | None, clock: tuple[float, float]) -> list[Mark]:
    """The decision and each branch's first collision at or after it, sorted by time, placed on ``clock``."""
    if outcomes is None:
        return []
    lo, hi = clock

    def at(t: float) -> float | None:
        return round(100.0 * (t - lo) / (hi - lo), 3) if hi > lo and lo - 1e-9 <= t <= hi + 1e-9 else None

    marks = [Mark(outcomes.decision_t_s, "decision", f"decision {outcomes.decision_t_s:.2f} s",
                  at(outcomes.decision_t_s))]
    for b in sorted(outcomes.branches, key=lambda b: b.label):
        if b.collision and b.collision_t is not None:
            marks.append(Mark(b.collision_t, "collision",
                              f"{b.label}: collision with {b.collision_with or 'another body'} at {b.collision_t:.2f} s",
                              at(b.collision_t)))
    return sorted(marks, key=lambda m: (m.t_s, m.label))


@dataclass(frozen=True)
class Picture:
    """A picture beside the page: its name and link."""

    name: str
    href: str


@dataclass(frozen=True)
class Observed:
    """One observation folder of the sample (the base window or a branch's): its window, videos and pictures."""

    variant: str
    href: str
    window_s: tuple[float, float]
    clips: tuple[Clip, ...]
    pictures: tuple[Picture, ...]


@dataclass(frozen=True)
class Variant:
    """The gate's verdict on the base or on one branch, with the table and the sentences a reviewer reads."""

    name: str
    report: ValidityReport
    rows: tuple[CheckRow, ...]
    why: tuple[str, ...]
    outcome: BranchOutcome | None


def _observed(sample: SampleDir, variant: str, obs: ObservationDir) -> Observed:
    window = Render.read(obs.render).settings.window_s
    t0, t1 = float(window[0]), float(window[-1])
    cameras = set(Results.read(obs.results).cameras) if obs.results.is_file() else set()
    return Observed(
        variant=variant, href=relative_href(obs.root, sample.root) + "/", window_s=(t0, t1),
        clips=tuple(Clip(v.stem, relative_href(v, sample.root), t0, t1, v.stem in cameras) for v in obs.videos()),
        pictures=tuple(Picture(p.stem.replace("_", " "), relative_href(p, sample.root)) for p in obs.review_pictures()),
    )


def _variant(name: str, dump: dict[str, Any], outcome: BranchOutcome | None) -> Variant:
    report = ValidityReport.model_validate(dump)
    return Variant(name=name, report=report, rows=tuple(check_rows(report)), why=tuple(explain(report)),
                   outcome=outcome)


#: The scene's time step on the page (s): the traces subsampled to it for the bird's-eye view and the plots.
SCENE_STEP_S = 0.1


def _series(trace_path: Path, span: tuple[float, float]) -> dict[str, Any]:
    """One trace's actors over ``span`` at :data:`SCENE_STEP_S`: per actor its kind, length and width and the
    columns t, x, y, yaw, speed, accel (rounded: the page draws them, it does not measure with them)."""

    table = pq.read_table(trace_path, columns=["t", "actor_id", "x", "y", "qx", "qy", "qz", "qw", "speed_mps",
                                                "accel_mps2", "present"])
    header = json.loads((table.schema.metadata or {}).get(HEADER_KEY, b"{}"))
    t = table.column("t").to_numpy()
    k = np.round(t / SCENE_STEP_S)
    # One step beyond each end, so that every moment of the span has a sample at or before it.
    keep = (np.abs(t - k * SCENE_STEP_S) < 1e-6) & (t > span[0] - SCENE_STEP_S - 1e-9) & (t < span[1] + SCENE_STEP_S + 1e-9)
    keep &= table.column("present").to_numpy(zero_copy_only=False).astype(bool)
    cols = {c: table.column(c).to_numpy(zero_copy_only=False)[keep] for c in table.column_names}
    yaw = np.arctan2(2 * (cols["qw"] * cols["qz"] + cols["qx"] * cols["qy"]),
                     1 - 2 * (cols["qy"] ** 2 + cols["qz"] ** 2))
    actors = {}
    dims, kinds = header.get("actor_dims", {}), header.get("actor_kinds", {})
    for actor in sorted(set(cols["actor_id"])):
        m = cols["actor_id"] == actor
        d = dims.get(actor, [4.5, 1.9, 1.5])
        actors[str(actor)] = {"kind": kinds.get(actor, ""), "length": round(float(d[0]), 2), "width": round(float(d[1]), 2),
                              **{name: [round(float(v), r) for v in values[m]] for name, values, r in (
                                  ("t", cols["t"], 2), ("x", cols["x"], 2), ("y", cols["y"], 2), ("yaw", yaw, 3),
                                  ("speed", cols["speed_mps"], 2), ("accel", cols["accel_mps2"], 2))}}
    return {"subject": header.get("metric_subject"), "actors": actors}


#: The bird's-eye view's canvas (px) and the margin around every actor's path in it (m).
BEV_PX = (560, 240)
BEV_PAD_M = 6.0


def bev_box(variants: Mapping[str, Any]) -> tuple[float, float, float, float]:
    """The world box (x0, x1, y0, y1, m) the bird's-eye view shows: every actor's path of every variant with
    :data:`BEV_PAD_M` around it, widened to the canvas's shape (:data:`BEV_PX`)."""
    xs = [x for v in variants.values() for a in v["actors"].values() for x in a["x"]] or [0.0]
    ys = [y for v in variants.values() for a in v["actors"].values() for y in a["y"]] or [0.0]
    x0, x1, y0, y1 = min(xs) - BEV_PAD_M, max(xs) + BEV_PAD_M, min(ys) - BEV_PAD_M, max(ys) + BEV_PAD_M
    w, h = BEV_PX
    grow = max(0.0, (x1 - x0) * h / w - (y1 - y0)) / 2
    y0, y1 = y0 - grow, y1 + grow
    grow = max(0.0, (y1 - y0) * w / h - (x1 - x0)) / 2
    return round(x0 - grow, 3), round(x1 + grow, 3), round(y0, 3), round(y1, 3)


def scene_data(sample: SampleDir, outcomes: Outcomes | None, clock: tuple[float, float]) -> dict[str, Any] | None:
    """What the page draws on the scenario clock: each variant's actors over the clock's span (base, then each
    branch with a trace), the bird's-eye view's box, the subject and the actor it is in conflict with, the decision
    and the collisions. None without a trace or a clock."""
    if not sample.trace.is_file() or clock[1] <= clock[0]:
        return None
    variants = {"base": _series(sample.trace, clock)}
    for b in sample.branches():
        if b.trace.is_file():
            variants[b.label] = _series(b.trace, clock)
    conflict = next((b.conflict_actor for b in (outcomes.branches if outcomes else []) if b.conflict_actor), None)
    return {"clock": [round(clock[0], 3), round(clock[1], 3)], "variants": variants, "box": list(bev_box(variants)),
            "conflict": conflict.rsplit("actor:", 1)[-1] if conflict else None,
            "decision": outcomes.decision_t_s if outcomes else None,
            "collisions": [{"variant": b.label, "t": b.collision_t} for b in (outcomes.branches if outcomes else [])
                           if b.collision and b.collision_t is not None]}


def review_clock(sample: SampleDir) -> tuple[float, float]:
    """The review clock's span: from the earliest to the latest observed window of the folders with videos."""
    spans = [Render.read(obs.render).settings.window_s for _, obs, _ in _folders(sample)
             if obs.render.is_file() and obs.videos()]
    return min((float(w[0]) for w in spans), default=0.0), max((float(w[-1]) for w in spans), default=0.0)


@dataclass(frozen=True)
class Scene:
    """The sample's scene on the review clock (:func:`scene_data`; None without one), built once for the page and
    for the bird's-eye view's clouds in ``review-camera.js``."""

    data: dict[str, Any] | None

    @classmethod
    def of(cls, sample: SampleDir) -> "Scene":
        outcomes = Outcomes.read(sample.outcomes) if sample.outcomes.is_file() else None
        return cls(scene_data(sample, outcomes, review_clock(sample)))

    @property
    def box(self) -> tuple[float, float, float, float] | None:
        return tuple(self.data["box"]) if self.data else None


def _folders(sample: SampleDir) -> list[tuple[str, ObservationDir, Path]]:
    """(variant, observation folder, the trace it observed): the base, then each branch by label."""
    return [("base", sample.observations, sample.trace), *((b.label, b.observations, b.trace) for b in sample.branches())]


def camera_panels(observed: list[Observed], sample: SampleDir) -> list[CameraPanel]:
    """Every camera video of the sample with its picture's size in the video, base first, then by branch."""
    from simready.measurement.video import padded_size  # heavy: Pillow, imageio; only with a video

    panels = []
    for o in observed:
        obs = dict((v, f) for v, f, _ in _folders(sample))[o.variant]
        results = Results.read(obs.results)
        for c in o.clips:
            if c.camera:
                p = results.cameras[c.sensor].projection
                panels.append(CameraPanel(o.variant, c, *padded_size(p.width_px, p.height_px)))
    return panels


def write_camera_overlay(sample: SampleDir, scene: Scene | None = None) -> Path | None:
    """Write ``review-camera.js`` (atomically) for every camera video of the sample and, for the bird's-eye view
    of ``scene`` (built here when not given), every folder's LiDAR sweeps; its path, or None (and no file) when
    there is nothing to draw."""
    from simready.review.camera import folder_drawings, overlay_script  # heavy: embreex; only for camera overlays

    manifest = load_manifest(sample.manifest)
    egos = [a.id for a in manifest.actors if a.role == "ego"]
    box = (scene or Scene.of(sample)).box
    drawings: dict[str, Any] = {}
    for variant, obs, trace in _folders(sample):
        if not (obs.render.is_file() and obs.results.is_file() and trace.is_file() and egos):
            continue
        videos = {v.stem for v in obs.videos()}
        cameras = [c for c in Results.read(obs.results).cameras if c in videos]
        drawn = folder_drawings(obs, trace, egos[0], sorted(cameras), box if videos else None)
        drawings.update({f"{variant}/{camera}": o for camera, o in drawn.cameras.items()})
        if drawn.cloud is not None and drawn.cloud.meta["sweeps"]:
            drawings[f"{variant}/{drawn.cloud.meta['lidar']}"] = drawn.cloud
    if not drawings:
        sample.review_camera.unlink(missing_ok=True)
        return None
    return write_text_atomic(sample.review_camera, overlay_script(drawings))


def render_sample_page(sample: SampleDir, batch: str, scene: Scene | None = None) -> str:
    """The page's HTML for a judged sample (``validity.json`` present) of batch ``batch``; ``scene`` is built here
    when not given."""
    from simready.review.camera import BEV_CELL_M  # heavy: embreex; only for camera overlays

    manifest = load_manifest(sample.manifest)
    record = ValidityRecord.read(sample.validity)
    outcomes = Outcomes.read(sample.outcomes) if sample.outcomes.is_file() else None
    by_label = {b.label: b for b in outcomes.branches} if outcomes else {}
    variants = [_variant("base", record.base, None),
                *(_variant(label, rep, by_label.get(label)) for label, rep in sorted(record.branches.items()))]
    observed = [_observed(sample, name, obs) for name, obs, _ in _folders(sample) if obs.render.is_file()]
    clips = [c for o in observed for c in o.clips]
    files = [(name, relative_href(path, sample.root)) for name, path in (
        ("manifest", sample.manifest), ("trace", sample.trace), ("verdict", sample.verdict),
        ("validity", sample.validity), ("outcomes", sample.outcomes)) if path.is_file()]
    summary = sample_summary(sample, batch)
    clock = (min((c.t0_s for c in clips), default=0.0), max((c.t1_s for c in clips), default=0.0))
    scene = scene or Scene(scene_data(sample, outcomes, clock))
    return _TEMPLATES.get_template("sample.html.j2").render(
        summary=summary, manifest=manifest, variants=variants, observed=observed, clock=clock,
        panels=camera_panels(observed, sample),
        overlay=relative_href(sample.review_camera, sample.root) if sample.review_camera.is_file() else None,
        marks=clock_marks(outcomes, clock),
        scene=json.dumps(scene.data, sort_keys=True, separators=(",", ":")).replace("</", "<\\/"),
        decision_t_s=outcomes.decision_t_s if outcomes else None,
        index_href=relative_href(KEYS.review_index, page_key(summary).parent),
        rollout=relative_href(sample.rollout_plot, sample.root) if sample.rollout_plot.is_file() else None,
        files=files, cell_dims=sorted(manifest.coverage_cell.dims.items()),
        reference=reference_of(sample, summary, variants[0].report),
        pass_rules=pass_rules(), accept_min=policy.ACCEPT_MIN_VALIDITY, how_to_open=HOW_TO_OPEN,
        bev_cell_m=BEV_CELL_M,
    )


def write_sample_page(sample: SampleDir, batch: str, *, camera: bool = True, scene: Scene | None = None) -> Path:
    """Write ``review-camera.js`` (unless ``camera`` is False: written already) and ``review.html`` beside the
    sample's files (atomically); the page's path. ``scene``: the sample's (built here when not given)."""
    scene = scene or Scene.of(sample)
    if camera:
        write_camera_overlay(sample, scene)
    return write_text_atomic(sample.review_page, render_sample_page(sample, batch, scene))


def render_index(samples: list[SampleSummary], title: str) -> str:
    """The suite index's HTML: one row per sample, linked to its page; filters by template, intent, cell and
    verdict (in the browser, no server)."""
    def options(field: str) -> list[str]:
        return sorted({getattr(s, field) for s in samples})

    counts = {v: sum(1 for s in samples if s.verdict == v) for v in ("accepted", "branch rejected", "rejected")}
    here = KEYS.review_index.parent
    rows = [(s, relative_href(page_key(s), here),
             relative_href(Path(s.thumbnail), here) if s.thumbnail else None) for s in samples]
    labels = sorted({b.label for s in samples for b in s.outcomes})
    collided = sorted({"yes" if s.collided else "no" for s in samples}, reverse=True)
    return _TEMPLATES.get_template("index.html.j2").render(
        title=title, rows=rows, counts=counts, labels=labels,
        collisions=sum(1 for s in samples for b in s.outcomes if b.collision),
        filters=[("template", options("template")), ("intent", options("intent")), ("split", options("split")),
                 ("verdict", [v for v in counts if counts[v]]), ("collided", collided)],
    )


def write_index(samples: list[SampleSummary], index: Path, title: str) -> Path:
    """Write the suite index at ``index`` (the local file of :attr:`ArtifactLayout.review_index`), atomically."""
    return write_text_atomic(index, render_index(samples, title))
