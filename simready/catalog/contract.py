"""The asset contract (SPEC §4): what a hand-authored catalog YAML declares,
and what a generated ``entry.json`` adds to it.

Two models, one inheriting the other, so that the generated entry *is* the
contract plus computed facts and the two cannot drift:

* :class:`AssetContract` — one hand-authored ``data/catalog/contracts/<family>__<variant>.yaml``.
* :class:`CatalogEntry` — the generated ``entry.json``: the contract fields
  unchanged, plus mass properties, geometry summaries and file hashes that the
  generator computed (never typed by hand).

Units: metres, kilograms, kg·m²; ``rpy_deg`` mounts are degrees (config
boundary, converted by :func:`simready.world.frames.mount_transform`). All
positions are in the asset body frame: x forward, y left, z up, origin at the
centre of the footprint on the ground. No quaternions are stored here.

Policy fields that certification judges (units, scale, license, split key,
class, mass range) parse permissively on purpose: a bad value is a
*certification rejection with a reason*, not a parse error. Structural
problems (a missing ``mass_kg``, an unknown key, a wrong type) are a
:class:`~simready.common.errors.CatalogError` naming the file and field path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from simready.common.errors import CatalogError, pydantic_reason
from simready.common.hashing import content_hash
from simready.common.identifiers import Identifier
from simready.common.loading import load_yaml

Vec3 = tuple[float, float, float]
#: Stated bound of a contract's lengths (m): no asset of ours is larger than a city block.
MAX_ASSET_M = 1000.0
#: A finite length or offset on the body, metres.
BodyLength = Annotated[float, Field(allow_inf_nan=False, ge=-MAX_ASSET_M, le=MAX_ASSET_M)]
BodyVec3 = tuple[BodyLength, BodyLength, BodyLength]
BodyType = Literal["static", "kinematic", "dynamic"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Material(_Strict):
    """Render material: linear albedo in [0, 1] per channel, scalar reflectance in [0, 1]."""

    albedo_rgb: tuple[float, float, float]
    reflectance: float = Field(ge=0.0, le=1.0)


class Dimensions(_Strict):
    """Declared axis-aligned bounding box extents of the body, metres (x, y, z)."""

    length: float = Field(gt=0.0, le=MAX_ASSET_M, allow_inf_nan=False)
    width: float = Field(gt=0.0, le=MAX_ASSET_M, allow_inf_nan=False)
    height: float = Field(gt=0.0, le=MAX_ASSET_M, allow_inf_nan=False)

    def as_extents(self) -> Vec3:
        return (self.length, self.width, self.height)


class Mount(_Strict):
    """A named frame on the body: translation in metres, roll/pitch/yaw in degrees."""

    translation_m: BodyVec3
    rpy_deg: BodyVec3 = (0.0, 0.0, 0.0)


class GeneratorSpec(_Strict):
    """Procedural recipe: ``kind`` selects a generator, ``params`` are its inputs in metres."""

    kind: str
    params: dict[str, Any] = Field(default_factory=dict)


class AssetContract(_Strict):
    """One hand-authored catalog entry (see module docstring for field policy)."""

    id: str
    family: Identifier
    variant: Identifier
    units: str
    scale: BodyVec3
    ontology_version: str
    semantic_class: str
    body_type: BodyType
    #: Bounded (MAX_MASS_KG in simready.catalog.importers.source): a larger mass is a typing error whose inertia
    #: overflows float64 arithmetic in certification.
    mass_kg: float = Field(ge=0.0, le=1e6, allow_inf_nan=False)
    friction: float = Field(ge=0.0)
    restitution: float = Field(ge=0.0, le=1.0)
    material: Material
    license: str | None = None
    split_lineage_key: str | None = None
    dimensions_m: Dimensions
    generator: GeneratorSpec
    mounts: dict[str, Mount] = Field(default_factory=dict)


class FileRef(_Strict):
    """A file beside ``entry.json`` and the ``sha256:<hex>`` of its bytes."""

    file: str
    sha256: str


class PartRange(_Strict):
    """Triangles ``[first_triangle, first_triangle + triangle_count)`` of render.obj belong to ``name``."""

    name: str
    first_triangle: int = Field(ge=0)
    triangle_count: int = Field(ge=0)


class Convention(_Strict):
    """One convention of an imported source: what the file declares (None: nothing), what was applied, and why
    (``file``, ``flag``, ``file+flag`` or ``default``)."""

    declared: str | None
    applied: str
    decided_by: Literal["file", "flag", "file+flag", "default"]


class ColliderRecord(_Strict):
    """Where an imported entry's collider came from: the source's own collision geometry, or a decomposition
    (``method`` is the library and version, ``settings`` its inputs, ``threshold`` among them).

    volume_error: (collider union volume − render volume) / render volume; None when the render mesh is not closed.
    """

    origin: Literal["source", "decomposition"]
    method: str | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    pieces: int = Field(ge=1)
    volume_error: float | None


class SourceInertialRecord(_Strict):
    """A source's own mass properties (URDF ``<inertial>``, all links combined), converted into the body frame:
    kg, m, kg·m² about the centre of mass."""

    mass_kg: float = Field(gt=0.0, allow_inf_nan=False)
    center_of_mass_m: Vec3
    inertia_kg_m2: tuple[Vec3, Vec3, Vec3]


class Repair(_Strict):
    """One repair ``--repair`` made to an imported source (issue 30): what kind, where in the source (a field
    path), the source's value before and what was used after, both as short text."""

    what: str
    where: str
    before: str
    after: str


class ImportRecord(_Strict):
    """How an imported entry was made from its source file (issue 16): what the file is, what it declares,
    what was applied, and the one 4×4 ``conversion`` (row-major, source coordinates → body frame metres,
    ``T · R · S``) applied to every vertex. ``source_file`` is relative to the catalog folder.

    geometry_sha256: canonical hash of the converted vertices (µm) and triangles in part order, part names left
    out: two sources with the same triangles in the same order have the same one, whatever their names or format.
    """

    source_file: str
    source_sha256: str
    source_files: int = Field(ge=1)
    format: str
    declared_by: str
    units: Convention
    meters_per_unit: float = Field(gt=0.0, allow_inf_nan=False)
    up_axis: Convention
    forward_axis: Convention
    conversion: tuple[tuple[float, float, float, float], ...] = Field(min_length=4, max_length=4)
    geometry_sha256: str
    degenerate_triangles_dropped: int = Field(ge=0)
    collider: ColliderRecord
    source_inertial: SourceInertialRecord | None = None
    notes: list[str] = Field(default_factory=list)
    #: Every repair ``--repair`` made (absent from entry.json when there is none, so earlier imports keep their bytes).
    repairs: list[Repair] = Field(default_factory=list)


class PartLook(_Strict):
    """What one part looks like: linear base colour (multiplies the texture where there is one) and the
    texture image beside entry.json (sRGB PNG), if the source has one for this part."""

    part: str
    base_color_rgb: tuple[float, float, float]
    texture: FileRef | None = None


class Appearance(_Strict):
    """Per-part materials of an imported entry (issue 16), in render.obj part order.

    uv: ``uv.f32.bin`` beside entry.json when any part is textured: little-endian float32, one row per
    render.obj triangle in source order, its three corners' (u, v) texture coordinates (glTF convention:
    v = 0 is the image's top row); zeros for the triangles of untextured parts.
    """

    parts: list[PartLook]
    uv: FileRef | None = None


class Wheel(_Strict):
    """One wheel of an imported vehicle (:mod:`simready.catalog.wheels`): the render parts it is made of, the centre
    of their bounding box (body frame, m), its radius (half its x–z diameter) and width (its y extent), m."""

    parts: list[str] = Field(min_length=1)
    center_m: Vec3
    radius_m: float = Field(gt=0.0, allow_inf_nan=False)
    width_m: float = Field(ge=0.0, allow_inf_nan=False)


class VehicleRecord(_Strict):
    """An imported entry's wheels and what a chassis needs from them (issue 30), found on render.obj.

    found_by: ``names`` (parts named wheel/tire/tyre) or ``shape`` (four round parts at the corners).
    front_axle_x_m, rear_axle_x_m: the axles' x in the body frame; wheelbase_m their distance; track_m the mean
    left–right distance of the wheel centres over the axles; ground_clearance_m the lowest body point outside
    the wheels above the ground under the wheels (None when every body point is within a wheel's circle).
    """

    found_by: Literal["names", "shape"]
    wheels: list[Wheel] = Field(min_length=2)
    wheel_radius_m: float = Field(gt=0.0, allow_inf_nan=False)
    front_axle_x_m: BodyLength
    rear_axle_x_m: BodyLength
    wheelbase_m: float = Field(gt=0.0, le=MAX_ASSET_M, allow_inf_nan=False)
    track_m: float = Field(ge=0.0, le=MAX_ASSET_M, allow_inf_nan=False)
    ground_clearance_m: BodyLength | None


class CatalogEntry(AssetContract):
    """A generated catalog entry: the contract plus computed facts.

    Computed fields (body frame, SI):
        parts: render.obj triangle ranges per part, in the order of the file's ``o`` groups.
        center_of_mass_m: centre of mass, uniform density over the render volume.
        inertia_kg_m2: 3×3 inertia tensor about the centre of mass, body axes
            (all zero for a static entry of mass 0).
        render_volume_m3, render_bounds_m ([[min xyz], [max xyz]]): of render.obj.
        collision_volume_m3: volume of the union of the convex collision pieces.
        render_geometry, collision_geometry, urdf: files and their hashes.
        generator_version: :data:`simready.catalog.procedural.GENERATOR_VERSION` that wrote it.
        contract_sha256: canonical hash of the YAML mapping it was generated from.
        vehicle: an imported entry's wheels, wheelbase, track and ground clearance (absent when none are found).
        import_ (``import`` in the file): how an imported entry was converted from its source; absent for a
            procedural entry (so procedural entry.json bytes are what they were before importing existed).
        appearance: per-part base colours and textures of an imported entry; absent for a procedural one
            (whose ``material`` is its one colour).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    parts: list[PartRange]
    center_of_mass_m: Vec3
    inertia_kg_m2: tuple[Vec3, Vec3, Vec3]
    render_volume_m3: float
    render_bounds_m: tuple[Vec3, Vec3]
    collision_volume_m3: float
    render_geometry: FileRef
    collision_geometry: list[FileRef]
    urdf: FileRef
    generator_version: str
    contract_sha256: str
    import_: ImportRecord | None = Field(default=None, alias="import")
    appearance: Appearance | None = None
    #: An imported entry whose render mesh is open or not a 2-manifold (``--repair``): the watertight solid its
    #: volume, collider and mass are measured on; render.obj stays as drawn. Absent otherwise.
    volume_geometry: FileRef | None = None
    #: An imported entry's wheels, when it has two axles of them (:mod:`simready.catalog.wheels`). Absent otherwise,
    #: so entries without wheels keep their bytes.
    vehicle: VehicleRecord | None = None

    def json_dict(self) -> dict[str, Any]:
        """What entry.json holds: ``import`` under its name, and neither ``import`` nor ``appearance`` for a
        procedural entry (so its bytes are what they were before importing existed)."""
        exclude: dict[str, Any] = {name: True for name in ("import_", "appearance", "volume_geometry", "vehicle")
                                   if getattr(self, name) is None}
        if self.import_ is not None and not self.import_.repairs:
            exclude["import_"] = {"repairs"}
        return self.model_dump(mode="json", by_alias=True, exclude=exclude or None)

    def files(self) -> list[FileRef]:
        """Every file entry.json names (geometry, URDF, appearance), for hash checks."""
        look = self.appearance
        extra = [] if look is None else [*(p.texture for p in look.parts if p.texture), *([look.uv] if look.uv else [])]
        volume = [self.volume_geometry] if self.volume_geometry else []
        return [self.render_geometry, *self.collision_geometry, self.urdf, *extra, *volume]

    def contract(self) -> AssetContract:
        """The hand-authored part of this entry."""
        return AssetContract.model_validate(self.model_dump(include=set(AssetContract.model_fields)))


def field_path(loc: tuple[int | str, ...]) -> str:
    """Pydantic ``loc`` → ``material.albedo_rgb[1]``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def catalog_error(source: str | Path, exc: ValidationError, prefix: str = "") -> CatalogError:
    """One-line CatalogError naming the first failing field of a pydantic error."""
    first = exc.errors()[0]
    path = field_path(tuple(first["loc"]))
    path = f"{prefix}.{path}" if prefix and path else (prefix or path)
    return CatalogError(source, path, pydantic_reason(first))


def read_yaml_mapping(path: Path) -> dict[str, Any]:
    """Parse a YAML file that must hold one mapping; CatalogError (one line) otherwise."""
    raw = load_yaml(path, CatalogError)
    if not isinstance(raw, dict):
        raise CatalogError(path, "", f"expected a mapping at the top level, got {type(raw).__name__}")
    return raw


def contract_hash(raw: dict[str, Any]) -> str:
    """Canonical hash of a contract mapping: key order and float spelling do not matter."""
    return content_hash(raw)


def load_contract(path: str | Path) -> tuple[AssetContract, str]:
    """Read and validate one contract YAML; returns it and its canonical hash.

    The file name must be ``<family>__<variant>.yaml`` so that a contract is
    found from its id without scanning, and two files cannot claim one id.
    """
    path = Path(path)
    raw = read_yaml_mapping(path)
    try:
        contract = AssetContract.model_validate(raw)
    except ValidationError as exc:
        raise catalog_error(path, exc) from None
    expected = f"{contract.family}__{contract.variant}.yaml"
    if path.name != expected:
        raise CatalogError(path, "family", f"file name must be {expected!r} for family/variant of this contract")
    return contract, contract_hash(raw)


def contract_paths(contracts_dir: str | Path) -> list[Path]:
    """Contract YAMLs in a directory, sorted by name (declaration order never matters)."""
    return sorted(Path(contracts_dir).glob("*.yaml"))
