"""``simready validate``: the validity gate on one sample folder.

Exit status: 0 accepted, 2 rejected (the report is written either way), 1 on
bad input — a missing stage output, an unreadable file — with a one-line reason.
Imports stay inside the handler so ``simready --help`` stays fast.
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from simready.common.atomic import write_json_atomic
from simready.common.outdir import output_file, output_folder

EXIT_REJECTED = 2


def _validate(args: argparse.Namespace) -> int:
    # --help stays light: pybullet, pandas
    from simready.validity.gate import evidence_from_sample_dir, validate_scenario

    out = Path(args.out)
    with contextlib.ExitStack() as outputs:
        staged = outputs.enter_context(output_file(out))
        docs = outputs.enter_context(output_folder(args.docs)) if args.docs else None
        evidence = evidence_from_sample_dir(
            Path(args.sample_dir),
            baseline=args.baseline,
            reference_pool=args.reference,
            require_sensors=not args.trajectory_only,
        )
        report = validate_scenario(evidence)
        write_json_atomic(staged, report.model_dump(mode="json"))
        if docs is not None:
            # --help stays light: pybullet, pandas
            from simready.validity.data_docs import DocsBatch, build_data_docs
            from simready.validity.expectations import trajectory_frame, validity_frame

            build_data_docs([DocsBatch("trajectories", trajectory_frame(evidence.ticks, evidence.actor_classes),
                                       partition=report.sample_id),
                             DocsBatch("validity_reports", validity_frame([report]), partition=report.sample_id)], docs)
    if args.docs:
        print(f"data docs   {Path(args.docs).resolve() / 'index.html'}")
    verdict = "ACCEPTED" if report.accepted else "REJECTED"
    cap = " (capped: low fidelity)" if report.capped else ""
    print(f"{verdict}  {report.sample_id}  validity {report.validity:.2f}  fidelity {report.fidelity:.2f}  "
          f"realism {report.realism:.2f}  weight {report.weight:.2f}{cap}  policy {report.policy_version}")
    for c in report.checks:
        print(f"  {'pass' if c.passed else 'FAIL'}  {c.check:<12} {c.score:.3f}  {c.detail.get('summary', '')}")
    for reason in report.reasons:
        print(f"  - {reason}")
    print(f"report      {out}")
    return 0 if report.accepted else EXIT_REJECTED


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``validate`` to the ``simready`` command line."""
    p = sub.add_parser(
        "validate",
        help="run the counterfactual validity gate on a sample folder; exit 0 accepted, 2 rejected",
        description="Score one sample folder (manifest.json, trace.parquet, observations/) with the five checks "
        "of SPEC §12 and write the validity report as JSON.",
    )
    p.add_argument("sample_dir", metavar="SAMPLE_DIR", help="sample folder written by the scenario, simulation and measurement stages")
    p.add_argument("--out", required=True, help="where to write the report (JSON; must be a new file)")
    p.add_argument("--baseline", default=None, help="source trajectory (trace file or sample folder) the sample was transformed from")
    p.add_argument("--reference", default=None, help="reference pool of distribution features (Parquet), e.g. artifacts/reference/<template>/pool.parquet")
    p.add_argument("--trajectory-only", action="store_true",
                   help="score without observations (the sensor check then scores 0: low-fidelity evidence)")
    p.add_argument("--docs", default=None, metavar="DIR", help="also write GX Data Docs for the sample's trace and report here (a new or empty folder)")
    p.set_defaults(handler=_validate)
