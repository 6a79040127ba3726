"""Map benchmarks (issue 17): OpenDRIVE import of the generated test maps, and what each imported template holds.

Target: importing the four-way junction map takes at most 1 s. Per map it
prints the import (read, sample, build) and the template validation
separately, and the template's lanes, regions and ground triangles (the
regions' constrained Delaunay triangulation, what a ground mesh of the
template would hold).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import shapely

from simready.bench.world import timed
from simready.maps.xodr_import import import_opendrive
from simready.testing.opendrive_maps import write_all
from simready.world.template import parse_template

#: The issue's budget for importing the four-way junction map (s).
JUNCTION_IMPORT_BUDGET_S = 1.0


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
