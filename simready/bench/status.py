"""``simready status`` benchmark (issue 19 item 6: the default suite's status in ≤ 3 s; measured here, not asserted
in timed tests).

``python -m simready.bench status`` prints medians over fresh processes (the cost is start-up, so every run is a
new interpreter, as a user's is):

* ``import simready.definitions``: the code location's load, which the webserver, the daemon, every run and
  ``simready status`` pay (3.1–3.9 s before issue 19 item 6: every asset module imported PyBullet, trimesh,
  SciPy, Matplotlib and GX at the top);
* ``simready status`` end to end on the instance in ``DAGSTER_HOME`` (default ``.dagster_home``, what ``make run``
  materialized), and where its time goes: Dagster's import, the definitions, opening the instance, the walk over
  the asset graph (Dagster's stale status per partition).

Figures are medians on shared cores: read them as orders of magnitude, and note what else was running.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

from simready.common import paths

TARGET_S = 3.0
RUNS = 5

#: One status run split into its stages, timed inside the process (seconds, JSON on stdout).
_STAGES = """
import json, time, warnings
t0 = time.perf_counter()
warnings.simplefilter("ignore")
import dagster
t1 = time.perf_counter()
from simready.definitions import defs
t2 = time.perf_counter()
from simready.runner.main_job import _instance
instance = _instance()
t3 = time.perf_counter()
from simready.runner.status import graph_status
rows = graph_status(defs, instance)
t4 = time.perf_counter()
print(json.dumps({"dagster": t1 - t0, "definitions": t2 - t1, "instance": t3 - t2, "graph": t4 - t3,
                  "partitions": len(rows), "materialized": sum(r.status != "missing" for r in rows)}))
"""


def _wall_s(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def run(runs: int = RUNS) -> None:
    env = {**os.environ, "DAGSTER_HOME": os.environ.get("DAGSTER_HOME", str(paths.PROJECT_ROOT / ".dagster_home"))}
    imports = [_wall_s([sys.executable, "-c", "import simready.definitions"], env) for _ in range(runs)]
    print(f"status       import simready.definitions: {statistics.median(imports):.2f} s (median of {runs} processes)")
    stages = [json.loads(subprocess.run([sys.executable, "-c", _STAGES], env=env, check=True, capture_output=True,
                                        text=True).stdout) for _ in range(runs)]
    last = stages[-1]
    if not last["materialized"]:
        print(f"status       {env['DAGSTER_HOME']}: nothing materialized; run `make run` first for the default suite")
    walls = [_wall_s([sys.executable, "-m", "simready.cli", "status"], env) for _ in range(runs)]
    split = ", ".join(f"{k} {statistics.median(s[k] for s in stages):.2f} s"
                      for k in ("dagster", "definitions", "instance", "graph"))
    print(f"status       simready status: {statistics.median(walls):.2f} s (median of {runs}; target ≤ {TARGET_S:.0f} s) "
          f"over {last['partitions']} partitions, {last['materialized']} materialized; {split}")
