"""Procedural catalog geometry: one deterministic generator per ``generator.kind``.

Every asset is built from convex primitives (boxes, cylinders with
:data:`CYLINDER_SECTIONS` sections, icospheres with :data:`ICOSPHERE_SUBDIVISIONS`
subdivisions) grouped into the ontology parts of its family. The render mesh
is their exact boolean union (manifold3d, float64), so it is watertight and
its volume is exact; the collision pieces are the primitives themselves, so
the collider follows the render volume piece by piece — a vehicle's collider
is its body box plus four wheel cylinders, never a box through the open
space under the chassis.

Body frame: x forward, y left, z up, origin at the centre of the footprint on
the ground (z = 0 is the bottom of the wheels / feet / a raised slab's
underside; a road slab's top). All parameters are metres. No quaternions here.

Wheel names: ``fl`` = front left = (+x, +y); ``rr`` = rear right = (−x, −y).
Bump :data:`GENERATOR_VERSION` whenever a generator's output changes, so that
:func:`simready.catalog.catalog.ensure_catalog` regenerates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, cast

import manifold3d
import numpy as np
import trimesh
from numpy.typing import ArrayLike
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from simready.catalog.contract import GeneratorSpec, Mount, field_path
from simready.catalog.index import GENERATOR_VERSION  # noqa: F401  (re-exported)
from simready.catalog.meshio import to_manifold
from simready.common.errors import pydantic_reason

#: A multiple of 4, so that a cylinder has vertices exactly at its extremes
#: along both radial axes and its bounds equal its nominal radius.
CYLINDER_SECTIONS = 24
ICOSPHERE_SUBDIVISIONS = 2
#: Depth by which stacked parts interpenetrate, metres. Why: touching
#: coplanar faces are the one degenerate case of a boolean union; overlap
#: keeps the union robust and the body one connected solid.
OVERLAP_M = 0.02

Parts = dict[str, list[trimesh.Trimesh]]
#: A strictly positive length in metres (recipe parameters).
Length = Annotated[float, Field(gt=0)]


class RecipeError(ValueError):
    """A generator recipe that cannot be built; ``field`` is a path under ``generator``."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")


@dataclass(frozen=True)
class ProceduralAsset:
    """Generated geometry of one asset, body frame, metres (not yet rounded to the file grid).

    render: the watertight union of all parts; its triangles are grouped by part.
    part_ranges: ``(part, first_triangle, triangle_count)`` tiling the render triangles, in ontology part order.
    collision: convex pieces (each a closed convex mesh), in part order.
    mounts: frames the generator knows (e.g. wheel centres), merged with the contract's mounts.
    """

    render: trimesh.Trimesh
    part_ranges: tuple[tuple[str, int, int], ...]
    collision: tuple[trimesh.Trimesh, ...]
    mounts: dict[str, Mount] = field(default_factory=dict)

    def render_part(self, name: str) -> trimesh.Trimesh:
        """The render triangles of one part (vertex array shared, faces sliced)."""
        for part, first, count in self.part_ranges:
            if part == name:
                return trimesh.Trimesh(self.render.vertices, self.render.faces[first : first + count], process=False)
        raise KeyError(name)


# --- primitives -------------------------------------------------------------

#: Proper rotation taking the primitive's z axis to +y (x stays x), exact in floating point.
_Z_TO_Y = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, -1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]])


def box(lo: ArrayLike, hi: ArrayLike) -> trimesh.Trimesh:
    """Axis-aligned box from its min and max corners, metres."""
    lo_a, hi_a = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    if np.any(hi_a <= lo_a):
        raise RecipeError("params", f"empty box {lo_a.tolist()}..{hi_a.tolist()}")
    return cast(trimesh.Trimesh, trimesh.creation.box(bounds=np.stack([lo_a, hi_a])))


def cylinder_y(center: Sequence[float], radius: float, width: float) -> trimesh.Trimesh:
    """Wheel-like cylinder with its axis along y, centred at ``center``."""
    c = trimesh.creation.cylinder(radius=radius, height=width, sections=CYLINDER_SECTIONS)
    c.apply_transform(_Z_TO_Y)
    return cast(trimesh.Trimesh, c.apply_translation(center))


def cylinder_z(x: float, y: float, radius: float, z0: float, z1: float) -> trimesh.Trimesh:
    """Upright cylinder (mast, leg) from ``z0`` to ``z1``."""
    c = trimesh.creation.cylinder(radius=radius, height=z1 - z0, sections=CYLINDER_SECTIONS)
    return cast(trimesh.Trimesh, c.apply_translation([x, y, 0.5 * (z0 + z1)]))


def _unit_sphere_top() -> float:
    return float(trimesh.creation.icosphere(subdivisions=ICOSPHERE_SUBDIVISIONS).vertices[:, 2].max())


def sphere_below(x: float, top_z: float, radius: float) -> trimesh.Trimesh:
    """Icosphere whose highest vertex is exactly at ``top_z`` (a head's crown at the declared height)."""
    s = trimesh.creation.icosphere(subdivisions=ICOSPHERE_SUBDIVISIONS, radius=radius)
    return cast(trimesh.Trimesh, s.apply_translation([x, 0.0, top_z - radius * _unit_sphere_top()]))


# --- union with part tracking ---------------------------------------------


def assemble(parts: Parts, mounts: dict[str, Mount] | None = None) -> ProceduralAsset:
    """Union the parts' pieces into one render mesh whose triangles are grouped by part.

    manifold3d tags every triangle of the result with the id of the input it
    came from; that tag, not geometry, decides the part, so a triangle is
    never attributed by guesswork.
    """
    owners: dict[int, int] = {}
    solids: list[manifold3d.Manifold] = []
    for index, pieces in enumerate(parts.values()):
        for piece in pieces:
            solid = to_manifold(piece).as_original()
            owners[solid.original_id()] = index
            solids.append(solid)
    result = manifold3d.Manifold.batch_boolean(solids, manifold3d.OpType.Add).to_mesh64()
    tri = np.asarray(result.tri_verts, dtype=np.int64)
    run_index = np.asarray(result.run_index, dtype=np.int64) // 3
    part_of_tri = np.repeat([owners[int(i)] for i in result.run_original_id], np.diff(run_index))
    order = np.argsort(part_of_tri, kind="stable")
    counts = np.bincount(part_of_tri, minlength=len(parts))
    firsts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    ranges = tuple((name, int(f), int(c)) for name, f, c in zip(parts, firsts, counts, strict=True))
    render = trimesh.Trimesh(np.asarray(result.vert_properties)[:, :3], tri[order], process=False)
    collision = tuple(piece for pieces in parts.values() for piece in pieces)
    return ProceduralAsset(render, ranges, collision, dict(mounts or {}))


# --- recipes ----------------------------------------------------------------


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CabinParams(_Params):
    length: Length
    width: Length
    top: Length
    x_center: float = 0.0


class VehicleParams(_Params):
    """Body box raised by ``ground_clearance`` up to ``body_top``; wheels of ``wheel_radius``
    at x = ±wheelbase/2, y = ±track/2; optional cabin box on the body (sedan)."""

    length: Length
    width: Length
    body_top: Length
    ground_clearance: Length
    wheel_radius: Length
    wheel_width: Length
    wheelbase: Length
    track: Length
    cabin: CabinParams | None = None


def _require(ok: bool, field_name: str, reason: str) -> None:
    if not ok:
        raise RecipeError(f"params.{field_name}", reason)


def vehicle(p: VehicleParams) -> ProceduralAsset:
    """Van / sedan / shuttle. The space under the body between the wheels stays open."""
    _require(p.wheel_radius > p.ground_clearance, "wheel_radius", "wheels must reach up into the body")
    _require(2 * p.wheel_radius < p.body_top, "wheel_radius", "wheels must not stick out of the roof")
    _require(p.wheelbase / 2 + p.wheel_radius <= p.length / 2, "wheelbase", "wheels stick out of the body length")
    _require(p.track / 2 + p.wheel_width / 2 < p.width / 2, "track", "wheels stick out of the body width")
    half_l, half_w = p.length / 2, p.width / 2
    parts: Parts = {"body": [box([-half_l, -half_w, p.ground_clearance], [half_l, half_w, p.body_top])]}
    if p.cabin is not None:
        c = p.cabin
        _require(c.top > p.body_top, "cabin.top", "cabin must rise above the body")
        _require(abs(c.x_center) + c.length / 2 <= half_l and c.width <= p.width, "cabin", "cabin overhangs the body")
        lo = [c.x_center - c.length / 2, -c.width / 2, p.body_top - OVERLAP_M]
        parts["cabin"] = [box(lo, [c.x_center + c.length / 2, c.width / 2, c.top])]
    mounts: dict[str, Mount] = {}
    for name, sx, sy in (("wheel_fl", 1, 1), ("wheel_fr", 1, -1), ("wheel_rl", -1, 1), ("wheel_rr", -1, -1)):
        centre = (sx * p.wheelbase / 2, sy * p.track / 2, p.wheel_radius)
        parts[name] = [cylinder_y(centre, p.wheel_radius, p.wheel_width)]
        mounts[name] = Mount(translation_m=centre)
    return assemble(parts, mounts)


class PedestrianParams(_Params):
    """Standing person: two leg cylinders to ``hip_height``, a torso box with arm boxes
    to ``shoulder_height``, a head sphere whose crown is at ``height``."""

    height: Length
    hip_height: Length
    shoulder_height: Length
    torso_depth: Length
    torso_width: Length
    arm_width: Length
    arm_bottom: Length
    leg_radius: Length
    leg_spacing: Length
    head_radius: Length


def pedestrian(p: PedestrianParams) -> ProceduralAsset:
    _require(p.hip_height < p.shoulder_height < p.height, "shoulder_height", "need hip < shoulder < height")
    _require(p.leg_spacing / 2 + p.leg_radius <= p.torso_width / 2, "leg_spacing", "legs stick out of the torso")
    head_bottom = p.height - p.head_radius * 2 * _unit_sphere_top()
    _require(head_bottom < p.shoulder_height, "head_radius", "head does not reach down to the torso")
    half_d, half_w = p.torso_depth / 2, p.torso_width / 2
    legs = [cylinder_z(0.0, s * p.leg_spacing / 2, p.leg_radius, 0.0, p.hip_height) for s in (1, -1)]
    torso = [box([-half_d, -half_w, p.hip_height - OVERLAP_M], [half_d, half_w, p.shoulder_height])]
    for s in (1, -1):
        inner, outer = half_w - OVERLAP_M, half_w + p.arm_width - OVERLAP_M
        y0, y1 = sorted((s * inner, s * outer))
        torso.append(box([-p.arm_width / 2, y0, p.arm_bottom], [p.arm_width / 2, y1, p.shoulder_height - OVERLAP_M]))
    return assemble({"legs": legs, "torso": torso, "head": [sphere_below(0.0, p.height, p.head_radius)]})


class CyclistParams(_Params):
    """Bicycle (two wheels on a frame) and a seated rider leaning to the handlebar.

    x runs from the rear tyre (−wheelbase/2 − wheel_radius) to the front tyre.
    """

    wheel_radius: Length
    wheel_width: Length
    wheelbase: Length
    tube: Length
    saddle_height: Length
    handlebar_height: Length
    handlebar_width: Length
    rider_height: Length
    shoulder_width: Length
    head_radius: Length
    pedal_height: Length


def cyclist(p: CyclistParams) -> ProceduralAsset:
    _require(p.saddle_height > 2 * p.wheel_radius, "saddle_height", "saddle must be above the wheels")
    _require(p.rider_height - p.head_radius * 2 > p.handlebar_height, "rider_height", "rider must sit above the bars")
    r, t, hb = p.wheel_radius, p.tube / 2, p.wheelbase / 2
    x_seat, x_steer = -0.3 * hb, 0.7 * hb
    shoulder_z = p.rider_height - 2 * p.head_radius * _unit_sphere_top() + OVERLAP_M
    bicycle = [
        cylinder_y((-hb, 0.0, r), r, p.wheel_width),
        cylinder_y((hb, 0.0, r), r, p.wheel_width),
        box([-hb, -t, r - t], [hb, t, r + t]),  # stays and down tube through both hubs
        box([x_seat - t, -t, r], [x_seat + t, t, p.saddle_height]),  # seat tube
        box([x_steer - t, -t, r], [x_steer + t, t, p.handlebar_height]),  # steerer and fork
        box([x_seat, -t, p.saddle_height - 4 * t], [x_steer, t, p.saddle_height - 2 * t]),  # top tube
        box([x_steer - t, -p.handlebar_width / 2, p.handlebar_height - 2 * t], [x_steer + t, p.handlebar_width / 2, p.handlebar_height]),
        box([x_seat - 0.12, -0.08, p.saddle_height - 2 * t], [x_seat + 0.08, 0.08, p.saddle_height]),  # saddle
    ]
    half_s = p.shoulder_width / 2
    rider = [
        box([x_seat - 0.1, -0.15, p.pedal_height], [x_seat + 0.3, 0.15, p.saddle_height + OVERLAP_M]),  # legs
        box([x_seat - 0.15, -half_s, p.saddle_height], [x_seat + 0.15, half_s, shoulder_z]),  # torso
        box([x_seat, -half_s, p.handlebar_height - OVERLAP_M], [x_steer, half_s, p.handlebar_height + 4 * t]),  # arms
        sphere_below(x_seat, p.rider_height, p.head_radius),
    ]
    return assemble({"bicycle": bicycle, "rider": rider})


class SlabParams(_Params):
    """One box ``length`` (x) × ``width`` (y) from ``z_min`` to ``z_max``: road, sidewalk, curb, building."""

    part: str
    length: Length
    width: Length
    z_min: float
    z_max: float


def slab(p: SlabParams) -> ProceduralAsset:
    _require(p.z_max > p.z_min, "z_max", "z_max must exceed z_min")
    return assemble({p.part: [box([-p.length / 2, -p.width / 2, p.z_min], [p.length / 2, p.width / 2, p.z_max])]})


class StripesParams(_Params):
    """Zebra marking: ``stripe_count`` bars, each ``length`` along x and ``stripe_width`` along y,
    spread evenly over ``width`` along y (outer bars flush with its edges), ``thickness`` tall."""

    part: str
    length: Length
    width: Length
    thickness: Length
    stripe_count: int = Field(ge=2)
    stripe_width: Length


def stripes(p: StripesParams) -> ProceduralAsset:
    _require(p.stripe_count * p.stripe_width < p.width, "stripe_width", "stripes leave no gaps")
    pitch = (p.width - p.stripe_width) / (p.stripe_count - 1)
    bars = []
    for k in range(p.stripe_count):
        y0 = -p.width / 2 + k * pitch
        bars.append(box([-p.length / 2, y0, 0.0], [p.length / 2, y0 + p.stripe_width, p.thickness]))
    return assemble({p.part: bars})


class TopBoxParams(_Params):
    part: str
    size_m: tuple[float, float, float]
    center_m: tuple[float, float, float]


class PoleParams(_Params):
    """Upright mast cylinder on the origin plus one box on top (lamp arm, signal head)."""

    mast_radius: Length
    mast_height: Length
    top: TopBoxParams


def pole(p: PoleParams) -> ProceduralAsset:
    lo = np.subtract(p.top.center_m, np.multiply(p.top.size_m, 0.5))
    hi = np.add(p.top.center_m, np.multiply(p.top.size_m, 0.5))
    _require(bool(np.all(lo[:2] < 0.0) and np.all(hi[:2] > 0.0)), "top.center_m", "top box must sit on the mast axis")
    _require(lo[2] < p.mast_height < hi[2], "top", "top box must enclose the mast's upper end")
    mast = [cylinder_z(0.0, 0.0, p.mast_radius, 0.0, p.mast_height)]
    return assemble({"mast": mast, p.top.part: [box(lo, hi)]})


@dataclass(frozen=True)
class _Recipe:
    params: type[_Params]
    build: Callable[..., ProceduralAsset]


RECIPES: dict[str, _Recipe] = {
    "vehicle": _Recipe(VehicleParams, vehicle),
    "pedestrian": _Recipe(PedestrianParams, pedestrian),
    "cyclist": _Recipe(CyclistParams, cyclist),
    "slab": _Recipe(SlabParams, slab),
    "stripes": _Recipe(StripesParams, stripes),
    "pole": _Recipe(PoleParams, pole),
}


def build(spec: GeneratorSpec) -> ProceduralAsset:
    """Run the generator a contract names; RecipeError (field under ``generator``) if it cannot."""
    recipe = RECIPES.get(spec.kind)
    if recipe is None:
        raise RecipeError("kind", f"unknown generator kind {spec.kind!r}; known: {', '.join(sorted(RECIPES))}")
    try:
        params = recipe.params.model_validate(spec.params)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise RecipeError(f"params.{field_path(tuple(first['loc']))}", pydantic_reason(first)) from None
    return recipe.build(params)
