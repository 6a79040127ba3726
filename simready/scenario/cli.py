"""``simready scenario …``: sample manifests, explain one, list the declared cells.

Module-level imports stay light (``simready --help`` must be fast); the
handlers import the generator when they run. User errors are
:class:`~simready.common.errors.SimreadyError` subclasses that ``simready.cli``
prints as one line with exit status 1. ``sample`` writes its folder by the
rule of :mod:`simready.common.outdir`: checked and locked before the work, built
under a temporary sibling and moved into place only when complete, so an
error leaves nothing behind.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from simready.artifacts import layout
from simready.common.outdir import output_folder
from simready.scenario import traffic_spec
from simready.scenario.manifest import manifest_bytes
from simready.scenario.traffic_spec import MAX_VEHICLES_PER_LANE_KM, TrafficSpec


def _positive_or_zero(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n} is negative")
    return n


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    scenario = subparsers.add_parser("scenario", help="scenario programs: sample manifests, explain them")
    actions = scenario.add_subparsers(dest="action", required=True)

    sample = actions.add_parser("sample", help="sample accepted manifests of an intent on a template")
    sample.add_argument("--template", required=True, help="template id (data/templates/<id>.yaml) or a YAML path")
    sample.add_argument("--intent", required=True, help="intent id, e.g. pedestrian_emerges_behind_van")
    sample.add_argument("--cell", default=None, help="cell spec: dim=value|dim=lo..hi (a subset of the declared dims)")
    sample.add_argument("--n", required=True, type=_positive_or_zero, help="accepted manifests wanted")
    sample.add_argument("--out", required=True, help="output folder (must be new or empty)")
    sample.add_argument("--root", default=None, help="root id of the random streams (default: the generator's)")
    sample.add_argument("--vehicles-per-lane-km", type=_density, default=0.0, metavar="N",
                        help="background vehicles per km of driving lane (SPEC §20; 0 to 120, default 0: none); the "
                             "pipeline's ladder also rolls each sample out to reject background crashes, this one does not")
    sample.add_argument("--pedestrians-per-sidewalk-100m", type=_density_of("pedestrians"), default=0.0,
                        metavar="N", help="background pedestrians per 100 m of sidewalk (SPEC §20; 0 to 60, default 0: "
                                          "none)")
    sample.add_argument("--cyclists-per-km", type=_density_of("cyclists"), default=0.0, metavar="N",
                        help="background cyclists per km of kerbside lane (SPEC §20; 0 to 150, default 0: none)")
    sample.add_argument("--baseline", action="store_true",
                        help="run the independent-sampling baseline instead, for N proposals")
    sample.add_argument("--quiet", action="store_true", help="no progress bar")
    _programs_option(sample)
    sample.set_defaults(handler=_sample)

    explain = actions.add_parser("explain", help="print a manifest's causal story")
    explain.add_argument("manifest", help="manifest JSON file")
    explain.set_defaults(handler=_explain)

    cells = actions.add_parser("cells", help="list an intent's declared coverage cells")
    cells.add_argument("--intent", required=True)
    cells.add_argument("--cell", default=None, help="only cells matching this spec")
    _programs_option(cells)
    cells.set_defaults(handler=_cells)

    new = actions.add_parser("new-intent", help="write a working, commented program file to start a new intent from")
    new.add_argument("name", help="the new intent id ([a-z][a-z0-9_]*)")
    new.add_argument("--out", required=True, help="the program file to write (.py; must not exist)")
    new.set_defaults(handler=_new_intent)


def _density(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= MAX_VEHICLES_PER_LANE_KM:
        raise argparse.ArgumentTypeError(f"{value:g} is outside [0, {MAX_VEHICLES_PER_LANE_KM:g}] vehicles per lane km")
    return value


#: The walkers' densities: their largest value in simready.scenario.traffic_spec (read when parsed) and unit.
_WALKER_DENSITIES = {"pedestrians": ("MAX_PEDESTRIANS_PER_SIDEWALK_100M", "pedestrians per 100 m of sidewalk"),
                     "cyclists": ("MAX_CYCLISTS_PER_KM", "cyclists per km")}


def _density_of(kind: str):  # type: ignore[no-untyped-def]
    """An argparse type: a density of background ``kind`` (pedestrians, cyclists) within the spec's bounds."""

    def parse(text: str) -> float:
        name, unit = _WALKER_DENSITIES[kind]
        top = float(getattr(traffic_spec, name))
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not 0.0 <= value <= top:
            raise argparse.ArgumentTypeError(f"{value:g} is outside [0, {top:g}] {unit}")
        return value

    return parse


def _programs_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--programs", nargs="+", default=[], metavar="FILE.py",
                        help="program files whose intents --intent may name beside the built-ins (SPEC §19)")


def _load_programs(files: list[str]) -> None:
    if files:
        from simready.scenario.programs import load_programs  # --help stays light: shapely

        load_programs(files)


def _sample(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from tqdm import tqdm

    from simready.scenario.baseline import run_baseline  # --help stays light: shapely
    from simready.scenario.batch import rejection_lines  # --help stays light: shapely
    # --help stays light: shapely
    from simready.scenario.generator import DEFAULT_ROOT, generate, prepare, resolve_template

    out = Path(args.out)
    with output_folder(out) as tmp:
        _load_programs(args.programs)
        template = resolve_template(args.template)
        prepare(template, args.intent, None if args.baseline else args.cell)
        root = args.root or DEFAULT_ROOT
        bar = tqdm(total=args.n, unit="manifest" if not args.baseline else "proposal", disable=args.quiet,
                   file=sys.stderr, desc=f"{args.intent} on {template.id}")

        def progress(accepted: int, proposals: int) -> None:
            bar.n = proposals if args.baseline else accepted
            bar.set_postfix(proposals=proposals, accepted=accepted, refresh=False)
            bar.refresh()

        t0 = time.perf_counter()
        try:
            if args.baseline:
                result = run_baseline(template.id, args.intent, args.n, root=root, template=template,
                                      progress=progress)
            else:
                result = generate(template.id, args.intent, args.n, cell=args.cell, root=root, template=template,
                                  progress=progress, traffic=TrafficSpec(vehicles_per_lane_km=args.vehicles_per_lane_km,
                                                      pedestrians_per_sidewalk_100m=args.pedestrians_per_sidewalk_100m,
                                                      cyclists_per_km=args.cyclists_per_km))
        finally:
            bar.close()
        elapsed = time.perf_counter() - t0
        for m in result.manifests:
            (tmp / f"{m.sample_id}.json").write_bytes(manifest_bytes(m))
        (tmp / layout.REJECTIONS).write_text(rejection_lines(result.rejections), encoding="utf-8")
        (tmp / layout.COVERAGE).write_text(json.dumps(result.coverage.as_dict(), indent=2, sort_keys=True) + "\n",
                                           encoding="utf-8")
    c = result.coverage
    rate = c.accepted / elapsed if elapsed > 0 else 0.0
    print(f"{c.accepted} accepted of {c.proposals} proposals (yield {100 * c.accepted / max(c.proposals, 1):.1f} %) "
          f"in {elapsed:.2f} s ({rate:.0f} manifests/s) -> {out}")
    infeasible = c.infeasible()
    if infeasible:
        print(f"{len(infeasible)} cell(s) infeasible; first: {infeasible[0].cell}: "
              f"{'; '.join(infeasible[0].dominant_reasons())}")
    if not args.baseline and c.accepted < args.n:
        print(f"note: every targeted cell closed before {args.n} manifests were accepted")
    return 0


def _explain(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from simready.scenario.explain import explain

    print(explain(args.manifest))
    return 0


def _cells(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that ``simready --help`` stays fast.
    from simready.scenario.programs import coverage_of, program

    _load_programs(args.programs)
    program(args.intent)
    spec = coverage_of(args.intent)
    cells = spec.cells if args.cell is None else spec.select(args.cell)
    for c in cells:
        print(f"{c.target:3d}  {c.id}")
    print(f"{len(cells)} cell(s) of {len(spec.cells)} declared in {spec.source}")
    return 0


def _new_intent(args: argparse.Namespace) -> int:
    from simready.scenario.scaffold import write_scaffold  # --help stays light: shapely

    path = write_scaffold(args.name, Path(args.out))
    print(f"wrote {path}: intent {args.name}; try: simready scenario sample --programs {path} --intent {args.name} "
          f"--template two_lane_arterial --n 4 --out /tmp/{args.name}")
    return 0
