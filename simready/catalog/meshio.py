"""Deterministic mesh files and the measurements made on them.

Why hand-written: the content hash of a geometry file pins its vertex and
triangle order (SPEC §4, §11 refers to triangles by index in source order),
so the bytes must depend on nothing but the geometry — no library banners,
timestamps, float spellings that vary by version, or reordering on load.

OBJ layout written here (and the only layout :func:`parse_obj` accepts):

* every ``v x y z`` line first, coordinates in metres with ``%.6f``
  (1 µm; −0.000000 never appears),
* then the faces ``f a b c`` (1-based, counter-clockwise seen from outside),
  in source order; when the mesh has parts, each part's faces follow one
  ``o <part>`` line, parts in the order of the ontology's part list.

Measurements (volume, centre of mass, inertia, collider unions) are taken on
arrays parsed back from the file text, so what certification checks is
exactly what is on disk. Units: metres, kilograms, kg·m², body frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import manifold3d
import numpy as np
import trimesh
from numpy.typing import NDArray

if TYPE_CHECKING:
    from simready.catalog.contract import SourceInertialRecord

DECIMALS = 6
_FMT = "%.6f"


@dataclass(frozen=True)
class ObjMesh:
    """Triangle mesh as stored: (N, 3) float64 vertices [m], (M, 3) int faces (0-based),
    and ``groups`` as ``(name, first_triangle, triangle_count)`` in file order."""

    vertices: NDArray[np.float64]
    faces: NDArray[np.int64]
    groups: tuple[tuple[str, int, int], ...] = ()

    def trimesh(self) -> trimesh.Trimesh:
        """As a trimesh with vertex and face order preserved (``process=False``)."""
        return trimesh.Trimesh(vertices=self.vertices, faces=self.faces, process=False)


def round_vertices(vertices: NDArray[np.float64]) -> NDArray[np.float64]:
    """Round to the file's 1 µm grid; ``+ 0.0`` turns −0.0 into 0.0 so it prints without a sign."""
    return np.round(np.asarray(vertices, dtype=np.float64), DECIMALS) + 0.0  # type: ignore[return-value]  # float64 + float


def obj_text(vertices: NDArray[np.float64], faces: NDArray[np.int64], groups: Sequence[tuple[str, int, int]] = ()) -> str:
    """OBJ text in the layout of the module docstring; ``groups`` must tile the faces in order."""
    v = round_vertices(vertices)
    lines = [f"v {_FMT % x} {_FMT % y} {_FMT % z}" for x, y, z in v.tolist()]
    face_lines = [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in np.asarray(faces, dtype=np.int64).tolist()]
    if not groups:
        lines.extend(face_lines)
    else:
        _check_tiling(groups, len(face_lines))
        for name, first, count in groups:
            lines.append(f"o {name}")
            lines.extend(face_lines[first : first + count])
    return "\n".join(lines) + "\n"


def _check_tiling(groups: Sequence[tuple[str, int, int]], n_faces: int) -> None:
    cursor = 0
    for name, first, count in groups:
        if first != cursor:
            raise ValueError(f"part {name!r} starts at triangle {first}, expected {cursor}")
        cursor += count
    if cursor != n_faces:
        raise ValueError(f"parts cover {cursor} triangles of {n_faces}")


def parse_obj(text: str) -> ObjMesh:
    """Parse the OBJ subset :func:`obj_text` writes (``v``, triangular ``f``, ``o``)."""
    verts: list[list[float]] = []
    faces: list[list[int]] = []
    starts: list[tuple[str, int]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        tag, _, rest = line.partition(" ")
        if tag == "v":
            verts.append([float(t) for t in rest.split()])
        elif tag == "f":
            faces.append([int(t.split("/")[0]) - 1 for t in rest.split()])
        elif tag == "o":
            starts.append((rest.strip(), len(faces)))
        elif tag and not tag.startswith("#"):
            raise ValueError(f"line {number}: unsupported OBJ statement {tag!r}")
    if any(len(f) != 3 for f in faces):
        raise ValueError("faces must all be triangles")
    ends = [first for _, first in starts[1:]] + [len(faces)] if starts else []
    groups = tuple((name, first, end - first) for (name, first), end in zip(starts, ends, strict=True))
    v = np.asarray(verts, dtype=np.float64).reshape(-1, 3)
    return ObjMesh(v, np.asarray(faces, dtype=np.int64).reshape(-1, 3), groups)


def read_obj(path: str | Path) -> ObjMesh:
    return parse_obj(Path(path).read_text(encoding="utf-8"))


# --- measurements -----------------------------------------------------------


@dataclass(frozen=True)
class MassProperties:
    """Uniform-density mass properties of a closed mesh.

    volume_m3: enclosed volume. center_of_mass_m: (3,) body frame.
    inertia_kg_m2: (3, 3) about the centre of mass, body axes; zero when mass is 0
    (a static slab that never moves has no inertia to simulate).
    """

    volume_m3: float
    center_of_mass_m: NDArray[np.float64]
    inertia_kg_m2: NDArray[np.float64]


def mass_properties(mesh: ObjMesh, mass_kg: float) -> MassProperties:
    """Volume, COM and inertia of ``mesh`` filled uniformly with ``mass_kg`` (density = m / V)."""
    triangles = mesh.vertices[mesh.faces]
    unit = trimesh.triangles.mass_properties(triangles, density=1.0)
    volume = float(unit.volume)
    if volume <= 0.0:
        raise ValueError(f"mesh encloses no positive volume ({volume:g} m³)")
    inertia = np.asarray(unit.inertia, dtype=np.float64) * (mass_kg / volume)
    return MassProperties(volume, np.asarray(unit.center_mass, dtype=np.float64) + 0.0, inertia + 0.0)


def to_manifold(mesh: ObjMesh | trimesh.Trimesh) -> manifold3d.Manifold:
    """Exact-precision (float64) manifold of a closed mesh; ValueError if it is not one."""
    m = manifold3d.Manifold(
        manifold3d.Mesh64(
            vert_properties=np.ascontiguousarray(mesh.vertices, dtype=np.float64),
            tri_verts=np.ascontiguousarray(mesh.faces, dtype=np.uint32),
        )
    )
    if m.status() != manifold3d.Error.NoError:
        raise ValueError(f"mesh is not a closed 2-manifold ({m.status()})")
    return m


def union(meshes: Sequence[ObjMesh | trimesh.Trimesh]) -> manifold3d.Manifold:
    return manifold3d.Manifold.batch_boolean([to_manifold(m) for m in meshes], manifold3d.OpType.Add)


def component_union(meshes: Sequence[ObjMesh | trimesh.Trimesh]) -> manifold3d.Manifold:
    """Union of every connected body of the meshes, so that closed bodies overlapping inside one mesh (an
    imported part's shells, a VHACD hull set) count once; ValueError when a body is not closed."""
    solids = []
    for mesh in meshes:
        whole = trimesh.Trimesh(vertices=mesh.vertices, faces=mesh.faces, process=False)
        solids += [to_manifold(body) for body in whole.split(only_watertight=False)]
    return manifold3d.Manifold.batch_boolean(solids, manifold3d.OpType.Add)


def manifold_mesh(solid: manifold3d.Manifold) -> ObjMesh:
    """A manifold's triangles as an :class:`ObjMesh` (what mass properties are measured on)."""
    mesh = solid.to_mesh64()
    return ObjMesh(np.asarray(mesh.vert_properties, dtype=np.float64)[:, :3], np.asarray(mesh.tri_verts, dtype=np.int64))


def excess_and_deficit_m3(render: ObjMesh | manifold3d.Manifold, pieces: Sequence[ObjMesh]) -> tuple[float, float]:
    """Volume the colliders add outside the render volume, and render volume they leave uncovered.

    Why not just compare totals: a box through the open space under a chassis
    and a missing wheel could cancel in the total; neither cancels here.
    """
    r = render if isinstance(render, manifold3d.Manifold) else to_manifold(render)
    c = union(pieces)
    return float((c - r).volume()), float((r - c).volume())


def bounds(meshes: Sequence[ObjMesh]) -> NDArray[np.float64]:
    """(2, 3) axis-aligned bounds [[min xyz], [max xyz]] of all vertices, metres."""
    allv = np.concatenate([m.vertices for m in meshes], axis=0)
    return np.stack([allv.min(axis=0), allv.max(axis=0)])


# --- URDF ---------------------------------------------------------------------


def _num(x: float) -> str:
    """Shortest round-trip spelling of a float; ints print without a fraction."""
    x = float(x) + 0.0
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


def _nums(xs: Sequence[float]) -> str:
    return " ".join(_num(x) for x in xs)


@dataclass(frozen=True)
class UrdfSpec:
    """Everything a single-link URDF states; SI units, body frame.

    inertia_kg_m2 is about ``center_of_mass_m`` in body axes (the inertial
    origin has rpy 0). ``collision_files`` are the convex pieces, one
    ``<collision>`` each; ``visual_file`` is the render mesh.
    """

    name: str
    mass_kg: float
    center_of_mass_m: Sequence[float]
    inertia_kg_m2: Sequence[Sequence[float]]
    friction: float
    restitution: float
    albedo_rgb: Sequence[float]
    visual_file: str
    collision_files: Sequence[str]


def urdf_text(spec: UrdfSpec) -> str:
    """Deterministic URDF text for :class:`UrdfSpec` (pybullet: load with URDF_USE_INERTIA_FROM_FILE)."""
    i = spec.inertia_kg_m2
    lines = [
        '<?xml version="1.0"?>',
        f'<robot name="{spec.name}">',
        '  <link name="base_link">',
        "    <contact>",
        f'      <lateral_friction value="{_num(spec.friction)}"/>',
        f'      <restitution value="{_num(spec.restitution)}"/>',
        "    </contact>",
        "    <inertial>",
        f'      <origin xyz="{_nums(spec.center_of_mass_m)}" rpy="0 0 0"/>',
        f'      <mass value="{_num(spec.mass_kg)}"/>',
        f'      <inertia ixx="{_num(i[0][0])}" ixy="{_num(i[0][1])}" ixz="{_num(i[0][2])}"'
        f' iyy="{_num(i[1][1])}" iyz="{_num(i[1][2])}" izz="{_num(i[2][2])}"/>',
        "    </inertial>",
        "    <visual>",
        '      <origin xyz="0 0 0" rpy="0 0 0"/>',
        f'      <geometry><mesh filename="{spec.visual_file}" scale="1 1 1"/></geometry>',
        f'      <material name="albedo"><color rgba="{_nums(spec.albedo_rgb)} 1"/></material>',
        "    </visual>",
    ]
    for f in spec.collision_files:
        lines += [
            "    <collision>",
            '      <origin xyz="0 0 0" rpy="0 0 0"/>',
            f'      <geometry><mesh filename="{f}" scale="1 1 1"/></geometry>',
            "    </collision>",
        ]
    lines += ["  </link>", "</robot>"]
    return "\n".join(lines) + "\n"


#: A source's own inertia (URDF) against the geometry's for the same mass: loose, since an author may model
#: a non-uniform body; what it catches is a placeholder tensor or a unit error (10 000× in cm²).
SOURCE_INERTIA_REL_TOL = 0.5
#: A source's own centre of mass within this fraction of the bounding-box diagonal of the geometry's.
SOURCE_COM_REL_TOL = 0.1


def source_inertia_problems(src: SourceInertialRecord, basis: ObjMesh, size_m: float) -> list[str]:
    """Where a source's ``<inertial>`` disagrees with its geometry filled with the same mass (``basis``: the
    collider's union; ``size_m``: the render's bounding-box diagonal): the rule ``source_inertia``, and what
    ``--repair`` replaces."""
    props = mass_properties(basis, src.mass_kg)
    declared = np.asarray(src.inertia_kg_m2, dtype=np.float64)
    expected = props.inertia_kg_m2
    err = float(np.linalg.norm(declared - expected) / np.linalg.norm(expected))
    out = []
    if err > SOURCE_INERTIA_REL_TOL:
        out.append(
            f"source <inertial> off by {err:.0%} (Frobenius, tolerance {SOURCE_INERTIA_REL_TOL:.0%}) from its "
            f"{src.mass_kg:g} kg over the collider: diagonal {np.round(np.diag(declared), 6).tolist()} vs "
            f"{np.round(np.diag(expected), 6).tolist()} kg·m²")
    com_err = float(np.linalg.norm(np.subtract(src.center_of_mass_m, props.center_of_mass_m)))
    if com_err > SOURCE_COM_REL_TOL * size_m:
        out.append(f"source <inertial> centre of mass {list(src.center_of_mass_m)} m is {com_err:.3f} m from the "
                   f"geometry's {np.round(props.center_of_mass_m, 4).tolist()} m (tolerance {SOURCE_COM_REL_TOL:.0%} "
                   f"of the {size_m:.3f} m diagonal)")
    return out
