"""``simready sim`` — run, inspect and branch rollouts from the command line.

::

    simready sim run MANIFEST [--backend kinematic-v1|dynamic-v1] --out TRACE.parquet
    simready sim inspect TRACE [--json]
    simready sim branch MANIFEST [--at SECONDS] [--actions brake,coast] [--repeats independent:N]
                                 [--backend ...] --out DIR

The template is looked up by the manifest's ``template_id`` in
``data/templates`` and its hash checked against the manifest's. Heavy
imports happen inside the handlers so ``simready --help`` stays fast.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
from pathlib import Path
from typing import Any

from simready.artifacts.layout import SampleDir
from simready.common import paths
from simready.common.atomic import write_json_atomic, write_text_atomic
from simready.common.errors import ManifestError, SimreadyError
from simready.common.outdir import output_file, output_folder
from simready.scenario.manifest import load_manifest

BACKEND_CHOICES = ("kinematic-v1", "dynamic-v1")


def _load(manifest_path: str) -> tuple[Any, Any]:
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from simready.world.template import list_template_files, load_template, template_hash

    manifest = load_manifest(manifest_path)
    files = list_template_files(paths.TEMPLATES_DIR)
    if manifest.template_id not in files:
        raise ManifestError(manifest_path, "template_id", f"no template {manifest.template_id!r} in {paths.TEMPLATES_DIR}")
    template = load_template(files[manifest.template_id])
    actual = template_hash(template)
    if manifest.template_hash != actual:
        raise ManifestError(manifest_path, "template_hash",
                            f"{manifest.template_hash} does not match {files[manifest.template_id].name} ({actual})")
    return manifest, template


def _run(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from simready.sim.evaluation.evaluate import evaluate_trace
    from simready.sim.run import run_simulation
    from simready.sim.storage.trace import write_trace

    out = Path(args.out)
    with output_file(out) as staged:
        manifest, template = _load(args.manifest)
        result = run_simulation(manifest, template, backend=args.backend, progress=not args.quiet)
        write_trace(result.trace, staged)
    verdict = evaluate_trace(result.trace)
    m = result.trace.metrics
    ttc = m["min_ttc"]
    print(f"{out}  {args.backend}  {m['ticks_simulated']} ticks  verdict {verdict.verdict}")
    print(f"  min TTC {ttc['value']} s at t={ttc['t']} {ttc['pair']}; collisions {len(m['collisions'])}")
    for issue in result.issues:
        print(f"  issue: {issue}")
    return 0 if verdict.accepted else 2


def _verify_recorded(path: Path) -> None:
    """A trace inside a sample folder must be the one recorded for it (the base trace in ``verdict.json``, a branch's
    in ``branches/outcomes.json``): a changed byte is an ``IntegrityError``, never a silently inspected trace."""
    from simready.artifacts.records import Outcomes  # --help stays light: records (~90 ms)
    from simready.sim.batch import verify_branch_traces, verify_trace  # --help stays light: pybullet, matplotlib

    base = SampleDir(path.parent)
    if path.name == base.trace.name and base.verdict.is_file():
        verify_trace(base)
        return
    sample = SampleDir(path.parent.parent.parent)
    if path.parent.parent == sample.branches_dir and sample.outcomes.is_file():
        verify_branch_traces(sample, Outcomes.read(sample.outcomes))


def _inspect(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from simready.sim.evaluation.evaluate import evaluate_trace
    from simready.sim.storage.trace import read_trace

    _verify_recorded(Path(args.trace))
    trace = read_trace(args.trace)
    verdict = evaluate_trace(trace)
    if args.json:
        header = {k: v for k, v in trace.header.items() if k != "config"}
        print(json.dumps({"header": header, "events": trace.events, "metrics": trace.metrics,
                          "verdict": {"verdict": verdict.verdict, "findings": verdict.findings}}, indent=2, sort_keys=True))
        return 0
    h = trace.header
    print(f"trace     {args.trace}")
    for key in ("backend", "engine_version", "sample_id", "template_id", "template_hash", "input_hash", "config_hash",
                "seed", "dt", "substep_s", "clip_s", "warmup_s", "metric_subject"):
        print(f"  {key:<15} {h.get(key)}")
    print(f"  {'actors':<15} {', '.join(h['actor_ids'])}")
    if h.get("branch"):
        print(f"  {'branch':<15} {json.dumps(h['branch'], sort_keys=True)}")
    if h.get("termination"):
        print(f"  {'termination':<15} {h['termination']}")
    print(f"events    {len(trace.events)}")
    for ev in trace.events:
        rest = {k: v for k, v in ev.items() if k not in ("tick", "t", "type")}
        print(f"  t={ev['t']:>8.3f}  {ev['type']:<20} {json.dumps(rest, sort_keys=True)}")
    print("metrics")
    for key, value in trace.metrics.items():
        print(f"  {key:<20} {json.dumps(value, sort_keys=True)}")
    print(f"verdict   {verdict.verdict}")
    for f in verdict.findings:
        mark = "ok  " if f["passed"] else ("FAIL" if f["severity"] == "error" else "note")
        print(f"  {mark} {f['check']:<24} {f['detail']}")
    return 0


def _parse_repeats(text: str | None) -> int:
    if not text:
        return 0
    kind, _, count = text.partition(":")
    if kind != "independent" or not count.isdigit():
        raise SimreadyError("--repeats", "", f"expected independent:N, got {text!r}")
    return int(count)


def _branch(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from simready.sim.branch import run_branches
    from simready.sim.storage.trace import write_trace

    out = Path(args.out)
    with output_folder(out) as tmp:
        manifest, template = _load(args.manifest)
        actions = tuple(a.strip() for a in args.actions.split(",") if a.strip()) if args.actions else None
        result = run_branches(manifest, template, at_s=args.at, actions=actions,
                              independent=_parse_repeats(args.repeats), backend=args.backend,
                              progress=not args.quiet)
        ckpt_name = result.checkpoint.write(tmp / "checkpoint.ckpt").name
        rows = []
        for b in result.branches:
            path = write_trace(b.trace, tmp / f"{b.label}.parquet")
            rows.append({**next(r for r in result.table if r["label"] == b.label), "trace": path.name})
        doc = {"checkpoint": {"id": result.checkpoint.id, "file": ckpt_name, "tick": result.checkpoint.tick},
               "decision_t_s": result.decision_t_s, "decision_source": result.decision_source, "branches": rows}
        write_json_atomic(tmp / "branches.json", doc)
        columns = list(rows[0]) if rows else []
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for r in rows:
            writer.writerow({k: ("" if v is None else v) for k, v in r.items()})
        write_text_atomic(tmp / "branches.csv", buf.getvalue())
    print(f"checkpoint {result.checkpoint.id} at t={result.decision_t_s} s ({result.decision_source}) "
          f"-> {out / ckpt_name}")
    for r in rows:
        print(f"  {r['label']:<28} collision={r['collision']!s:<5} min_ttc={r['min_ttc_s']} "
              f"stop={r['stopping_distance_m']} -> {r['trace']}")
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``simready sim ...`` to the top-level parser."""
    sim = subparsers.add_parser("sim", help="simulate rollouts, inspect traces, branch matched actions")
    sub = sim.add_subparsers(dest="action", required=True)

    run = sub.add_parser("run", help="roll out a manifest and write its trace (Parquet)")
    run.add_argument("manifest", help="scenario manifest JSON")
    run.add_argument("--backend", choices=BACKEND_CHOICES, default="dynamic-v1")
    run.add_argument("--out", required=True, help="trace file to write (.parquet; must be new)")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.set_defaults(handler=_run)

    inspect = sub.add_parser("inspect", help="print a trace's header, events, metrics and verdict")
    inspect.add_argument("trace", help="trace file (.parquet)")
    inspect.add_argument("--json", action="store_true", help="machine-readable output")
    inspect.set_defaults(handler=_inspect)

    branch = sub.add_parser("branch", help="checkpoint at a decision time and roll out matched action branches")
    branch.add_argument("manifest", help="scenario manifest JSON")
    branch.add_argument("--at", type=float, default=None, help="decision time (s); default 1 s before the reveal")
    branch.add_argument("--actions", default=None, help="comma-separated actions (brake, coast, maintain); default brake,coast")
    branch.add_argument("--repeats", default=None, help="independent:N — N independent-disturbance repeats per action")
    branch.add_argument("--backend", choices=BACKEND_CHOICES, default="dynamic-v1")
    branch.add_argument("--out", required=True, help="output folder (must be new or empty)")
    branch.add_argument("--quiet", action="store_true", help="no progress bar")
    branch.set_defaults(handler=_branch)


__all__ = ["register"]
