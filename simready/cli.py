"""The ``simready`` command line.

Each stage registers its subcommands here. User errors (``SimreadyError``)
print as one line on stderr and exit 1; Ctrl-C prints one line and exits 130; heavy imports happen inside the
handlers so ``simready --help`` stays fast.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from simready.catalog.importers.conventions import FORWARD_AXES, UNITS_M, UP_AXES
from simready.common import paths
from simready.common.errors import SimreadyError
from simready.maps import cli as maps_cli
from simready.store import LocalStore
from simready.store.deployment import deployment_name

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
                            threshold=args.threshold, repair=args.repair)
    request = ImportRequest(source=Path(args.source), asset_id=args.id, semantic_class=args.semantic_class,
                            options=options, mass_kg=args.mass_kg, license=args.license, split_key=args.split_key)
    result = import_asset(request, Path(args.out) if args.out else paths.CATALOG_DIR, args.allow_uncertified)
    print("\n".join(summary_lines(result)))
    return 0 if result.certification.passed else 1


REPAIR_HELP = ("repair known quirks of third-party files, each recorded in entry.json's import.repairs: commas in "
               "vectors, unexpanded xacro defaults, elements without geometry (kept as frames), source inertias the "
               "geometry contradicts (and --mass-kg overriding the file's mass), missing textures (base colour), "
               "open or non-manifold meshes (measured on a watertight solid), a collider outside tolerance "
               "(decomposed again, tighter)")


def _add_catalog_import(catalog: argparse._SubParsersAction) -> None:
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
    imp.add_argument("--repair", action="store_true", help=REPAIR_HELP)
    imp.add_argument("--out", default=None, help="catalog folder (default: data/catalog)")
    imp.set_defaults(handler=_catalog_import)


def _template_validate(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from simready.catalog.catalog import ensure_catalog
    from simready.catalog.certified import certified_ids
    from simready.world.template_build import validate_template_file

    catalog = ensure_catalog(paths.CATALOG_CONTRACTS_DIR, paths.CATALOG_GENERATED_DIR)
    certified = certified_ids(catalog)
    for file in args.files:
        result = validate_template_file(Path(file), certified, catalog.contracts())
        if not result.valid:
            print(result.errors[0], file=sys.stderr)
            return 1
        print(f"{result.template_id}  {result.template_hash}  ({file})")
    return 0


def _template_import_scene(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from simready.catalog.scene import SceneImportRequest, import_scene

    base = Path(args.template) if args.template.endswith(".yaml") else paths.TEMPLATES_DIR / f"{args.template}.yaml"
    scene = Path(args.scene)
    template_id = args.id or f"{base.stem}__{scene.stem}"
    request = SceneImportRequest(
        scene=scene, base_template=base, template_id=template_id, family=args.family or scene.stem,
        default_class=args.semantic_class, classes=dict(args.class_of or []), density_kg_m3=args.density,
        masses_kg=dict(args.mass_of or []), exclude=tuple(args.exclude or ()), units=args.units, up=args.up,
        root=args.root, placement=args.at, collider=args.collider, threshold=args.threshold, license=args.license,
        split_key=args.split_key, repair=args.repair)
    out = Path(args.out) if args.out else paths.TEMPLATES_DIR / f"{template_id}.yaml"
    result = import_scene(request, Path(args.catalog) if args.catalog else paths.CATALOG_DIR, out)
    print("\n".join(result.lines()))
    return 0


def _scene_placement(text: str) -> tuple[float, float, float, float]:
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        values = ()
    if len(values) != 4 or not all(abs(v) < 1e5 for v in values):
        raise argparse.ArgumentTypeError(f"{text!r} is not x,y,z,yaw_deg (four finite numbers)")
    return values  # type: ignore[return-value]


def _scene_class(text: str) -> tuple[str, str]:
    name, sep, cls = text.partition("=")
    if not sep or not name or not cls:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=CLASS")
    return name, cls


def _scene_mass(text: str) -> tuple[str, float]:
    name, sep, kg = text.partition("=")
    try:
        return name, float(kg) if sep and name else float("nan")
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=KG") from None


def _add_template_import_scene(template: argparse._SubParsersAction) -> None:
    imp = template.add_parser(
        "import-scene", help="turn a multi-object art scene (glTF, OBJ, COLLADA, USD) into static instances of a template",
        description="Each top-level node (glTF root node, OBJ group, child of a USD stage's root prim) becomes one "
                    "certified catalog entry asset:FAMILY/<node name> and one static instance <id>/instance:<node "
                    "name> at the node's footprint centre; the new template is --template with those instances. "
                    "Node order changes nothing. Nothing is written unless every entry certifies and the template "
                    "validates.")
    imp.add_argument("scene", help="scene file (.glb .gltf .obj .dae .usd .usda .usdc)")
    imp.add_argument("--template", required=True, help="base template: an id in data/templates or a .yaml file")
    imp.add_argument("--id", default=None, help="the new template's id (default: <template>__<scene file stem>)")
    imp.add_argument("--family", default=None, help="asset family of the scene's objects (default: the scene file stem)")
    imp.add_argument("--class", dest="semantic_class", default=None, help="static ontology class of every object")
    imp.add_argument("--class-of", action="append", type=_scene_class, metavar="NAME=CLASS",
                     help="class of one object (repeatable; overrides --class)")
    imp.add_argument("--density", type=float, default=None, metavar="KG_M3",
                     help="mass of every object = density × its solid volume (default: 0 kg, which only classes "
                          "without a mass range accept)")
    imp.add_argument("--mass-of", action="append", type=_scene_mass, metavar="NAME=KG",
                     help="mass of one object (repeatable; overrides --density)")
    imp.add_argument("--units", choices=sorted(UNITS_M), help="scene units, when the file does not declare them")
    imp.add_argument("--up", choices=UP_AXES, help="scene up axis (default: the file's, else z)")
    imp.add_argument("--root", default=None, help="node whose children are the objects (default: the top level)")
    imp.add_argument("--exclude", action="append", metavar="NAME",
                     help="leave this object out (repeatable): a ground plane, a sky dome")
    imp.add_argument("--at", type=_scene_placement, default=(0.0, 0.0, 0.0, 0.0), metavar="X,Y,Z,YAW_DEG",
                     help="where the scene's origin lies in the template's world frame (default 0,0,0,0)")
    imp.add_argument("--collider", choices=("auto", "source", "decompose"), default="auto",
                     help="collision geometry (auto: a convex decomposition per object)")
    imp.add_argument("--threshold", type=float, default=0.05, help="CoACD concavity threshold (default 0.05)")
    imp.add_argument("--license", help="SPDX license of the scene (must be in the ontology's licenses_allowed)")
    imp.add_argument("--split-key", help="split lineage key (default family:<family>)")
    imp.add_argument("--catalog", default=None, help="catalog folder (default: data/catalog)")
    imp.add_argument("--repair", action="store_true", help=REPAIR_HELP)
    imp.add_argument("--out", default=None, help="template file to write (default: data/templates/ID.yaml; must be new)")
    imp.set_defaults(handler=_template_import_scene)


def _run(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from simready.runner.suite_check import check_suite

    check_suite()  # the suite against its templates, catalog and rigs: one line now, before anything is written
    # A bad DAGSTER_HOME or SIMREADY_ARTIFACTS is one line here, before Dagster loads (not a failed step per run).
    paths.dagster_home()
    paths.artifacts_dir()
    import dagster as dg  # --help stays light: dagster

    # Dagster's beta and preview warnings are about features our definitions chose, not news to the user.
    warnings.simplefilter("ignore", dg.BetaWarning)
    warnings.simplefilter("ignore", dg.PreviewWarning)
    from simready.runner.main_job import run_main_job  # --help stays light: dagster, pyarrow
    from simready.runner.status import owner_tags  # --help stays light: dagster

    return run_main_job(quiet=args.quiet, run_tags=owner_tags())


STAGE_CLI_MODULES = ("simready.scenario.cli", "simready.sim.cli", "simready.measurement.cli", "simready.validity.cli",
                     "simready.export.cli", "simready.release.cli")


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
    # One line when DAGSTER_HOME or SIMREADY_ARTIFACTS names no usable folder, before Dagster loads.
    paths.dagster_home()
    paths.artifacts_dir()
    # Dagster's beta and preview warnings are about our definitions, not news to the reader of a status.
    warnings.simplefilter("ignore")
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from simready.runner.suite_check import check_suite

    check_suite()  # a suite whose intents or rig overrides cannot work is one line, not a status that says fine
    from simready.assets.inputs import record_observations  # --help stays light: dagster, shapely
    from simready.definitions import defs  # --help stays light: dagster, pyarrow
    from simready.runner.main_job import _instance  # --help stays light: dagster, pyarrow
    from simready.runner.status import print_status  # --help stays light: dagster

    instance = _instance()
    # The input files' observations first (no run, milliseconds), so an edit shows stale now, naming the file,
    # rather than when the sensor next looks.
    observed = record_observations(instance, defs.resources["source"])
    return print_status(defs, instance, everything=args.all, observed=observed)


def _deploy_check(args: argparse.Namespace) -> int:
    # Imported when the command runs: the production checks need the Dagster layer and the server clients.
    from simready.resources import check_production

    name = deployment_name()
    if name == "production":
        check_production()
        print(f"production: Postgres, the Celery broker and s3://{os.environ['SIMREADY_S3_BUCKET']} answer")
    else:
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
    _add_template_import_scene(template)

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

    status = sub.add_parser(
        "status", help="record the input files' observations, then fresh/stale/missing for every asset partition, "
                       "with the upstream cause",
        description="First records the input files' observations in the instance (templates, the maps they were "
                    "imported from, catalog contracts, the suite: their content hashes, as the source-file sensor "
                    "does; no run), naming each file that changed since the last one. Then a header naming the "
                    "Dagster instance (DAGSTER_HOME), the partitions that are not fresh with the upstream cause, a "
                    "summary line, and the runs a killed process left unfinished. Exit status 0 whatever the "
                    "partitions' status (the report itself is the result).")
    status.add_argument("--all", action="store_true", help="list every partition, the fresh ones too")
    status.set_defaults(handler=_status)
    return parser


#: The shell's exit status for a process stopped by SIGINT (128 + 2).
EXIT_INTERRUPTED = 130


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread like Ctrl-C's ``KeyboardInterrupt`` (and caught as one), so
    that every ``finally`` and ``with`` of a command runs: its pid-named temporaries and its locks go, as on
    Ctrl-C. (Python's default for these signals ends the process at once, and leaves them behind.)"""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _terminate(signum: int, frame: object) -> None:
    raise Terminated(signum)


@contextlib.contextmanager
def _stop_signals_unwind() -> Iterator[None]:
    """SIGTERM and SIGHUP raise :class:`Terminated` while a command runs (main thread only; a handler another
    program installed, or an ignored signal, is left as it is), then the previous handlers are put back."""
    saved = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) is signal.SIG_DFL:
                saved[sig] = signal.signal(sig, _terminate)
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def _import_pybullet_quietly() -> None:
    """Import PyBullet with the process's stderr closed: its C extension prints "pybullet build time: …" there.

    C's stdio buffers are flushed before the stream is put back, whatever it buffered.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
            try:
                import pybullet  # noqa: F401  (here: its build-time banner goes to /dev/null)
            finally:
                ctypes.CDLL(None).fflush(None)
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler: Handler = args.handler
    if args.command != "status" and getattr(handler, "reaches_simulator", True) and "pybullet" not in sys.modules:
        # Most commands reach the simulator; its banner is not news to the reader. `status` never does (and stays
        # fast), nor does a handler marked ``reaches_simulator = False`` (the OpenSCENARIO import and export).
        _import_pybullet_quietly()
    try:
        with warnings.catch_warnings(), _stop_signals_unwind():
            if not sys.warnoptions:
                # A library's warning (numpy's overflow, trimesh's, Dagster's) is not news to the user of a command:
                # what matters is refused in one line or reported. `python -W default -m simready.cli` shows them.
                warnings.simplefilter("ignore")
            return handler(args)
    except SimreadyError as exc:
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return 1
    except Terminated as exc:
        name = signal.Signals(exc.signum).name
        print(f"terminated: simready {args.command} stopped ({name}); what it had not finished was not written",
              file=sys.stderr)
        return 128 + exc.signum
    except KeyboardInterrupt:
        print(f"interrupted: simready {args.command} stopped (Ctrl-C); what it had not finished was not written",
              file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
