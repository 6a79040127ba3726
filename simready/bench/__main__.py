"""``make bench`` (``python -m simready.bench [SECTION ...]``): print the performance figures each issue names.

Each section is a function registered in ``SECTIONS``, imported only when it
runs; a section whose dependencies are missing is reported, not silently skipped.
"""

from __future__ import annotations

import argparse
import importlib
import sys

SECTIONS: dict[str, str] = {
    "catalog": "simready.bench.world:bench_catalog",
    "templates": "simready.bench.world:bench_templates",
    "maps": "simready.bench.maps:run",
    "xosc": "simready.bench.xosc:run",
    "street": "simready.bench.street:run",
    "import": "simready.bench.catalog_import:run_all",
    "scenario": "simready.bench.scenario:run",
    "routing": "simready.bench.routing:run",
    "sim": "simready.bench.sim:run",
    "sensors": "simready.bench.sensors:run",
    "observe": "simready.bench.observe:run",
    "gate": "simready.bench.gate:run",
    "export": "simready.bench.export:run",
    "production": "simready.bench.production:run",
    "status": "simready.bench.status:run",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m simready.bench",
        description="Print the performance figures each issue names (make bench). Sections run in the order "
                    "given; none given: every section.")
    parser.add_argument("sections", nargs="*", metavar="SECTION", type=_section,
                        help=f"one of: {', '.join(SECTIONS)}")
    return parser


def _section(name: str) -> str:
    if name not in SECTIONS:
        raise argparse.ArgumentTypeError(f"{name!r} is not a section (one of: {', '.join(SECTIONS)})")
    return name


def main(argv: list[str] | None = None) -> int:
    wanted = build_parser().parse_args(argv).sections or list(SECTIONS)
    for name in wanted:
        module_name, func_name = SECTIONS[name].split(":")
        try:
            func = getattr(importlib.import_module(module_name), func_name)
        except (ImportError, AttributeError) as exc:
            print(f"{name:<12} not available: {exc}")
            continue
        func()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
