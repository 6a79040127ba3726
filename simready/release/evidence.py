"""The checks a release re-evaluates over the stored suite (:class:`~simready.release.checklist.CheckResult`).

Each is evaluated by the same domain function its asset check or gate calls: the world stage's (catalog
certified, templates valid), the scenario stage's (manifests parse and pin the template hash, replay through the
ladder), the simulation stage's (traces accepted and as recorded, checkpoint restore reproduces, branches share
the parent's history), the measurement stage's (observation files whole, parity with the trace), the suite's (no
split leakage) and the five checks of the validity gate, read from each released variant's ``validity.json``.

Results name samples and counts only (no local paths), so the checklist — part of the release hash — is the
same wherever the suite is stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simready.common.errors import SimreadyError
from simready.common.parallel import map_samples
from simready.artifacts.layout import ObservationDir, SampleDir
from simready.measurement.batch import observation_dirs
from simready.measurement.integrity import incomplete_frames, missing_or_corrupt
from simready.release.checklist import GATE_BLOCKING, GATE_CHECKS, CheckResult, SuiteSample
from simready.scenario.generator import replay
from simready.scenario.manifest import load_manifest
from simready.scenario.splits import SHARED, leakage, load_splits
from simready.sim.batch import branches_share_history, restore_reproduces, sample_intact

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog


def _per_unit(check: str, proves: str, units: Mapping[str, Callable[[], tuple[bool, str]]]) -> CheckResult:
    failures = []
    for unit, test in sorted(units.items()):
        ok, why = test()
        if not ok:
            failures.append(f"{unit}: {why}")
    return CheckResult(check, proves, True, len(units), tuple(failures))


def _guarded(test: Callable[[], tuple[bool, str]]) -> Callable[[], tuple[bool, str]]:
    """A failing read is the check failing (with its one line), not a crash of the release."""
    def run() -> tuple[bool, str]:
        try:
            return test()
        except (SimreadyError, OSError, ValueError, KeyError) as exc:
            return False, exc.one_line() if isinstance(exc, SimreadyError) else f"{type(exc).__name__}: {exc}"
    return run


def _known(verdict: tuple[bool, str]) -> Callable[[], tuple[bool, str]]:
    """A check's verdict already evaluated (on a worker), as :func:`_per_unit` asks for it."""
    return lambda: verdict


def _observations_whole(sample: SuiteSample) -> tuple[bool, str]:
    bad = []
    for obs in observation_dirs(sample.folder).values():
        prefix = obs.relative_to(sample.folder).as_posix() + "/"
        mine = {k[len(prefix):]: v for k, v in sample.hashes.items() if k.startswith(prefix)}
        bad += missing_or_corrupt(obs, mine) + incomplete_frames(obs)
    return not bad, f"{len(bad)} problem(s), first: {Path(bad[0]).name if bad else ''}"


def _parity(sample: SuiteSample) -> tuple[bool, str]:
    failed = [obs.relative_to(sample.folder).as_posix() for obs in observation_dirs(sample.folder).values()
              if not json.loads(ObservationDir(obs).parity.read_text())["passed"]]
    return not failed, f"parity failed in {failed}"


def _verdict_accepted(sample: SuiteSample) -> tuple[bool, str]:
    verdict = json.loads(SampleDir(sample.folder).verdict.read_text())
    if verdict.get("verdict") != "accept":
        return False, f"verdict {verdict.get('verdict')!r}"
    ok, why = sample_intact(sample.folder)
    return ok, "" if ok else why.rsplit(": ", 1)[-1]


def evaluate_suite(samples: list[SuiteSample], released: Mapping[str, Mapping[str, Any]], *, certification: Mapping[str, Any],
                   validations: Mapping[str, Mapping[str, Any]], templates: Mapping[str, Any], catalog: Catalog,
                   backend: str) -> list[CheckResult]:
    """Every check over the suite's samples (``released``: the validity reports of the variants released, by
    ``<sample>`` or ``<sample>#<branch>``); ``templates`` by id and ``catalog`` are the sources the replay
    and restore checks simulate with."""
    out = []
    entries = certification.get("entries", [])
    out.append(CheckResult("catalog_certified", "every catalog entry passed certification", True, len(entries),
                           tuple(e["id"] for e in entries if not e["passed"])))
    out.append(CheckResult("template_valid", "each template parses and validates", True, len(validations),
                           tuple(t for t, v in sorted(validations.items())
                                 if not v["parsed"] or [e for e in v["errors"] if e not in v["reference_errors"]])))
    out.append(CheckResult("template_assets_certified", "every asset a template references is certified", True,
                           len(validations), tuple(t for t, v in sorted(validations.items())
                                                   if not v["parsed"] or v["reference_errors"])))

    def schema(s: SuiteSample) -> tuple[bool, str]:
        m = load_manifest(SampleDir(s.folder).manifest)
        current = validations.get(str(s.row["template"]), {}).get("template_hash")
        return m.template_hash == current, f"template_hash {m.template_hash} is not the current {current}"

    def ladder(s: SuiteSample) -> tuple[bool, str]:
        return replay(load_manifest(SampleDir(s.folder).manifest), template=templates[str(s.row["template"])],
                      catalog=catalog)

    def restore(s: SuiteSample) -> tuple[bool, str]:
        return restore_reproduces(s.folder, templates[str(s.row["template"])], catalog, backend)

    per_sample: list[tuple[str, str, Callable[[SuiteSample], tuple[bool, str]]]] = [
        ("manifests_schema_valid", "every manifest re-parses and pins the current template hash", schema),
        ("manifests_pass_ladder", "every manifest replays from its stream root through the ladder", ladder),
        ("trajectories_accepted", "every trace accepted; manifest and trace as recorded", _verdict_accepted),
        ("checkpoint_restore_reproduces", "a restored checkpoint reproduces the continuation", restore),
        ("branches_share_parent_history", "every branch shares the pre-decision history",
         lambda s: branches_share_history(s.folder)),
        ("observations_complete", "every observation file with its sha256, every frame with all passes",
         _observations_whole),
        ("observations_parity", "observed poses match the trace within tolerance", _parity),
    ]
    # Each sample's checks one item of map_samples (side by side, one per core: the restore and ladder checks
    # simulate, the completeness check hashes every file), the verdicts the same as one after the other.
    verdicts = map_samples(lambda s: [_guarded(lambda: test(s))() for _, _, test in per_sample], samples)
    for k, (check, proves, _) in enumerate(per_sample):
        out.append(_per_unit(check, proves, {s.name: _known(v[k]) for s, v in zip(samples, verdicts)}))
    rows = [s.row for s in samples]
    shared = {f for f, s in load_splits().families.items() if s == SHARED}
    leaks = leakage(rows, shared)
    out.append(CheckResult("no_split_leakage", "no lineage (asset family, checkpoint group) crosses splits", True,
                           len(rows), tuple(f"{k}: {v}" for k, v in leaks.items())))
    for check in GATE_CHECKS:
        failed = tuple(v for v, report in sorted(released.items())
                       if not next(c for c in report["checks"] if c["check"] == check)["passed"])
        out.append(CheckResult(f"gate.{check}", f"the validity gate's {check} check over every released variant",
                               check in GATE_BLOCKING, len(released), failed))
    return out
