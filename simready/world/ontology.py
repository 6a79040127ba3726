"""Versioned ontology (SPEC §3): semantic classes, families, parts, attributes.

Semantic class, instance, asset family, part and attributes are separate
concepts: a red and a white delivery van are two variants of one *family*
(one split lineage), both of *class* ``van``; ``age_group`` is an *attribute*
of a pedestrian family, not a class.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from simready.common import paths
from simready.common.errors import OntologyError, pydantic_reason
from simready.common.loading import load_yaml

UNKNOWN_CLASS_ID = 65535


Range = tuple[float, float]


class SizeRange(BaseModel):
    """Plausible extents of a class's assets, metres, body frame: ``length`` along x (forward), ``width`` along y,
    ``height`` along z; ``[min, max]`` each, or None where the class does not bound that axis (a road tile's
    length). Certification rejects an entry outside them: what catches an asset imported in the wrong units."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    length: Range | None = None
    width: Range | None = None
    height: Range | None = None

    @model_validator(mode="after")
    def _ordered(self) -> "SizeRange":
        for axis in ("length", "width", "height"):
            r = getattr(self, axis)
            if r is not None and not 0 < r[0] <= r[1]:
                raise ValueError(f"size_m.{axis} must be [min, max] with 0 < min <= max")
        return self


class ClassDef(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: int = Field(ge=1, le=65534)
    category: str
    mass_kg: Range | None = None
    size_m: SizeRange | None = None


class FamilyDef(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    class_name: str = Field(alias="class")
    parts: tuple[str, ...]
    attributes: dict[str, str] = Field(default_factory=dict)


class Ontology(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    ontology_version: str
    unknown_class_id: int = UNKNOWN_CLASS_ID
    classes: dict[str, ClassDef]
    families: dict[str, FamilyDef]
    attributes: dict[str, tuple[str, ...]]
    licenses_allowed: tuple[str, ...]

    @model_validator(mode="after")
    def _consistent(self) -> "Ontology":
        if self.unknown_class_id != UNKNOWN_CLASS_ID:
            raise ValueError(f"unknown_class_id must be {UNKNOWN_CLASS_ID}")
        ids = [c.id for c in self.classes.values()]
        if len(ids) != len(set(ids)):
            raise ValueError("class ids must be unique")
        for name, fam in self.families.items():
            if fam.class_name not in self.classes:
                raise ValueError(f"family {name!r} names unknown class {fam.class_name!r}")
            for key, value in fam.attributes.items():
                if value not in self.attributes.get(key, ()):
                    raise ValueError(f"family {name!r}: attribute {key}={value!r} not declared")
        return self

    def class_id(self, class_name: str | None) -> int:
        """Semantic id of a class; unknown classes map to 65535 (*ignore*)."""
        if class_name is None or class_name not in self.classes:
            return self.unknown_class_id
        return self.classes[class_name].id

    def class_of_family(self, family: str) -> str | None:
        fam = self.families.get(family)
        return fam.class_name if fam else None

    def class_names_by_id(self) -> dict[int, str]:
        return {c.id: name for name, c in sorted(self.classes.items())}


def parse_ontology(data: object, source: str) -> Ontology:
    try:
        return Ontology.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise OntologyError(source, field, pydantic_reason(err)) from None


@lru_cache(maxsize=8)
def _load_cached(path: str, mtime_ns: int) -> Ontology:
    return parse_ontology(load_yaml(path, OntologyError), path)


def load_ontology(path: str | Path = paths.ONTOLOGY_FILE) -> Ontology:
    p = Path(path)
    if not p.exists():
        raise OntologyError(p, "", "file not found")
    return _load_cached(str(p), p.stat().st_mtime_ns)
