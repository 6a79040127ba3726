"""The certification rules (SPEC §4), one module per kind: :mod:`.fields`, :mod:`.files`, :mod:`.geometry`, over
the :mod:`.context` a rule reads and the :mod:`.policy` tolerances; :data:`RULES` lists them cheap → expensive.
:mod:`simready.catalog.certify` runs every rule on every entry."""

from __future__ import annotations

from simready.catalog.certification.context import Rule, RuleContext
from simready.catalog.certification.fields import (check_import_record, check_imported_ontology, check_license,
                                                   check_mass, check_non_uniform_scale, check_ontology,
                                                   check_plausibility, check_source_inertia, check_split_key,
                                                   check_units)
from simready.catalog.certification.files import check_geometry_hash
from simready.catalog.certification.geometry import check_collider_mismatch, check_hidden_scale, check_inertia


#: Cheap → expensive; every rule runs.
RULES: tuple[Rule, ...] = (
    Rule("units", check_units),
    Rule("non_uniform_scale", check_non_uniform_scale),
    Rule("license", check_license),
    Rule("split_key", check_split_key),
    Rule("ontology", lambda c: check_ontology(c) if c.entry.import_ is None else check_imported_ontology(c)),
    Rule("import", check_import_record),
    Rule("mass", check_mass),
    Rule("geometry_hash", check_geometry_hash),
    Rule("hidden_scale", check_hidden_scale),
    Rule("plausibility", check_plausibility),
    Rule("inertia", check_inertia),
    Rule("source_inertia", check_source_inertia),
    Rule("collider_mismatch", check_collider_mismatch),
)


__all__ = ["RULES", "Rule", "RuleContext"]
