"""Rules on the entry's fields: units and scale, licence, split key, ontology class and parts (an imported entry's
own), mass, plausible size, the import record, a source's own inertia."""

from __future__ import annotations

import numpy as np

from simready.catalog.certification.context import RuleContext, mass_basis
from simready.catalog.certification.policy import ALLOWED_UNITS, AXES, CONVERSION_TOL, REPAIR_HINT
from simready.catalog.meshio import bounds, source_inertia_problems
from simready.world.identity import asset_id


def check_units(c: RuleContext) -> list[str]:
    u = c.entry.units
    return [] if u == ALLOWED_UNITS else [f"units {u!r} not allowed; only {ALLOWED_UNITS}"]


def check_non_uniform_scale(c: RuleContext) -> list[str]:
    s = c.entry.scale
    if len(set(s)) == 1:
        return []
    return [f"scale {list(s)} is non-uniform; freeze it into the geometry and declare [1, 1, 1]"]


def check_license(c: RuleContext) -> list[str]:
    lic = (c.entry.license or "").strip()
    if not lic:
        return ["license missing or empty"]
    allowed = c.ontology.licenses_allowed
    return [] if lic in allowed else [f"license {lic!r} not in licenses_allowed ({', '.join(allowed)})"]


def check_split_key(c: RuleContext) -> list[str]:
    return [] if (c.entry.split_lineage_key or "").strip() else ["split_lineage_key missing or empty"]


def check_ontology(c: RuleContext) -> list[str]:
    e, ont = c.entry, c.ontology
    out = []
    try:
        expected = asset_id(e.family, e.variant)
    except ValueError:
        expected = None
    if e.id != expected:
        out.append(f"id {e.id!r} does not match family {e.family!r} / variant {e.variant!r}")
    if e.ontology_version != ont.ontology_version:
        out.append(f"ontology_version {e.ontology_version!r} does not match the ontology's {ont.ontology_version!r}")
    if e.semantic_class not in ont.classes:
        out.append(f"unknown semantic class {e.semantic_class!r}")
    family = ont.families.get(e.family)
    if family is None:
        return out + [f"unknown family {e.family!r}"]
    if e.semantic_class != family.class_name:
        out.append(f"semantic_class {e.semantic_class!r} is not family {e.family!r}'s class {family.class_name!r}")
    parts = [p.name for p in e.parts]
    if e.import_ is None and parts != list(family.parts):
        out.append(f"parts {parts} are not family {e.family!r}'s parts {list(family.parts)}")
    return out


def check_imported_ontology(c: RuleContext) -> list[str]:
    """An imported entry names its family freely (its class is what the ontology governs); its parts are the
    source's, named uniquely."""
    parts = [p.name for p in c.entry.parts]
    out = [] if len(set(parts)) == len(parts) and parts else [f"parts {parts} must be non-empty and unique"]
    if c.entry.family in c.ontology.families:
        return out + check_ontology(c)
    return out + [m for m in check_ontology(c) if not m.startswith("unknown family")]


def check_mass(c: RuleContext) -> list[str]:
    e, ont = c.entry, c.ontology
    m = e.mass_kg
    if m < 0:
        return [f"mass {m:g} kg is negative"]
    out = []
    if e.body_type != "static" and m <= 0:
        out.append(f"{e.body_type} body needs mass > 0 (got {m:g} kg)")
    cls = ont.class_of_family(e.family) or e.semantic_class
    rng = ont.classes[cls].mass_kg if cls in ont.classes else None
    if rng is not None and not rng[0] <= m <= rng[1]:
        out.append(f"mass {m:g} kg outside class {cls!r} range [{rng[0]:g}, {rng[1]:g}] kg")
    return out


def check_plausibility(c: RuleContext) -> list[str]:
    cls = c.ontology.classes.get(c.entry.semantic_class)
    if cls is None or cls.size_m is None or c.render is None:
        return []
    lo, hi = bounds([c.render])
    out = []
    for axis, name, ext in zip(AXES, ("length", "width", "height"), hi - lo, strict=True):
        rng = getattr(cls.size_m, name)
        if rng is not None and not rng[0] <= ext <= rng[1]:
            out.append(f"{name} ({axis}) {ext:.4g} m outside class {c.entry.semantic_class!r} range "
                       f"[{rng[0]:g}, {rng[1]:g}] m (wrong units?)")
    return out


def check_import_record(c: RuleContext) -> list[str]:
    rec = c.entry.import_
    if rec is None:
        return []
    m = np.asarray(rec.conversion, dtype=np.float64)
    linear = m[:3, :3] / rec.meters_per_unit
    out = []
    if not np.allclose(m[3], [0.0, 0.0, 0.0, 1.0], rtol=0, atol=CONVERSION_TOL):
        out.append(f"import.conversion bottom row {m[3].tolist()} is not [0, 0, 0, 1]")
    if not np.allclose(linear @ linear.T, np.eye(3), rtol=0, atol=CONVERSION_TOL) or np.linalg.det(linear) <= 0:
        out.append(f"import.conversion is not a rotation times the recorded {rec.meters_per_unit:g} m per unit "
                   "(a hidden or non-uniform scale)")
    if c.entry.generator.kind != "import":
        out.append(f"generator.kind {c.entry.generator.kind!r} for an imported entry")
    return out


def check_source_inertia(c: RuleContext) -> list[str]:
    rec = c.entry.import_
    if rec is None or rec.source_inertial is None or c.pieces is None:
        return []
    lo, hi = bounds([c.render]) if c.render is not None else bounds(c.pieces)
    hint = "; " + REPAIR_HINT.format("use the geometry's mass properties")
    return [m + hint for m in source_inertia_problems(rec.source_inertial, mass_basis(c), float(np.linalg.norm(hi - lo)))]
