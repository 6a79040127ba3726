"""The context of one generation run: what every scenario program and ladder stage reads, built once.

It sits below both the programs (:mod:`simready.scenario.programs`) and the
ladder stages they are checked by (:mod:`.static_checks`,
:mod:`.coarse_rollout`, :mod:`.capture`), so neither imports the other for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from simready.catalog.catalog import Catalog
from simready.catalog.index import ENTRY_FILE
from simready.common.hashing import file_sha256
from simready.scenario.coverage import CoverageSpec
from simready.scenario.geometry import TemplateGeometry
from simready.scenario.splits import SplitConfig
from simready.world.ontology import Ontology, load_ontology
from simready.world.template import WorldTemplate, template_hash


@dataclass(frozen=True, eq=False)
class ProgramContext:
    """Everything a program and the ladder read, built once per generation run."""

    template: WorldTemplate
    template_hash: str
    catalog: Catalog
    geometry: TemplateGeometry
    asset_hashes: Mapping[str, str]
    splits: SplitConfig
    ontology: Ontology
    coverage: CoverageSpec

    @classmethod
    def build(cls, template: WorldTemplate, catalog: Catalog, splits: SplitConfig, coverage: CoverageSpec,
              ontology: Ontology | None = None) -> ProgramContext:
        key = (template_hash(template), str(catalog.generated_dir))
        geometry = _GEOMETRY.get(key)
        if geometry is None or geometry.template is not template:
            geometry = TemplateGeometry.build(template, catalog)
            _GEOMETRY[key] = geometry
        return cls(template=template, template_hash=key[0], catalog=catalog, geometry=geometry,
                   asset_hashes=_asset_hashes(catalog), splits=splits, coverage=coverage,
                   ontology=ontology if ontology is not None else load_ontology())

    def variants(self, family: str) -> list[str]:
        """Catalog asset ids of a family, sorted."""
        return self._by_family.get(family, [])

    def families_of_class(self, semantic_class: str) -> list[str]:
        return self._families_by_class.get(semantic_class, [])

    @cached_property
    def instance_assets(self) -> frozenset[str]:
        """Asset ids of the template's static instances."""
        return frozenset(i.asset for i in self.template.instances)

    @cached_property
    def footprints(self) -> dict[str, tuple[float, float]]:
        """``{asset id: (length_m, width_m)}`` of the catalog."""
        return self.catalog.footprints()

    @cached_property
    def _by_family(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for a, e in self.catalog.entries.items():
            out.setdefault(e.family, []).append(a)
        return out

    @cached_property
    def _families_by_class(self) -> dict[str, list[str]]:
        out: dict[str, set[str]] = {}
        for e in self.catalog.entries.values():
            out.setdefault(e.semantic_class, set()).add(e.family)
        return {k: sorted(v) for k, v in out.items()}


_GEOMETRY: dict[tuple[str, str], TemplateGeometry] = {}
_ASSET_HASHES: dict[str, dict[str, str]] = {}


def _asset_hashes(catalog: Catalog) -> dict[str, str]:
    """``{asset id: sha256 of its entry.json}`` — the asset versions a manifest pins."""
    key = str(catalog.generated_dir)
    if key not in _ASSET_HASHES:
        _ASSET_HASHES[key] = {a: file_sha256(str(catalog.entry_dir(a) / ENTRY_FILE)) for a in catalog.entries}
    return _ASSET_HASHES[key]
