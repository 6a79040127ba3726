"""Determinism (SPEC §7): bit-identical traces for identical inputs and for reordered declarations; no wall clock, no global RNG."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from simready.sim.run import run_simulation
from tests.fixtures.sim import catalog, crossing, edit, template

SIM_DIR = Path(__file__).resolve().parents[1] / "simready" / "sim"


def _bytes(m, backend: str) -> bytes:  # type: ignore[no-untyped-def]
    return run_simulation(m, template(), backend=backend, catalog=catalog()).trace.to_bytes()


def _reordered(m):  # type: ignore[no-untyped-def]
    def flip(d: dict) -> None:
        d["actors"].reverse()
        d["interactions"].reverse()
        d["occluders"].reverse()

    return edit(m, flip)


def test_kinematic_bit_identical_and_order_invariant() -> None:
    m = crossing(clip_s=5.0)
    first = _bytes(m, "kinematic-v1")
    assert _bytes(m, "kinematic-v1") == first
    reordered = _reordered(m)
    assert [a.id for a in reordered.actors] != [a.id for a in m.actors]
    assert _bytes(reordered, "kinematic-v1") == first


@pytest.mark.slow
def test_dynamic_bit_identical_in_process_and_order_invariant() -> None:
    m = crossing(clip_s=3.0)
    first = _bytes(m, "dynamic-v1")
    assert _bytes(m, "dynamic-v1") == first
    assert _bytes(_reordered(m), "dynamic-v1") == first


_CHILD = """
import hashlib, sys
sys.path.insert(0, {root!r})
from tests.fixtures.sim import catalog, crossing, template
from simready.sim.run import run_simulation
data = run_simulation(crossing(clip_s=2.0), template(), backend="dynamic-v1", catalog=catalog()).trace.to_bytes()
print(hashlib.sha256(data).hexdigest())
"""


@pytest.mark.slow
def test_dynamic_bit_identical_across_processes() -> None:
    root = str(SIM_DIR.parents[1])
    here = hashlib.sha256(_bytes(crossing(clip_s=2.0), "dynamic-v1")).hexdigest()
    out = subprocess.run([sys.executable, "-c", _CHILD.format(root=root)], capture_output=True, text=True, check=True, cwd=root)
    assert out.stdout.strip().splitlines()[-1] == here


# Wall-clock reads and module-level (global-state) random draws are banned in the simulation path.
_FORBIDDEN = [
    (re.compile(r"\btime\.(time|perf_counter|monotonic|process_time|time_ns|perf_counter_ns)\s*\("), "wall clock"),
    (re.compile(r"\bperf_counter\b"), "wall clock"),
    (re.compile(r"\bdatetime\.(now|utcnow|today)\b|\bdate\.today\b"), "wall clock"),
    (re.compile(r"^\s*(import random|from random import)", re.M), "global random"),
    (re.compile(r"(?<![\w.])random\.\w+\s*\("), "global random"),
    (re.compile(r"\bnp\.random\.(?!Generator\b|PCG64\b|SeedSequence\b|default_rng\b)\w+\s*\("), "global numpy random"),
    (re.compile(r"\bnumpy\.random\.(?!Generator\b|PCG64\b|SeedSequence\b)\w+\s*\("), "global numpy random"),
]


def test_simulation_source_has_no_wall_clock_or_global_random() -> None:
    files = sorted(SIM_DIR.rglob("*.py"))
    assert len(files) > 10
    found = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        for pattern, what in _FORBIDDEN:
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path.relative_to(SIM_DIR)}:{line}: {what}: {match.group(0).strip()}")
    assert not found, "\n".join(found)


def test_scan_catches_what_it_bans(tmp_path: Path) -> None:
    bad = "import time\nt0 = time.perf_counter()\nx = np.random.rand(3)\nimport random\nrandom.random()\n"
    hits = {what for pattern, what in _FORBIDDEN if pattern.search(bad)}
    assert hits == {"wall clock", "global random", "global numpy random"}
    assert not any(p.search("rng = np.random.Generator(np.random.PCG64(1)); rng.random()") for p, _ in _FORBIDDEN)
