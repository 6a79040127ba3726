"""``make bench`` (``python -m simready.bench [SECTION ...]``): print the performance figures each issue names.

Each section is a function registered in ``SECTIONS``, imported only when it
runs; a section whose dependencies are missing is reported, not silently skipped.
"""

from __future__ import annotations

import importlib
import sys

SECTIONS: dict[str, str] = {
    "catalog": "simready.bench.world:bench_catalog",
    "templates": "simready.bench.world:bench_templates",
    "maps": "simready.bench.maps:run",
    "import": "simready.bench.catalog_import:run",
    "scenario": "simready.bench.scenario:run",
    "sim": "simready.bench.sim:run",
    "sensors": "simready.bench.sensors:run",
    "observe": "simready.bench.observe:run",
    "gate": "simready.bench.gate:run",
    "export": "simready.bench.export:run",
    "production": "simready.bench.production:run",
    "status": "simready.bench.status:run",
    "review": "simready.bench.review:run",
}


def main(argv: list[str] | None = None) -> int:
    wanted = argv if argv else list(SECTIONS)
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
