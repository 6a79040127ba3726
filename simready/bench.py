"""``make bench``: print the performance figures each issue names.

Figures are measured, never asserted: the machine is shared and noisy, so
read them as orders of magnitude and compare ratios printed side by side.
Each section is a function registered in ``SECTIONS``; a section whose
dependencies are missing is reported, not silently skipped.
"""

from __future__ import annotations

import importlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path


def timed(fn: Callable[[], object], repeats: int = 5) -> tuple[float, list[float]]:
    """Median wall time in seconds over ``repeats`` calls, and all samples."""
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples), samples


def bench_catalog() -> None:
    from simready.catalog.certify import certify_catalog
    from simready.catalog.generate import generate_catalog

    with tempfile.TemporaryDirectory() as tmp:
        t_gen, _ = timed(lambda: generate_catalog(out_dir=Path(tmp) / "gen"), repeats=1)
        t_cert, _ = timed(lambda: certify_catalog(Path(tmp) / "gen"), repeats=3)
        n = len(list((Path(tmp) / "gen").glob("*/*/entry.json")))
    print(f"catalog      generate {n} entries: {t_gen * 1e3:8.1f} ms   certify all: {t_cert * 1e3:8.1f} ms")


def bench_templates() -> None:
    from simready.world.template import list_template_files, load_template, template_hash

    files = list_template_files()
    t, _ = timed(lambda: [template_hash(load_template(p)) for p in files.values()], repeats=5)
    print(f"templates    parse+validate+hash {len(files)} templates: {t * 1e3:8.1f} ms")


SECTIONS: dict[str, str] = {
    "catalog": "simready.bench:bench_catalog",
    "templates": "simready.bench:bench_templates",
    "scenario": "simready.bench_scenario:run",
    "sim": "simready.bench_sim:run",
    "sensors": "simready.bench_sensors:run",
    "observe": "simready.bench_observe:run",
    "gate": "simready.bench_gate:run",
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
