"""Shared helpers for the simulation tests (no tests here): the real templates and catalog, cached."""

from __future__ import annotations

import copy
import functools
from typing import Any

import yaml

from simready import paths
from simready.catalog.catalog import ensure_catalog
from simready.scenario.manifest import ScenarioManifest, manifest_bytes, parse_manifest
from simready.testing import demo
from simready.world.template import WorldTemplate, load_template, parse_template

RESIDENTIAL = "residential_crosswalk_v3"
INTERSECTION = "urban_signalized_intersection"


@functools.lru_cache(maxsize=None)
def catalog() -> Any:
    return ensure_catalog()


@functools.lru_cache(maxsize=None)
def template(name: str = RESIDENTIAL) -> WorldTemplate:
    return load_template(paths.TEMPLATES_DIR / f"{name}.yaml")


@functools.lru_cache(maxsize=None)
def two_lane_template() -> WorldTemplate:
    """The residential street with ``lane_wb`` turned eastbound: two side-by-side lanes, so lane changes exist."""
    data = yaml.safe_load((paths.TEMPLATES_DIR / f"{RESIDENTIAL}.yaml").read_text())
    data = copy.deepcopy(data)
    data["id"] = "residential_two_eastbound"
    for lane in data["lanes"]:
        if lane["id"] == "lane_wb":
            lane["polyline"] = [[0, 1.75], [120, 1.75]]
    data["affordances"] = [a for a in data["affordances"] if a["type"] != "vehicle_spawn" or a["lane"] != "lane_wb"]
    return parse_template(data, "two_lane_test")


def edit(m: ScenarioManifest, fn: Any) -> ScenarioManifest:
    """A copy of ``m`` with its JSON edited by ``fn(data)`` (re-validated)."""
    import json

    data = json.loads(manifest_bytes(m))
    fn(data)
    return parse_manifest(data, "test")


def ego_only(tpl: WorldTemplate | None = None, *, speed: float = 10.0, clip_s: float = 6.0, warmup_s: float = 1.0,
             friction: float = 0.9, interactions: list | None = None, extra: list | None = None) -> ScenarioManifest:
    tpl = tpl or template()
    cat = catalog()
    actors = [demo.vehicle(cat, "ego", demo.SHUTTLE, "lane_eb", 2.0, (2.0, -1.75, 0.0), speed, role="ego")] + list(extra or [])
    env = dict(demo.ENVIRONMENT, road_friction=friction)
    return demo.assemble(tpl, cat, f"{tpl.id}-ego", actors, list(interactions or []), clip_s=clip_s, warmup_s=warmup_s,
                         environment=env)


def crossing(**kwargs: Any) -> ScenarioManifest:
    return demo.crossing_manifest(template(), catalog(), **kwargs)
