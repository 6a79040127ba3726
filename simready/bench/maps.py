"""Map benchmarks (issues 17, 24): OpenDRIVE import of the generated test maps, and of a ~3 MB city map.

Targets: importing the four-way junction map takes at most 1 s (issue 17);
a 3 MB city or highway map imports in at most 10 s and 1 GB peak (issue 24).
Per small map it prints the import (read, sample, build) and the template
validation separately, and the template's lanes, regions and ground
triangles. The city map (:func:`simready.testing.opendrive_cases.grid_city`:
8 × 8 signalised four-way junctions, two lanes each way, sidewalks; 3.2 MB)
is imported in a fresh process, so that its peak resident memory is the
import's own; it prints lanes, junctions, repairs and link reports beside
the wall time (the target) and the CPU time (what a shared, loaded machine
does not inflate); then, in another child, the import, the template write (its street derived at load, not
listed: docs/scale.md) and the template load (the street built) one after the other; then ``simready template
import`` end to end (import, YAML, the validation that loads the file back) in a child. Set ``SIMREADY_BENCH_MAPS`` to a ``:``-separated list of .xodr
files (e.g. CARLA towns) to time those the same way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import shapely

from simready.bench.world import timed
from simready.maps.xodr_import import import_opendrive
from simready.testing.opendrive_cases import grid_city
from simready.testing.opendrive_maps import write_all
from simready.world.template import parse_template

#: The issue's budget for importing the four-way junction map (s).
JUNCTION_IMPORT_BUDGET_S = 1.0
#: Issue 24's budget for a 3 MB city or highway map: seconds and peak resident memory (MB).
CITY_IMPORT_BUDGET_S = 10.0
CITY_IMPORT_BUDGET_MB = 1024.0
#: Grid size of the generated city map (8 × 8 junctions: 3.2 MB).
CITY_GRID = 8

_CHILD = """
import json, resource, sys, time
from simready.maps.xodr_import import import_opendrive
t0, c0 = time.perf_counter(), time.process_time()
m = import_opendrive(sys.argv[1], "bench_city")
dt, dc = time.perf_counter() - t0, time.process_time() - c0
r = m.report
print(json.dumps({"s": dt, "cpu_s": dc, "mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                  "lanes": r.counts["lanes"], "junctions": r.counts["junctions"], "signals": r.counts["signals"],
                  "markings": r.counts["markings"], "repairs": len(r.repairs), "links": len(r.link_mismatches)}))
"""


_TEMPLATE_CHILD = """
import json, resource, sys, time
from pathlib import Path
from simready.maps.template_yaml import template_yaml
from simready.maps.xodr_import import import_opendrive
from simready.world.street import derived_street
from simready.world.template import load_template
out = Path(sys.argv[2])
clock = lambda: (time.perf_counter(), time.process_time())
t0 = clock()
data = derived_street(import_opendrive(sys.argv[1], "bench_city").data)
t1 = clock()
out.write_text(template_yaml(data), encoding="utf-8")
t2 = clock()
mb_write = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
template = load_template(out)
t3 = clock()
print(json.dumps({"import": [t1[0] - t0[0], t1[1] - t0[1]], "write": [t2[0] - t1[0], t2[1] - t1[1]],
                  "load": [t3[0] - t2[0], t3[1] - t2[1]], "mb_write": mb_write,
                  "mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                  "file_mb": out.stat().st_size / 1e6, "instances": len(template.instances)}))
"""


def _print_template(label: str, path: Path, tmp: str) -> None:
    """Import, template write (the street derived, not listed) and template load (the street built) of ``path``,
    in a fresh child: wall (CPU) seconds each, the file's size, the instances the load gives and the peak
    resident memory after the write and after the load. Target: import + write <= 10 s and <= 1 GB."""
    got = _import_in_child(path, _TEMPLATE_CHILD, str(Path(tmp) / "bench_city.yaml"))
    if "error" in got:
        print(f"maps         template {label:<20}: {got['error']}")
        return
    (i_s, i_c), (w_s, w_c), (l_s, l_c) = got["import"], got["write"], got["load"]
    ok = i_s + w_s <= CITY_IMPORT_BUDGET_S and got["mb_write"] <= CITY_IMPORT_BUDGET_MB
    print(f"maps         template {label:<20} import {i_s:5.2f} s ({i_c:.2f} CPU) + write {w_s:5.2f} s ({w_c:.2f} CPU) "
          f"{got['mb_write']:5.0f} MB peak (target <= {CITY_IMPORT_BUDGET_S:g} s, <= {CITY_IMPORT_BUDGET_MB:g} MB: "
          f"{'met' if ok else 'MISSED'}); file {got['file_mb']:.1f} MB; load {l_s:5.2f} s ({l_c:.2f} CPU) "
          f"{got['mb']:5.0f} MB peak, {got['instances']} instances")


def _import_in_child(path: Path, child: str = _CHILD, *extra: str) -> dict:
    out = subprocess.run([sys.executable, "-c", child, str(path), *extra], capture_output=True, text=True, check=False,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _print_big(label: str, path: Path) -> None:
    size_mb = path.stat().st_size / 1e6
    got = _import_in_child(path)
    if "error" in got:
        print(f"maps         import {label:<20} {size_mb:4.1f} MB: {got['error']}")
        return
    verdict = "met" if got["s"] <= CITY_IMPORT_BUDGET_S and got["mb"] <= CITY_IMPORT_BUDGET_MB else "MISSED"
    print(f"maps         import {label:<20} {size_mb:4.1f} MB {got['s']:6.2f} s ({got['cpu_s']:.2f} s CPU) "
          f"{got['mb']:6.0f} MB peak   "
          f"{got['lanes']:5d} lanes {got['junctions']:4d} junctions {got['signals']:4d} signals "
          f"{got['markings']:5d} markings {got['repairs']:4d} repairs {got['links']:4d} link reports "
          f"(target <= {CITY_IMPORT_BUDGET_S:g} s, <= {CITY_IMPORT_BUDGET_MB:g} MB: {verdict})")


def _print_end_to_end(label: str, path: Path, tmp: str) -> None:
    """``simready template import`` of ``path`` in a child: import, street, YAML write, then the validation that
    re-reads the file (the lane graph included), as a user runs it; wall and the child's CPU time."""
    out = Path(tmp) / "e2e_template.yaml"
    before = os.times()
    t0 = time.perf_counter()
    got = subprocess.run([sys.executable, "-m", "simready.cli", "template", "import", str(path), "--id", "e2e_template",
                          "--out", str(out)], capture_output=True, text=True, check=False,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    wall = time.perf_counter() - t0
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    verdict = "met" if got.returncode == 0 and wall <= CITY_IMPORT_BUDGET_S else "MISSED"
    tail = "" if got.returncode == 0 else "  failed: " + ((got.stderr.strip().splitlines() or ["?"])[-1])[-200:]
    print(f"maps         template import (end to end) {label:<20} {wall:6.2f} s ({cpu:.2f} s CPU) "
          f"(target <= {CITY_IMPORT_BUDGET_S:g} s: {verdict}){tail}")


def run() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        files = write_all(Path(tmp))
        for name, path in files.items():
            t_import, _ = timed(lambda p=path: import_opendrive(p, f"bench_{name}"), repeats=5)
            data = import_opendrive(path, f"bench_{name}").data
            t_validate, _ = timed(lambda d=data: parse_template(d), repeats=3)
            template = parse_template(data)
            triangles = sum(len(shapely.constrained_delaunay_triangles(r.shape).geoms) for r in template.regions)
            verdict = ""
            if name == "junction":
                verdict = "  (target <= 1 s: " + ("met" if t_import + t_validate <= JUNCTION_IMPORT_BUDGET_S else "MISSED") + ")"
            print(f"maps         import {name:<9} {t_import * 1e3:7.1f} ms + validate {t_validate * 1e3:6.1f} ms   "
                  f"{len(template.lanes):3d} lanes {len(template.regions):3d} regions {triangles:5d} triangles{verdict}")

        city = Path(tmp) / "grid_city.xodr"
        city.write_bytes(grid_city(CITY_GRID))
        _print_big(f"grid city {CITY_GRID}x{CITY_GRID}", city)
        _print_template(f"grid city {CITY_GRID}x{CITY_GRID}", city, tmp)
        _print_end_to_end(f"grid city {CITY_GRID}x{CITY_GRID}", city, tmp)
        for extra in filter(None, os.environ.get("SIMREADY_BENCH_MAPS", "").split(":")):
            _print_big(Path(extra).name, Path(extra))
