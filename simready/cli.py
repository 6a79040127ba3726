"""The ``simready`` command line.

Each stage registers its subcommands here. User errors (``SimreadyError``)
print as one line on stderr and exit 1; Ctrl-C prints one line and exits 130; heavy imports happen inside the
handlers so ``simready --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

from simready import paths
from simready.errors import SimreadyError
from simready.maps import cli as maps_cli

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


def _catalog_import(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from simready.catalog.add import ImportRequest, import_asset, summary_lines
    from simready.catalog.importers.assemble import ImportOptions

    options = ImportOptions(units=args.units, up=args.up, forward=args.forward, collider=args.collider,
                            threshold=args.threshold)
    request = ImportRequest(source=Path(args.source), asset_id=args.id, semantic_class=args.semantic_class,
                            options=options, mass_kg=args.mass_kg, license=args.license, split_key=args.split_key)
    result = import_asset(request, Path(args.out) if args.out else paths.CATALOG_DIR, args.allow_uncertified)
    print("\n".join(summary_lines(result)))
    return 0 if result.certification.passed else 1


def _add_catalog_import(catalog: argparse._SubParsersAction) -> None:
    from simready.catalog.importers.conventions import FORWARD_AXES, UNITS_M, UP_AXES

    imp = catalog.add_parser(
        "import", help="import a glTF/GLB, OBJ, COLLADA, URDF or USD file as a certified catalog entry",
        description="Conventions the file declares (glTF: metres, y up; COLLADA <unit>/<up_axis>; USD metersPerUnit/"
                    "upAxis; URDF: metres, z up) are applied; a flag that contradicts them is refused. Writes "
                    "DIR/contracts, DIR/sources and DIR/generated only when the entry is certified.")
    imp.add_argument("source", help="source file (.glb .gltf .obj .dae .stl .urdf .usd .usda .usdc)")
    imp.add_argument("--id", required=True, help="asset:<family>/<variant>")
    imp.add_argument("--class", dest="semantic_class", required=True, help="ontology class (data/ontology.yaml)")
    imp.add_argument("--units", choices=sorted(UNITS_M), help="source units, when the file does not declare them")
    imp.add_argument("--up", choices=UP_AXES, help="source up axis (default: the file's, else z)")
    imp.add_argument("--forward", choices=FORWARD_AXES,
                     help="axis the front faces after the up conversion (default: the file's, else x)")
    imp.add_argument("--mass-kg", type=float, help="mass (required for a non-static class unless the file has one)")
    imp.add_argument("--license", help="SPDX license of the source (must be in the ontology's licenses_allowed)")
    imp.add_argument("--split-key", help="split lineage key (default family:<family>)")
    imp.add_argument("--collider", choices=("auto", "source", "decompose"), default="auto",
                     help="the source's collision geometry, or a convex decomposition (auto: source if it has one)")
    imp.add_argument("--threshold", type=float, default=0.05, help="CoACD concavity threshold (default 0.05)")
    imp.add_argument("--allow-uncertified", action="store_true", help="write the entry even if certification fails")
    imp.add_argument("--out", default=None, help="catalog folder (default: data/catalog)")
    imp.set_defaults(handler=_catalog_import)


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


STAGE_CLI_MODULES = ("simready.scenario.cli", "simready.sim.cli", "simready.measurement.cli", "simready.validity.cli",
                     "simready.export.cli")


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
    # Dagster's beta and preview warnings are about our definitions, not news to the reader of a status.
    warnings.simplefilter("ignore")
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from simready.definitions import defs
    from simready.main_job import _instance
    from simready.status import print_status

    return print_status(defs, _instance(), everything=args.all)


def _deploy_check(args: argparse.Namespace) -> int:
    # Imported when the command runs: the production checks need the Dagster layer and the server clients.
    from simready.resources import check_production, deployment_name

    name = deployment_name()
    if name == "production":
        check_production()
        print(f"production: Postgres, the Celery broker and s3://{os.environ['SIMREADY_S3_BUCKET']} answer")
    else:
        from simready.store import LocalStore

        print(f"local: artifacts in {LocalStore.from_environment().root}; Dagster instance in DAGSTER_HOME")
    return 0


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    """The subcommand group of a command's parser (argparse keeps it among the parser's actions)."""
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="simready", description="simready: simulation-ready scenes and scenarios.")
    sub = parser.add_subparsers(dest="command", required=True)

    catalog = sub.add_parser("catalog", help="certified asset catalog").add_subparsers(dest="action", required=True)
    certify = catalog.add_parser("certify", help="certify catalog entries; exit 1 if any fails")
    certify.add_argument("dir", nargs="?", default=None, help="generated catalog folder (default: data/catalog/generated)")
    certify.set_defaults(handler=_catalog_certify)
    _add_catalog_import(catalog)

    template_parser = sub.add_parser("template", help="world templates")
    template = template_parser.add_subparsers(dest="action", required=True)
    validate = template.add_parser("validate", help="validate template files; print each canonical hash")
    validate.add_argument("files", nargs="+", help="template YAML files")
    validate.set_defaults(handler=_template_validate)

    _register_stage_commands(sub)
    # Map import/export sits above the world and scenario stages, so it joins their command groups from here.
    maps_cli.register(_subcommands(template_parser), _subcommands(sub.choices["scenario"]) if "scenario" in sub.choices else None)

    run = sub.add_parser("run", help="materialize the whole asset graph on the local Dagster instance")
    run.add_argument("--quiet", action="store_true", help="print only the summary")
    run.set_defaults(handler=_run)

    deploy = sub.add_parser("deploy", help="the deployment SIMREADY_DEPLOYMENT selects (docs/deploy.md)")
    check = deploy.add_subparsers(dest="action", required=True).add_parser(
        "check", help="check the deployment's settings and that its servers answer; one line per problem")
    check.set_defaults(handler=_deploy_check)

    status = sub.add_parser("status", help="fresh/stale/missing for every asset partition, with the upstream cause")
    status.add_argument("--all", action="store_true", help="list every partition, the fresh ones too")
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
