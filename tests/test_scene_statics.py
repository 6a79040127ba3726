"""A template's static bodies are built once per process (issue 29): a catalog loaded again from the same folder
with equal entries finds them (each stage loads its own), and the stage builds them before it forks its workers."""

from __future__ import annotations

from simready.catalog.catalog import Catalog, ensure_catalog, load_catalog
from simready.common import paths
from simready.sensors_hw import scene_build
from simready.world.template import load_template


def kept(template) -> list[int]:
    return [id(pairs) for t, _, _, pairs in scene_build._STATICS if t is template]


def test_a_catalog_loaded_again_finds_the_statics_prepared_before_and_a_changed_one_does_not():
    catalog = ensure_catalog()
    template = load_template(paths.TEMPLATES_DIR / "urban_signalized_intersection.yaml")
    n = scene_build.prepare_statics(template, catalog)
    assert n == len(template.instances) > 0
    before = kept(template)
    again = load_catalog(catalog.generated_dir)
    assert again is not catalog
    assert scene_build.prepare_statics(template, again) == n
    assert kept(template) == before  # none built again
    asset = template.instances[0].asset
    entry = again.entries[asset]
    changed = Catalog(again.generated_dir, {**again.entries, asset: entry.model_copy(
        update={"material": entry.material.model_copy(update={"reflectance": entry.material.reflectance / 2})})})
    assert not scene_build._same_catalog(catalog, changed, [asset])
    scene_build.prepare_statics(template, changed)
    assert len(kept(template)) == len(before) + 1
