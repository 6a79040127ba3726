"""Fixtures every test shares, and how ``pytest -n 2 --dist loadgroup`` (``make test``) spreads the suite.

Spreading: every module is one unit of work, so that a module-scoped fixture (a production stack, a materialized
pipeline, a browser's pages) is built once, on one worker. pytest-xdist's own ``loadgroup`` cannot do it under
pytest 9: it marks a group by rewriting ``item._nodeid``, which pytest 9 no longer reads, so every test was its
own unit and both workers built the same module fixtures (the production stack and its pipeline twice). The units
known to run longest go first (``RUN_FIRST``, then the other modules holding slow tests, then the rest), so that
a long module never ends the run alone while the other worker idles.

Without the slow tests (``make test-fast``, ``-m "not slow"``) every module is short, and what costs most on a fresh
clone is numba compiling the kernels (about 60 s of CPU; ~40 s of it the simulation's, which any module that runs a
rollout needs): when both workers started on modules that roll out, both compiled the same simulation kernels side by
side. There the units are ordered by the kernels they need (``SIM_KERNELS``, then the modules needing none, then
``KERNELS``) and the first worker takes them from the front, the others from the back: one worker compiles the
simulation's kernels, the other the sensors' and the truth's, and they meet among the modules that need none (by then
the kernels are in numba's cache beside their modules). ``make install`` compiles them ahead, the argument types
only the tests use too (``python -m simready.kernel_cache --tests``): the order matters where a kernel changed since.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

# `make test` already runs one test process per core (pytest -n 2); a stage's own per-sample workers
# (simready.common.parallel) would add two more processes on the same cores in every test that runs a stage, and
# the suite took longer (pytest 696 s against 622 s on a fresh clone). Tests, and the CLI and Dagster processes
# they start, run a stage's samples in one process unless they ask for more (tests/test_parallel.py does).
os.environ.setdefault("SIMREADY_WORKERS", "1")

#: Modules that take longest on an idle machine, longest first: handed out before anything else, so that the
#: short modules fill the other worker while they run.
RUN_FIRST = ("tests/test_production.py", "tests/test_daemon_edits.py", "tests/test_suite_contacts.py",
             "tests/test_release.py", "tests/test_user_programs_dag.py", "tests/test_review_browser.py",
             "tests/test_dagster_simulation.py")


#: Modules whose tests run the simulation's numba kernels (``simready.sim``), in the order the first worker takes them
#: in ``make test-fast`` (those that also cast rays last: the other worker compiles the ray casting kernels meanwhile),
#: and those that run only the other kernels (ray casting, sensors, truth, motion), as numba's dispatchers counted them
#: in one ``-m "not slow"`` run. A module missing here still runs; it only loses its place in that order.
SIM_KERNELS = tuple(f"tests/{m}.py" for m in (
    "test_traffic_walkers", "test_traffic_respawn", "test_traffic", "test_traffic_bike_lanes", "test_sim_fastpath",
    "test_planner_fastpath", "test_dynamic_kernels", "test_intent_affordances", "test_kerbside_pedestrian",
    "test_maps_scenarios", "test_mobil_decision", "test_motion", "test_sim_absent_rows", "test_sim_bad_input",
    "test_sim_branch", "test_sim_checkpoint", "test_sim_cli", "test_sim_contact", "test_sim_determinism",
    "test_sim_interactions", "test_sim_junction_physics", "test_sim_kerb_step", "test_sim_physics",
    "test_sim_quiet_ticks", "test_sim_settle", "test_sim_trace", "test_sim_world", "test_traffic_density",
    "test_validity_reference_pool", "test_xosc_esmini", "test_xosc_import", "test_xosc_import_semantics",
    "test_xosc_route_position", "test_input_fuzz",
    "test_geometry", "test_street", "test_traffic_downstream", "test_observe_batch"))
KERNELS = frozenset(f"tests/{m}.py" for m in (
    "test_camera_kernels", "test_catalog_import_look", "test_compressed_variants", "test_crossmodal",
    "test_depth_compressed", "test_export_mcap", "test_export_nuscenes", "test_foxglove_layout",
    "test_input_fuzz_surfaces", "test_motion_kernels", "test_observe", "test_observe_files", "test_observe_review",
    "test_observe_window", "test_ply_ascii", "test_published_layout", "test_review_camera", "test_sensor_atmosphere",
    "test_sensor_camera", "test_sensor_ids", "test_sensor_kernels", "test_sensor_lidar", "test_sensor_radar",
    "test_sensor_rig", "test_truth_correspondence", "test_truth_motion_field", "test_truth_reader",
    "test_truth_tracks", "test_validity_binding"))


def _fast(config: pytest.Config) -> bool:
    """Whether the slow tests are deselected (``make test-fast``)."""
    return "not slow" in (config.getoption("markexpr", "") or "")


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


@pytest.hookimpl(trylast=True)  # after pytest's own reordering (parametrized higher-scoped fixtures)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist, order the modules longest first (see this file's docstring); each module stays in one piece and
    in its collection order."""
    if not hasattr(config, "workerinput"):
        return
    units: dict[str, list[pytest.Item]] = {}
    for item in items:
        units.setdefault(_module(item.nodeid), []).append(item)
    slow = {u for u, its in units.items() if any(it.get_closest_marker("slow") for it in its)}

    def rank(unit: str) -> tuple[int, int]:
        if _fast(config):
            return (0, SIM_KERNELS.index(unit)) if unit in SIM_KERNELS else (2, 0) if unit in KERNELS else (1, 0)
        if unit in RUN_FIRST:
            return 0, RUN_FIRST.index(unit)
        return (1, 0) if unit in slow else (2, 0)

    items[:] = [it for u in sorted(units, key=rank) for it in units[u]]  # sorted() is stable: collection order within


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):  # type: ignore[no-untyped-def]
    """``--dist loadgroup`` with a module as the unit (an ``xdist_group`` name, should xdist's marking work again),
    handed out in the order ``pytest_collection_modifyitems`` left the items in (not xdist's most-tests-first)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class ModuleScheduling(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return _module(nodeid) if scope == nodeid else scope

        def _assign_work_unit(self, node) -> None:  # type: ignore[no-untyped-def]
            # make test-fast: the first worker takes units from the front, the others from the back (docstring)
            if fast and self.workqueue and node.workerinput.get("workerid") != "gw0":
                self.workqueue.move_to_end(next(reversed(self.workqueue)), last=False)
            super()._assign_work_unit(node)

    fast = _fast(config)
    config.option.loadscopereorder = False
    return ModuleScheduling(config, log)


@pytest.fixture(autouse=True)
def _user_programs_forgotten():
    """Programs loaded from files are registered per process by intent id (a second file defining the same id is
    refused): each test starts without those an earlier test in the same worker loaded."""
    yield
    module = sys.modules.get("simready.scenario.program_files")
    if module is not None:
        module.USER_PROGRAMS.clear()


@pytest.fixture(scope="session")
def generated_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real contracts generated into a temporary directory, once per session (tests read it, never change it:
    they copy what they break)."""
    from simready.common import paths
    from simready.catalog.generate import generate_catalog

    out = tmp_path_factory.mktemp("catalog") / "generated"
    generate_catalog(paths.CATALOG_CONTRACTS_DIR, out)
    return out


@pytest.fixture(scope="session")
def street_sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic street sample (``write_street_sample``'s defaults: ``street-000001``, day, dry, observed),
    written once per worker (its 200 LiDAR sweeps take a second): tests read it or copy it, never change it."""
    from simready.testing.synthetic import write_street_sample

    return Path(write_street_sample(tmp_path_factory.mktemp("street") / "street-000001"))


@pytest.fixture(scope="session")
def fingerprinted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The fingerprint's two samples through every stage (:func:`tests.fingerprint.build`) and their hashes as built,
    once per run for every xdist worker: test_fingerprint compares the hashes, test_release copies the folders (tests
    read them, never change them). Built under a lock in the workers' common temporary folder (keyed by the run's
    id, so never a folder an earlier run left), by whichever worker asks first."""
    import fcntl

    from tests import fingerprint

    base = tmp_path_factory.getbasetemp()
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run:  # an xdist worker: its base is <the run's base>/<worker id>
        base = base.parent
    root = base / f"fingerprint-{run or 'local'}"
    samples, prints = root / "samples", root / "prints.json"
    root.mkdir(exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not prints.exists():
            shutil.rmtree(samples, ignore_errors=True)  # what a worker that failed half way left
            built = fingerprint.build(samples)
            tmp = prints.with_suffix(".tmp")
            tmp.write_text(json.dumps(built, sort_keys=True))
            tmp.replace(prints)
    return samples, json.loads(prints.read_text())


@pytest.fixture(scope="module")
def browser():
    """One chromium for a module's page tests (videos play without a click); a test opens and closes its own
    pages, never the browser. Not one per session: while Playwright's sync API is open, its event loop counts as
    running in this thread, so any later test's ``asyncio.run()`` in the worker would be refused."""
    from playwright.sync_api import sync_playwright

    from tests.fixtures.browser import CHROMIUM, MISSING

    if not CHROMIUM:
        pytest.fail(MISSING)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--autoplay-policy=no-user-gesture-required"])
        yield b
        b.close()
