"""``simready template import | export-xodr`` and ``simready scenario export-xosc``.

Module-level imports stay light (``simready --help`` must be fast); handlers
import the readers and writers when they run. Every command writes by the
rule of :mod:`simready.common.outdir`: checked and locked first, built in a
temporary sibling, published only when complete and (for a template)
validated exactly as ``simready template validate`` would, so bad input
leaves nothing behind.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from simready.common import paths
from simready.common.atomic import json_bytes
from simready.common.errors import TemplateError
from simready.maps.errors import MapError
from simready.common.outdir import output_file, output_folder
from simready.maps.template_yaml import template_yaml
from simready.scenario.manifest import manifest_bytes

if TYPE_CHECKING:
    from simready.catalog.contract import CatalogEntry

    _Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]


def register(template: _Subparsers, scenario: _Subparsers | None) -> None:
    """Add the map commands under ``template`` and (when the scenario stage is present) ``scenario``."""
    imp = template.add_parser("import", help="import an ASAM OpenDRIVE map as a world template")
    imp.add_argument("map", help="OpenDRIVE file (.xodr), 1.4-1.8")
    imp.add_argument("--id", required=True, help="template id (also the output file's name)")
    imp.add_argument("--bounds", default=None, type=_bounds, help="xmin,ymin,xmax,ymax: import only lanes wholly inside")
    imp.add_argument("--out", default=None, help="template file to write (default: data/templates/ID.yaml; must be new)")
    imp.add_argument("--intent", default=None,
                     help="choose the ego route: the first candidate route this intent accepts (e.g. cut_in)")
    imp.set_defaults(handler=_template_import)

    exp = template.add_parser("export-xodr", help="write a world template as an ASAM OpenDRIVE map")
    exp.add_argument("template", help="template YAML file")
    exp.add_argument("--out", required=True, help="OpenDRIVE file to write (must be new)")
    exp.set_defaults(handler=_template_export)

    if scenario is not None:
        xosc = scenario.add_parser("export-xosc", help="write a manifest as ASAM OpenSCENARIO 1.x (+ its road network)")
        xosc.add_argument("manifest", help="manifest JSON file")
        xosc.add_argument("--template", default=None, help="template file (default: data/templates/<template_id>.yaml)")
        xosc.add_argument("--out", required=True, help="output folder (must be new or empty)")
        xosc.set_defaults(handler=_scenario_export_xosc)

        imp_x = scenario.add_parser(
            "import-xosc", help="import an ASAM OpenSCENARIO file (or a parameter distribution) as manifest(s)",
            description="Read FILE.xosc with the road network its LogicFile names (or --map) and the catalogs it "
                        "names; write the manifest, the import report and, when the map is not a shipped template, "
                        "the imported template. A ParameterValueDistribution file gives one manifest per set.")
        imp_x.add_argument("file", help="OpenSCENARIO file (.xosc), 1.0-1.3, or a ParameterValueDistribution file")
        imp_x.add_argument("--map", default=None, help="OpenDRIVE file to use instead of the file's LogicFile")
        imp_x.add_argument("--decision", default=None,
                           help="decision checkpoint: an event name or seconds (default: the first event of the "
                                "main maneuver group)")
        imp_x.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                           help="override a declared parameter (repeatable)")
        imp_x.add_argument("--out", default=None, help="output folder (must be new or empty; default xosc_<stem>)")
        imp_x.set_defaults(handler=_scenario_import_xosc)


def _bounds(text: str) -> tuple[float, float, float, float]:
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not four numbers xmin,ymin,xmax,ymax") from None
    if len(values) != 4 or not (values[0] < values[2] and values[1] < values[3]):
        raise argparse.ArgumentTypeError(f"{text!r} is not xmin,ymin,xmax,ymax with xmin < xmax and ymin < ymax")
    return values


def _certified() -> tuple[set[str], dict[str, CatalogEntry]]:
    from simready.catalog.catalog import ensure_catalog  # --help stays light: catalog (~150 ms)
    from simready.catalog.certified import certified_ids  # --help stays light: trimesh, USD

    catalog = ensure_catalog(paths.CATALOG_CONTRACTS_DIR, paths.CATALOG_GENERATED_DIR)
    return certified_ids(catalog), catalog.contracts()


def _template_import(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from simready.maps.sites import fit_intent
    from simready.maps.xodr_import import import_opendrive
    from simready.world.street import derived_street
    from simready.world.template_build import validate_template_file

    out = Path(args.out) if args.out else paths.TEMPLATES_DIR / f"{args.id}.yaml"
    if out.suffix != ".yaml" or out.stem != args.id:
        raise MapError(out, "", f"a template's file is named after its id: write {args.id}.yaml")
    with output_file(out) as staged:
        imported = import_opendrive(args.map, args.id, args.bounds)
        data = imported.data
        site_lines: list[str] = []
        if args.intent is not None:
            data, site_lines = fit_intent(data, args.intent)
        # Road, sidewalks, kerbs, markings, buildings: the map's static world, derived at load (not listed).
        data = derived_street(data)
        staged.write_text(template_yaml(data), encoding="utf-8")
        certified, contracts = _certified()
        result = validate_template_file(staged, certified, contracts)
        if not result.valid:
            raise TemplateError(args.map, "", f"the imported template does not validate: {result.errors[0]}")
    for line in imported.report.lines() + site_lines:
        print(line)
    print(f"{args.id}  {result.template_hash}  ({out})")
    return 0


def _template_export(args: argparse.Namespace) -> int:
    from simready.maps.xodr_export import export_xodr  # --help stays light: shapely, scenariogeneration
    from simready.world.template import load_template  # --help stays light: shapely

    template = load_template(args.template)
    with output_file(args.out) as staged:
        data, report = export_xodr(template)
        staged.write_bytes(data)
    for line in report.lines():
        print(line)
    print(f"wrote {args.out}")
    return 0


def _scenario_export_xosc(args: argparse.Namespace) -> int:
    from simready.maps.xosc_export import export_xosc  # --help stays light: shapely, scenariogeneration

    with output_folder(args.out) as tmp:
        report = export_xosc(Path(args.manifest), Path(args.template) if args.template else None, tmp)
    for line in report.lines():
        print(line)
    print(f"wrote {args.out}", file=sys.stdout)
    return 0


def _scenario_import_xosc(args: argparse.Namespace) -> int:
    # --help stays light: lxml
    from simready.maps.xosc_import import XoscError, import_distribution, import_xosc, is_distribution

    src = Path(args.file)
    overrides = {}
    for item in args.param:
        name, eq, value = item.partition("=")
        if not eq or not name:
            raise XoscError(src, "--param", f"{item!r} is not NAME=VALUE")
        overrides[name] = value
    out = Path(args.out) if args.out else Path(f"xosc_{src.stem}")
    with output_folder(out) as tmp:
        if is_distribution(src):
            if overrides:
                raise XoscError(src, "--param", "a distribution file draws its parameters; --param is for a scenario")
            results = import_distribution(src, args.map, args.decision)
        else:
            results = [import_xosc(src, args.map, args.decision, overrides)]
        written_templates = set()
        for r in results:
            (tmp / f"{r.manifest.sample_id}.json").write_bytes(manifest_bytes(r.manifest))
            if r.template_data is not None and r.template.id not in written_templates:
                (tmp / f"{r.template.id}.yaml").write_text(template_yaml(r.template_data), encoding="utf-8")
                written_templates.add(r.template.id)
        report = {"source": src.name, "manifests": [
            {"sample_id": r.manifest.sample_id, "parameters": r.parameters, **r.report.to_json()} for r in results]}
        (tmp / "import_report.json").write_bytes(json_bytes(report))
    for line in results[0].report.lines():
        print(line)
    for r in results:
        print(f"{r.manifest.sample_id}  {r.manifest.template_id}  {len(r.manifest.actors)} actors  "
              f"{len(r.manifest.interactions)} interactions")
    print(f"wrote {out}")
    return 0


# Neither reaches the simulator: `simready.cli` does not import PyBullet for them.
_scenario_import_xosc.reaches_simulator = False  # type: ignore[attr-defined]
_scenario_export_xosc.reaches_simulator = False  # type: ignore[attr-defined]
