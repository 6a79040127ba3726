"""The ``simready`` command line.

Each stage registers its subcommands here. User errors (``SimreadyError``)
print as one line on stderr and exit 1; Ctrl-C prints one line and exits 130; heavy imports happen inside the
handlers so ``simready --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from simready import paths
from simready.errors import SimreadyError

Handler = Callable[[argparse.Namespace], int]


def _catalog_certify(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from simready.catalog.catalog import ensure_catalog
    from simready.catalog.certify import certify_catalog

    directory = Path(args.dir) if args.dir else paths.CATALOG_GENERATED_DIR
    if args.dir is None:
        ensure_catalog()
    report = certify_catalog(directory)
    for row in report.to_table():
        status = "PASS" if row["passed"] else "FAIL"
        print(f"{status}  {row['id']:<40} {row.get('reasons', '')}".rstrip())
    n_pass = sum(1 for e in report.entries if e.passed)
    print(f"{n_pass}/{len(report.entries)} entries certified")
    return 0 if report.all_passed else 1


def _template_validate(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from simready.catalog.catalog import ensure_catalog
    from simready.catalog.certify import certify_catalog
    from simready.world.template_build import validate_template_file

    catalog = ensure_catalog(paths.CATALOG_CONTRACTS_DIR, paths.CATALOG_GENERATED_DIR)
    certified = {e.id for e in certify_catalog(paths.CATALOG_GENERATED_DIR).entries if e.passed}
    for file in args.files:
        result = validate_template_file(Path(file), certified, catalog.contracts())
        if not result.valid:
            print(result.errors[0], file=sys.stderr)
            return 1
        print(f"{result.template_id}  {result.template_hash}  ({file})")
    return 0


def _run(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from simready.main_job import run_main_job
    from simready.status import owner_tags

    return run_main_job(quiet=args.quiet, run_tags=owner_tags())


STAGE_CLI_MODULES = ("simready.scenario.cli", "simready.sim.cli", "simready.measurement.cli", "simready.validity.cli")


def _register_stage_commands(sub: argparse._SubParsersAction) -> None:
    """Each stage package may offer ``cli.register(subparsers)``; modules must import lightly."""
    for name in STAGE_CLI_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and name.startswith(exc.name):
                continue
            raise
        module.register(sub)


def _status(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from simready.definitions import defs
    from simready.main_job import _instance
    from simready.status import print_status

    return print_status(defs, _instance(), only_stale=args.stale)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="simready", description="simready: simulation-ready scenes and scenarios.")
    sub = parser.add_subparsers(dest="command", required=True)

    catalog = sub.add_parser("catalog", help="certified asset catalog").add_subparsers(dest="action", required=True)
    certify = catalog.add_parser("certify", help="certify catalog entries; exit 1 if any fails")
    certify.add_argument("dir", nargs="?", default=None, help="generated catalog folder (default: data/catalog/generated)")
    certify.set_defaults(handler=_catalog_certify)

    template = sub.add_parser("template", help="world templates").add_subparsers(dest="action", required=True)
    validate = template.add_parser("validate", help="validate template files; print each canonical hash")
    validate.add_argument("files", nargs="+", help="template YAML files")
    validate.set_defaults(handler=_template_validate)

    _register_stage_commands(sub)

    run = sub.add_parser("run", help="materialize the whole asset graph on the local Dagster instance")
    run.add_argument("--quiet", action="store_true", help="print only the summary")
    run.set_defaults(handler=_run)

    status = sub.add_parser("status", help="fresh/stale/missing for every asset partition, with the upstream cause")
    status.add_argument("--stale", action="store_true", help="list only partitions that are not fresh")
    status.set_defaults(handler=_status)
    return parser


#: The shell's exit status for a process stopped by SIGINT (128 + 2).
EXIT_INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except SimreadyError as exc:
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"interrupted: simready {args.command} stopped (Ctrl-C); what it had not finished was not written",
              file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
