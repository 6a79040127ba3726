"""World-stage benchmarks: catalog generation and certification, template parse + validate + hash."""

from __future__ import annotations

import statistics
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
    """Catalog generation and certification: the procedural catalog made and certified in a temporary folder."""
    # section-local: bench.world's timed() is imported by other sections
    from simready.catalog.certify import certify_catalog
    # section-local: bench.world's timed() is imported by other sections
    from simready.catalog.generate import generate_catalog

    with tempfile.TemporaryDirectory() as tmp:
        t_gen, _ = timed(lambda: generate_catalog(out_dir=Path(tmp) / "gen"), repeats=1)
        t_cert, _ = timed(lambda: certify_catalog(Path(tmp) / "gen"), repeats=3)
        n = len(list((Path(tmp) / "gen").glob("*/*/entry.json")))
    print(f"catalog      generate {n} entries: {t_gen * 1e3:8.1f} ms   certify all: {t_cert * 1e3:8.1f} ms")


def bench_templates() -> None:
    """Template parse + validate + hash: every world template of the package, loaded and hashed."""
    # section-local: bench.world's timed() is imported by other sections
    from simready.world.template import list_template_files, load_template, template_hash

    files = list_template_files()
    t, _ = timed(lambda: [template_hash(load_template(p)) for p in files.values()], repeats=5)
    print(f"templates    parse+validate+hash {len(files)} templates: {t * 1e3:8.1f} ms")
