"""Street benchmarks (issue 24 item 5): the static street :mod:`simready.world.street` adds to an imported map.

Per test map: the time to compute the street from the imported template,
its instances by kind, and the static triangles the sensors then cast
against (catalog render meshes, one per instance).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from simready.bench.world import timed
from simready.catalog.catalog import ensure_catalog
from simready.maps.xodr_import import import_opendrive
from simready.testing.opendrive_maps import write_all
from simready.world.street import street_static
from simready.world.template import parse_template


def run() -> None:
    catalog = ensure_catalog()
    triangles = {a: sum(p.triangle_count for p in e.parts) for a, e in catalog.entries.items()}
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in write_all(Path(tmp)).items():
            template = parse_template(import_opendrive(path, f"bench_{name}").data)
            t_street, _ = timed(lambda t=template: street_static(t), repeats=3)
            street = street_static(template)
            kinds = "  ".join(f"{k} {n}" for k, n in street.counts().items())
            tris = sum(triangles[i["asset"]] for i in street.instances)
            print(f"street       {name:<9} {t_street * 1e3:7.1f} ms  {len(street.instances):5d} instances "
                  f"{tris:6d} triangles  ({kinds})")
