"""A sample's summary: the row the suite index shows (intent, cell, split, verdict, its branches, its thumbnail) and
the reference pool its distribution check was scored against; where its page lies in the artifact tree."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simready.artifacts.layout import ArtifactLayout, SampleDir
from simready.artifacts.records import Outcomes, ValidityRecord
from simready.review.text import relative_href
from simready.scenario.manifest import load_manifest
from simready.validity import policy
from simready.validity.gate import ValidityReport
from simready.validity.gate.distribution import SCENARIO_STATISTIC


#: The artifact tree's keys: the index and the sample pages link each other by their places in it, whatever
#: folder (or bucket) holds the tree.
KEYS = ArtifactLayout(Path())


def page_key(summary: SampleSummary) -> Path:
    return KEYS.batch(summary.template, summary.batch).sample(summary.sample).review_page


@dataclass(frozen=True)
class ScoredBy:
    """The statistic that scored a feature in the base's distribution check: its name, and for the scenario-level
    statistic its noise level (robust z), draws and confidence (None for PSI and JS, whose level the row gives)."""

    statistic: str
    level: float | None = None
    draws: int = 0
    confidence: float = 0.0

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> "ScoredBy":
        z = row.get("scenario") or {}
        if row.get("statistic") == SCENARIO_STATISTIC and z.get("noise_level") is not None:
            return cls(SCENARIO_STATISTIC, float(z["noise_level"]), int(z["draws"]), float(z["confidence"]))
        return cls(str(row.get("statistic") or "PSI"))


@dataclass(frozen=True)
class Reference:
    """The realism reference the distribution check compared against: the template's pool (``pool.json``).

    Attributes:
        href: the link to ``pool.json`` from the page.
        pool_samples: accepted draws in the pool; by_intent: accepted draws per intent, sorted.
        rows: the pool's feature rows.
        scope: which draws the base was scored against (``intent <name>`` or ``template pool``; None: not in
            the report), and scope_draws how many.
        quantile: the quantile of a nominal draw's divergence the noise levels bound (None: not in the report).
        noise: per feature, as the base's distribution check reported it: (feature, noise level, draws of its
            leave-one-draw-out null, confidence that the level bounds the quantile, whether the level is near the
            most PSI can reach so that PSI cannot see a shift of the feature, and the statistic that scored it:
            ``PSI``, ``JS``, or the scenario-level statistic with its own level); empty when uncalibrated.
    """

    href: str
    pool_samples: int
    by_intent: tuple[tuple[str, int], ...]
    rows: int
    scope: str | None = None
    scope_draws: int = 0
    quantile: float | None = None
    noise: tuple[tuple[str, float, int, float, bool, ScoredBy], ...] = ()

    @property
    def shared(self) -> tuple[int, float] | None:
        """(draws, confidence) when every feature's noise level rests on the same ones (the usual case), else None."""
        kinds = {(n, conf) for _, _, n, conf, _, _ in self.noise}
        return next(iter(kinds)) if len(kinds) == 1 else None


def reference_of(sample: SampleDir, summary: SampleSummary, base: ValidityReport) -> Reference | None:
    href = relative_href(KEYS.reference(summary.template).record, page_key(summary).parent)
    path = sample.root / href
    if not path.is_file():
        return None
    record = json.loads(path.read_text())
    accepted = [s["intent"] for s in record["samples"] if s["verdict"] == "accept"]
    detail = base.check("distribution").detail
    ref = detail.get("reference") or {}
    features = detail.get("features") or {}
    noise = tuple((name, float(f["noise_level"]), int(ref["null_draws"][name]), float(ref["confidence"][name]),
                   f.get("ceiling") is not None and f["noise_level"] >= policy.NOISE_SATURATED_SHARE * f["ceiling"],
                   ScoredBy.of(f))
                  for name, f in sorted(features.items())
                  if f.get("noise_level") is not None and name in ref.get("null_draws", {}))
    return Reference(href=href, pool_samples=int(record["pool_samples"]), rows=int(record["rows"]),
                     by_intent=tuple((i, accepted.count(i)) for i in sorted(set(accepted))),
                     scope=ref.get("scope"), scope_draws=int(ref.get("draws", 0)), quantile=ref.get("quantile"),
                     noise=noise)


@dataclass(frozen=True)
class BranchBrief:
    """What the suite index shows of one branch: the gate's verdict and the outcome (``branches/outcomes.json``)."""

    label: str
    accepted: bool
    collision: bool = False
    collision_with: str | None = None
    collision_t: float | None = None
    min_ttc_s: float | None = None
    stopping_distance_m: float | None = None

    @property
    def party(self) -> str:
        """The other party of the collision as the index names it (``lead``, not ``<sample>/actor:lead``)."""
        return (self.collision_with or "").rsplit("actor:", 1)[-1]


@dataclass(frozen=True)
class SampleSummary:
    """What the suite index lists of a sample (one row).

    Attributes:
        template, batch, sample: where it lies (the batch partition key names its folder).
        intent, cell, split: the manifest's intent, coverage cell id and split.
        accepted, validity, weight, capped: the base report's verdict and figures (weight before the suite's
            low-fidelity share cap).
        branches: each branch's label and whether the gate accepted it, sorted by label.
        outcomes: each branch's verdict and outcome, sorted by label (empty without ``outcomes.json``).
        thumbnail: the key of the sample's small top-down picture under the review folder (None: none).
    """

    template: str
    batch: str
    sample: str
    intent: str
    cell: str
    split: str
    accepted: bool
    validity: float
    weight: float
    capped: bool
    branches: tuple[tuple[str, bool], ...]
    outcomes: tuple[BranchBrief, ...] = ()
    thumbnail: str | None = None

    @property
    def collided(self) -> bool:
        """Whether any branch ends in a collision."""
        return any(b.collision for b in self.outcomes)

    @property
    def verdict(self) -> str:
        """``accepted`` (base and every branch), ``branch rejected`` (base accepted) or ``rejected`` (base)."""
        if not self.accepted:
            return "rejected"
        return "accepted" if all(ok for _, ok in self.branches) else "branch rejected"


def sample_summary(sample: SampleDir, batch: str) -> SampleSummary:
    """The index row of a judged sample (it must hold ``validity.json``)."""
    manifest = load_manifest(sample.manifest)
    record = ValidityRecord.read(sample.validity)
    base = ValidityReport.model_validate(record.base)
    verdicts = {label: bool(rep["accepted"]) for label, rep in record.branches.items()}
    outcomes = Outcomes.read(sample.outcomes).branches if sample.outcomes.is_file() else []
    briefs = tuple(sorted((BranchBrief(b.label, verdicts.get(b.label, False), b.collision, b.collision_with,
                                       b.collision_t, b.min_ttc_s, b.stopping_distance_m)
                           for b in outcomes if b.label in verdicts), key=lambda b: b.label))
    return SampleSummary(
        template=manifest.template_id, batch=batch, sample=manifest.sample_id, intent=manifest.intent,
        cell=manifest.coverage_cell.id, split=manifest.split, accepted=base.accepted, validity=base.validity,
        weight=base.weight, capped=base.capped, branches=tuple(sorted(verdicts.items())), outcomes=briefs,
    )


def thumbnail_key(summary: SampleSummary) -> Path:
    """Where the suite index keeps a sample's small top-down picture: under the review folder."""
    return KEYS.review_dir / "thumbs" / summary.template / summary.batch / f"{summary.sample}.png"


#: The box of an index row's picture (px).
INDEX_THUMBNAIL_PX = (200, 80)


def with_thumbnail(sample: SampleDir, summary: SampleSummary, review_dir: Path) -> SampleSummary:
    """``summary`` with its index picture: the rollout plot, cropped and scaled into :data:`INDEX_THUMBNAIL_PX`,
    written under the local review folder ``review_dir``; unchanged without a rollout plot."""
    from simready.review.thumbnail import write_thumbnail  # heavy: Pillow, only for thumbnails

    if not sample.rollout_plot.is_file():
        return summary
    key = thumbnail_key(summary)
    write_thumbnail(sample.rollout_plot, review_dir / key.relative_to(KEYS.review_dir), INDEX_THUMBNAIL_PX)
    return dataclasses.replace(summary, thumbnail=key.as_posix())
