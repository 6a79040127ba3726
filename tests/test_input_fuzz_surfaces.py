"""The standing fuzz test (tests/test_input_fuzz.py) on the surfaces added since it (issue 27): ``catalog import``
of each format, ``export mcap|nuscenes`` of a sample folder, ``release list|show|verify|tag`` (in
tests/test_release_bad_input.py, on a hand-made release).

Each example mutates a good input and asserts what a user may rely on: exit 0 or 1 (2 for a usage error), at most
one line on stderr and no traceback, nothing written outside the destination. Memory is bounded while the module
runs: the process's address space is capped (soft limit) at its size on entry plus :data:`HEADROOM` (a runaway
allocation is a MemoryError, which fails the example, instead of the kernel's OOM killer), and the peak resident
size may grow by at most :data:`RSS_GROWTH` over the module. Time: a deadline per example.
"""

from __future__ import annotations

import resource
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings

from simready.measurement.options import ObserveOptions
from simready.testing.observed import observed_street_sample
from tests.fixtures.meshes import cube_dae, cube_gltf, cube_obj, cube_stl, cube_usda
from tests.fixtures.fuzz import FEW, mutate, mutations, run_cli, workspace

#: Address space a module's examples may add to the process (soft RLIMIT_AS) and resident memory they may add.
HEADROOM = 3 << 30
RSS_GROWTH = 500 << 20


def _vm_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


@pytest.fixture(scope="module", autouse=True)
def memory_bound() -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = _vm_bytes() + HEADROOM
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    assert peak <= max(peak_before, 1 << 30) + RSS_GROWTH, f"peak resident {peak >> 20} MB"


def _good(fmt: str) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        build = {"obj": cube_obj, "gltf": cube_gltf, "usda": cube_usda, "stl": cube_stl, "dae": cube_dae}[fmt]
        return build(Path(tmp) / f"box.{fmt}").read_bytes()


URDF = (b'<robot name="box"><link name="base"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" '
        b'ixy="0" ixz="0" iyz="0"/></inertial><visual><geometry><mesh filename="box.obj"/></geometry></visual>'
        b'<collision><geometry><box size="1 1 1"/></geometry></collision></link></robot>')


@pytest.mark.parametrize("fmt", ["obj", "gltf", "usda", "stl", "dae", "urdf"])
def test_cli_catalog_import(fmt: str) -> None:
    good = URDF if fmt == "urdf" else _good(fmt)
    extra = {"box.obj": _good("obj")} if fmt == "urdf" else {}
    units = ["--units", "meter"] if fmt in ("obj", "stl") else []

    @settings(FEW, deadline=30000)  # an intact source is decomposed and certified (seconds)
    @given(ops=mutations)
    def run(ops: list[tuple[str, float, bytes]]) -> None:
        with workspace({f"box.{fmt}": mutate(good, ops), **extra}) as root:
            rc, _ = run_cli(["catalog", "import", str(root / f"box.{fmt}"), "--id", "asset:box/fuzz", "--class",
                             "road_object", "--license", "Zlib", "--out", str(root / "out"), *units,
                             *([] if fmt == "urdf" else ["--mass-kg", "1"])])
            assert rc in (0, 1)
            if rc == 1:
                assert not (root / "out").exists()

    run()


@pytest.fixture(scope="module")
def observed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    options = ObserveOptions(passes=("rgb", "depth", "lidar", "radar"), video=False, writer_thread=False)
    return observed_street_sample(tmp_path_factory.mktemp("fuzz-export"), 0.24, options,
                                  width_px=48, height_px=32, line_time_s=2e-4, azimuth_steps=90, channels=8).root


@pytest.mark.parametrize("name", ["manifest.json", "observations/results.json", "observations/render.json"])
@pytest.mark.parametrize("fmt", ["mcap", "nuscenes"])
def test_cli_export(observed: Path, name: str, fmt: str) -> None:
    good = (observed / name).read_bytes()

    @settings(FEW, deadline=30000)
    @given(ops=mutations)
    def run(ops: list[tuple[str, float, bytes]]) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            sample = root / observed.name
            shutil.copytree(observed, sample)
            (sample / name).write_bytes(mutate(good, ops))
            before = sorted(p.relative_to(root) for p in root.rglob("*"))
            out = root / ("out.mcap" if fmt == "mcap" else "out")
            rc, _ = run_cli(["export", fmt, str(sample), "--out", str(out)])
            assert rc in (0, 1)
            after = sorted(p.relative_to(root) for p in root.rglob("*") if not p.relative_to(root).parts[0].startswith("out"))
            assert after == before
            if rc == 1:
                assert not out.exists()

    run()
