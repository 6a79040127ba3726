"""The world-trajectory QA checklist of a release and the check results it is made of.

Each :class:`CheckResult` is one check of the pipeline evaluated again over what is stored
(:mod:`simready.release.evidence`); :data:`CHECKLIST` names, for each item of the checklist, the checks that
prove it. Blocking checks are those the pipeline blocks on (asset checks with ``blocking=True``; the gate's
physical and temporal checks, which acceptance requires); a release is refused unless every one passed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


#: The gate's checks (SPEC §12) in report order; physical and temporal are required for acceptance.
GATE_CHECKS = ("physical", "temporal", "sensor", "identity", "distribution")
GATE_BLOCKING = ("physical", "temporal")


@dataclass(frozen=True)
class CheckResult:
    """One check over the suite: how many units it evaluated (entries, templates, samples, variants) and which failed."""

    check: str
    proves: str
    blocking: bool
    evaluated: int
    failures: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return not self.failures and self.evaluated > 0

    @property
    def result(self) -> str:
        return f"{self.evaluated - len(self.failures)}/{self.evaluated} passed"

    def record(self) -> dict[str, Any]:
        return {"check": self.check, "proves": self.proves, "blocking": self.blocking, "evaluated": self.evaluated,
                "passed": self.passed, "result": self.result, "failures": list(self.failures[:20])}


#: The world-trajectory QA checklist (issue 18 item 5): each item, what it asks, the checks that prove it.
CHECKLIST: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("coordinates", "poses in the world frame (x east, y north, z up), finite, inside the map; the sensors saw "
     "the poses the trace holds", ("template_valid", "trajectories_accepted", "observations_parity")),
    ("identity", "stable unique ids per frame, stable class per id, no id teleports; every asset a certified "
     "catalog entry", ("gate.identity", "template_assets_certified", "catalog_certified")),
    ("geometry and physics", "certified geometry and mass properties; speeds and accelerations within class "
     "limits; no overlap a transformation introduced", ("catalog_certified", "gate.physical", "trajectories_accepted")),
    ("behaviour", "the rollout ran to the end without tunnelling or energy gain; positions follow the stored "
     "velocities", ("trajectories_accepted", "gate.temporal")),
    ("scenario semantics", "every manifest parses, pins the current template and replays through the ladder to "
     "the same bytes", ("manifests_schema_valid", "manifests_pass_ladder")),
    ("numerics", "finite poses and twists, unit quaternions; |dx - v dt| within tolerance",
     ("trajectories_accepted", "gate.temporal")),
    ("reproducibility", "manifests and traces are the recorded bytes; a restored checkpoint reproduces the "
     "uninterrupted continuation; the release's own files hash as recorded",
     ("trajectories_accepted", "checkpoint_restore_reproduces", "release_objects")),
    ("interventions", "every branch shares its parent's pre-decision history; a branch adds no overlap and stays "
     "within class limits", ("branches_share_parent_history", "gate.physical")),
    ("coverage and leakage", "every sample of the suite judged by the gate; every released sample carries its split "
     "and coverage cell; no lineage crosses splits; realism measured against the reference pool",
     ("no_split_leakage", "suite_gated", "release_labelled", "gate.distribution")),
    ("handoff to measurement", "every observation file is there with its sha256, every camera frame has all its "
     "passes; camera and LiDAR agree", ("observations_complete", "observations_parity", "gate.sensor")),
)


@dataclass
class SuiteSample:
    """One sample of the split table, its local folder and the sha256 of its files by name in the folder."""

    row: Mapping[str, Any]
    folder: Path
    hashes: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return str(self.row["sample"])


def checklist(results: list[CheckResult]) -> list[dict[str, Any]]:
    """The QA checklist: each item with its checks' results; an item passes when its blocking checks do."""
    by_name = {r.check: r for r in results}
    items = []
    for item, asks, checks in CHECKLIST:
        rows = [by_name[c].record() for c in checks]
        items.append({"item": item, "asks": asks, "checks": rows,
                      "passed": all(r["passed"] for r in rows if r["blocking"])})
    return items
