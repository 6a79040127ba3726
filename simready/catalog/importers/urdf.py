"""URDF: each link with visual geometry is a part; its ``<collision>`` geometry is the source collider;
its ``<inertial>`` elements, combined, are the source's mass properties.

URDF declares its conventions by specification (ROS REP 103): metres, z up,
x forward. The pose of each link is the product of its joints' origins from
the root link at zero joint position (``T_root_child = T_root_parent @
T_joint``); a visual or collision's ``<origin>`` and its ``<mesh scale>``
follow (a non-uniform scale is frozen into the vertices). Roll/pitch/yaw are
fixed-axis x, y, z (``R = Rz(yaw) Ry(pitch) Rx(roll)``), as URDF defines them.

Mesh files (OBJ, STL, COLLADA) are read in the link frame in metres; a
COLLADA file's ``<unit>`` is applied (as ROS tools do), its ``<up_axis>`` is
not (the link frame decides orientation). Box, cylinder and sphere
primitives become closed meshes. A collision mesh with several connected
bodies (a VHACD output) gives one collider piece per body, as PyBullet
loads it. A ``<visual>`` or ``<collision>`` without geometry is an error; a
link with neither (a frame or an inertia holder) is allowed.

Repairs (``--repair``, each recorded; without it, a refusal that says so): vector attributes written with
commas (``xyz="0.07, 0, -0.69"``) are read with the commas as separators; xacro substitutions a file was
published with unexpanded take their defaults (``$(optenv NAME default)``, ``$(arg NAME)`` with an
``<xacro:arg default>``; any other substitution is refused naming it); a ``<visual>`` or ``<collision>``
whose ``<geometry>`` is empty is dropped, and its link kept as a frame.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import trimesh
from numpy.typing import NDArray

from simready.catalog.importers.conventions import Declared
from simready.catalog.importers.meshfiles import read_mesh_file
from simready.catalog.importers.source import (
    SourceInertial,
    SourcePart,
    SourceScene,
    clean_part_name,
    first_line,
    repair_log,
    unique_names,
)
from simready.common.errors import CatalogError
from simready.common.identifiers import confine

URDF_DECLARED = Declared(meters_per_unit=1.0, up="z", forward="x", by="URDF (ROS REP 103)")
MESH_SUFFIXES = (".obj", ".stl", ".dae")
#: Sections of a cylinder primitive and subdivisions of a sphere primitive (as the procedural generator uses).
CYLINDER_SECTIONS = 24
SPHERE_SUBDIVISIONS = 2

Geometry = tuple[NDArray[np.float64], NDArray[np.int64]]


def _floats(el: ET.Element | None, attr: str, n: int, default: str, source: Path, field: str) -> NDArray[np.float64]:
    text = el.get(attr, default) if el is not None else default
    if "," in text:
        fixed = " ".join(text.replace(",", " ").split())
        repair_log().fix(source, field, "vector separators", text, fixed, f"{text!r} separates its numbers with commas",
                         "read the commas as spaces")
        text = fixed
    try:
        values = np.asarray([float(t) for t in text.split()], dtype=np.float64)
    except ValueError:
        raise CatalogError(source, field, f"{text!r} is not {n} numbers") from None
    if values.shape != (n,) or not np.isfinite(values).all():
        raise CatalogError(source, field, f"{text!r} is not {n} finite numbers")
    return values


def _origin(el: ET.Element, source: Path, field: str) -> NDArray[np.float64]:
    """4×4 of an element's ``<origin xyz rpy>`` (identity when absent)."""
    origin = el.find("origin")
    xyz = _floats(origin, "xyz", 3, "0 0 0", source, f"{field}.origin.xyz")
    rpy = _floats(origin, "rpy", 3, "0 0 0", source, f"{field}.origin.rpy")
    t: NDArray[np.float64] = trimesh.transformations.euler_matrix(*rpy, axes="sxyz")  # type: ignore[misc, no-untyped-call]
    t[:3, 3] = xyz
    return t


def _mesh_path(urdf: Path, filename: str, field: str) -> Path:
    name = filename.strip()
    if name.startswith("package://"):
        name = name[len("package://"):].split("/", 1)[-1]
    name = name.removeprefix("file://")
    path = confine(urdf.parent, name, urdf, field, CatalogError)
    if not path.is_file():
        raise CatalogError(urdf, field, f"{filename!r} is missing")
    if path.suffix.lower() not in MESH_SUFFIXES:
        raise CatalogError(urdf, field, f"{filename!r}: mesh format {path.suffix} is not supported in URDF ({', '.join(MESH_SUFFIXES)})")
    return path


def _geometry(el: ET.Element, urdf: Path, field: str, files: list[Path]) -> list[Geometry]:
    """The geometry of a ``<visual>``/``<collision>`` in its own frame, metres, as (vertices, faces) bodies."""
    geometry = el.find("geometry")
    shape = next(iter(geometry), None) if geometry is not None else None
    if shape is None:
        repair_log().fix(urdf, f"{field}.geometry", "element without geometry", f"<{el.tag}> without a geometry",
                         "dropped; its link kept as a frame", f"missing: every <{el.tag}> needs a geometry",
                         f"drop the <{el.tag}> and keep its link as a frame")
        return []
    where = f"{field}.geometry.{shape.tag}"
    if shape.tag == "mesh":
        path = _mesh_path(urdf, shape.get("filename", ""), f"{where}.filename")
        scale = _floats(shape, "scale", 3, "1 1 1", urdf, f"{where}.scale")
        mesh = read_mesh_file(path)
        files.extend(mesh.files)
        unit = mesh.declared.meters_per_unit or 1.0
        out = []
        for part in mesh.parts:
            faces = part.faces[:, ::-1] if np.prod(np.sign(scale)) < 0 else part.faces
            out.append((part.vertices * unit * scale, faces))
        return out
    if shape.tag == "box":
        m = trimesh.creation.box(extents=_floats(shape, "size", 3, "", urdf, f"{where}.size"))
    elif shape.tag == "cylinder":
        radius = _floats(shape, "radius", 1, "", urdf, f"{where}.radius")[0]
        length = _floats(shape, "length", 1, "", urdf, f"{where}.length")[0]
        m = trimesh.creation.cylinder(radius=radius, height=length, sections=CYLINDER_SECTIONS)
    elif shape.tag == "sphere":
        radius = _floats(shape, "radius", 1, "", urdf, f"{where}.radius")[0]
        m = trimesh.creation.icosphere(subdivisions=SPHERE_SUBDIVISIONS, radius=radius)
    else:
        raise CatalogError(urdf, where, f"geometry <{shape.tag}> is not supported (mesh, box, cylinder, sphere)")
    return [(np.asarray(m.vertices, dtype=np.float64), np.asarray(m.faces, dtype=np.int64))]


def _place(t: NDArray[np.float64], bodies: list[Geometry]) -> list[Geometry]:
    return [(trimesh.transform_points(v, t), f) for v, f in bodies]


def _link_poses(robot: ET.Element, links: dict[str, ET.Element], urdf: Path) -> dict[str, NDArray[np.float64]]:
    """``T_root_link`` of every link at zero joint position."""
    joints: dict[str, tuple[str, NDArray[np.float64]]] = {}
    for i, joint in enumerate(robot.findall("joint")):
        field = f"joint[{joint.get('name', i)}]"
        parent, child = joint.find("parent"), joint.find("child")
        if parent is None or child is None or parent.get("link") not in links or child.get("link") not in links:
            raise CatalogError(urdf, field, "parent and child must name links of this robot")
        joints[child.get("link", "")] = (parent.get("link", ""), _origin(joint, urdf, field))
    roots = sorted(set(links) - set(joints))
    if len(roots) != 1:
        raise CatalogError(urdf, "joint", f"links must form one tree; roots {roots}")
    poses: dict[str, NDArray[np.float64]] = {roots[0]: np.eye(4)}

    def pose(name: str, depth: int = 0) -> NDArray[np.float64]:
        if name not in poses:
            if depth > len(links):
                raise CatalogError(urdf, f"joint[{name}]", "joints form a cycle")
            parent, t = joints[name]
            poses[name] = pose(parent, depth + 1) @ t
        return poses[name]

    for name in sorted(links):
        pose(name)
    return poses


def _inertial(links: dict[str, ET.Element], poses: dict[str, NDArray[np.float64]], urdf: Path) -> SourceInertial | None:
    """All links' ``<inertial>`` combined about the total centre of mass (parallel-axis theorem), root frame."""
    masses, coms, tensors = [], [], []
    for name in sorted(links):
        el = links[name].find("inertial")
        if el is None:
            continue
        field = f"link[{name}].inertial"
        mass = _floats(el.find("mass"), "value", 1, "", urdf, f"{field}.mass.value")[0]
        if mass < 0:
            raise CatalogError(urdf, f"{field}.mass.value", f"{mass:g} is negative")
        t = poses[name] @ _origin(el, urdf, field)
        i = el.find("inertia")
        if i is None:
            raise CatalogError(urdf, f"{field}.inertia", "missing")
        v = {k: _floats(i, k, 1, "0", urdf, f"{field}.inertia.{k}")[0] for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        local = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]], [v["ixz"], v["iyz"], v["izz"]]])
        masses.append(mass)
        coms.append(t[:3, 3])
        tensors.append(t[:3, :3] @ local @ t[:3, :3].T)
    total = float(sum(masses))
    if total <= 0.0:
        return None
    com = sum(m * c for m, c in zip(masses, coms, strict=True)) / total
    inertia = np.zeros((3, 3))
    for m, c, tensor in zip(masses, coms, tensors, strict=True):
        d = c - com
        inertia += tensor + m * (float(d @ d) * np.eye(3) - np.outer(d, d))
    return SourceInertial(total, np.asarray(com, dtype=np.float64), inertia)


RGBA = tuple[float, float, float, float]


def _materials(robot: ET.Element, urdf: Path) -> dict[str, RGBA]:
    """Materials the robot defines by name (a visual may refer to one by name only)."""
    out = {}
    for m in robot.findall("material"):
        color = m.find("color")
        if m.get("name") and color is not None:
            rgba = _floats(color, "rgba", 4, "", urdf, f"material[{m.get('name')}].color.rgba")
            out[m.get("name", "")] = tuple(float(c) for c in rgba)
    return out  # type: ignore[return-value]


def _rgba(visual: ET.Element, named: dict[str, RGBA], urdf: Path, field: str) -> RGBA | None:
    material = visual.find("material")
    if material is None:
        return None
    color = material.find("color")
    if color is None:
        return named.get(material.get("name", ""))
    return tuple(float(c) for c in _floats(color, "rgba", 4, "", urdf, f"{field}.material.color.rgba"))  # type: ignore[return-value]


def _contact_value(links: dict[str, ET.Element], tag: str, urdf: Path) -> float | None:
    """A link's ``<contact><tag value>`` (the first link by name that states it)."""
    for name in sorted(links):
        el = links[name].find(f"contact/{tag}")
        if el is not None and el.get("value") is not None:
            return float(_floats(el, "value", 1, "", urdf, f"link[{name}].contact.{tag}.value")[0])
    return None


_SUBSTITUTION = re.compile(r"\$\(([^()]*)\)|\$\{([^{}]*)\}")


def _xacro_args(robot: ET.Element) -> dict[str, str]:
    """``<xacro:arg name default>`` declarations (namespaced or not) by name."""
    return {el.get("name", ""): el.get("default", "") for el in robot.iter()
            if isinstance(el.tag, str) and el.tag.rsplit("}", 1)[-1].removeprefix("xacro:") == "arg"
            and el.get("name") and el.get("default") is not None}


def _expand_xacro(robot: ET.Element, urdf: Path) -> None:
    """Substitutions a xacro file leaves when published unexpanded, replaced by their defaults (``--repair``)."""
    args = _xacro_args(robot)
    for el in robot.iter():
        for attr, value in sorted(el.attrib.items()):
            if "$" not in value or not _SUBSTITUTION.search(value):
                continue
            field = f"<{el.tag.rsplit('}', 1)[-1]} name={el.get('name')!r}>.{attr}" if el.get("name") else \
                f"<{el.tag.rsplit('}', 1)[-1]}>.{attr}"

            def default(m: re.Match[str], value: str = value, field: str = field) -> str:
                words = (m.group(1) or "").split()
                if m.group(1) is not None and len(words) >= 3 and words[0] == "optenv":
                    return " ".join(words[2:])
                if m.group(1) is not None and len(words) == 2 and words[0] == "arg" and words[1] in args:
                    return args[words[1]]
                raise CatalogError(urdf, field, f"xacro substitution {m.group(0)!r} has no default to take; expand the "
                                   "file with xacro first")

            fixed = _SUBSTITUTION.sub(default, value)
            repair_log().fix(urdf, field, "xacro substitution", value, fixed,
                             f"{value!r} is an unexpanded xacro substitution", "take its default")
            el.set(attr, fixed)


def read_urdf(urdf: Path) -> SourceScene:
    """Parts (one per link with visuals), source collider, combined inertial, friction and restitution."""
    try:
        robot = ET.parse(urdf).getroot()
    except ET.ParseError as exc:
        raise CatalogError(urdf, "", f"cannot be read as URDF (XML): {first_line(exc)}") from None
    _expand_xacro(robot, urdf)
    if robot.tag != "robot":
        raise CatalogError(urdf, "", f"root element is <{robot.tag}>, not <robot>")
    links: dict[str, ET.Element] = {}
    for i, link in enumerate(robot.findall("link")):
        name = link.get("name")
        if not name or name in links:
            raise CatalogError(urdf, f"link[{i}].name", f"{name!r} is empty or repeated")
        links[name] = link
    if not links:
        raise CatalogError(urdf, "link", "the robot has no links")
    poses = _link_poses(robot, links, urdf)
    named = _materials(robot, urdf)
    files: list[Path] = [urdf]
    parts: list[SourcePart] = []
    collision: list[NDArray[np.float64]] = []
    frames: dict[str, NDArray[np.float64]] = {}
    for name in sorted(links):
        link, t_link = links[name], poses[name]
        bodies: list[Geometry] = []
        rgba = None
        for i, visual in enumerate(link.findall("visual")):
            field = f"link[{name}].visual[{i}]"
            bodies += _place(t_link @ _origin(visual, urdf, field), _geometry(visual, urdf, field, files))
            rgba = rgba or _rgba(visual, named, urdf, field)
        if bodies:
            vertices = np.concatenate([v for v, _ in bodies])
            offsets = np.cumsum([0] + [len(v) for v, _ in bodies[:-1]])
            faces = np.concatenate([f + o for (_, f), o in zip(bodies, offsets, strict=True)])
            parts.append(SourcePart(clean_part_name(name), vertices, faces, rgba))
        had_collision = False
        for i, col in enumerate(link.findall("collision")):
            field = f"link[{name}].collision[{i}]"
            for v, f in _place(t_link @ _origin(col, urdf, field), _geometry(col, urdf, field, files)):
                had_collision = True
                mesh = trimesh.Trimesh(v, f, process=False)
                mesh.merge_vertices()  # connectivity by position: an OBJ repeats vertices per face corner
                collision += [np.asarray(body.vertices) for body in mesh.split(only_watertight=False)]
        if not bodies and not had_collision:
            frames[name] = t_link
    if not parts:
        raise CatalogError(urdf, "link", "no link has a <visual>: nothing to render")
    return SourceScene(
        parts=unique_names(parts, urdf),
        declared=URDF_DECLARED,
        files=sorted(set(files), key=lambda p: (p != urdf, str(p))),
        collision=collision or None,
        inertial=_inertial(links, poses, urdf),
        friction=_contact_value(links, "lateral_friction", urdf),
        restitution=_contact_value(links, "restitution", urdf),
        frames=frames,
    )
