"""From a source scene to catalog geometry: one conversion, frozen into integer micrometres; parts; colliders.

Steps, each deterministic:

1. :func:`~simready.catalog.importers.conventions.resolve` the file's
   declarations with the flags (a contradiction is an error).
2. Rotate and scale every vertex (``R · S``, exact axis changes) and round to
   the catalog's 1 µm file grid *as integers*, so that the same geometry from
   a float32 file (glTF) and a float64 one (OBJ) lands on the same grid points.
3. Merge vertices that share a grid point within a part (UV and normal seams
   split vertices in most formats; the render file keeps positions only), in
   first-use order, and drop triangles that became degenerate (recorded).
4. Translate so that the footprint's centre is at the origin and the lowest
   point at z = 0 (our body frame), an integer number of micrometres; the
   record's 4×4 conversion is ``T · R · S``.
5. Colliders: the source's own collision pieces (URDF ``<collision>``) when it
   has them, or a convex decomposition of the render mesh; each piece is the
   convex hull of its grid points (its vertices are grid points, so the file
   holds exactly a convex piece).

With ``--repair`` (:attr:`ImportOptions.repair`; issue 30), each repair is recorded in ``import.repairs``:
an open or non-manifold part is measured on a watertight solid
(:mod:`~simready.catalog.importers.closing`; render.obj stays as drawn, the
solid is volume.obj); a collider outside the certification tolerance
(:data:`~simready.catalog.certification.policy.COLLIDER_VOLUME_REL_TOL`) is decomposed
again with the threshold halved, at most :data:`MAX_DECOMPOSE_RETRIES`
times (a source collider outside it is replaced by a decomposition); source
inertias the geometry contradicts, and a source mass ``--mass-kg``
contradicts, are replaced by the geometry's at the entry's mass; links
without geometry become ``frame_<link>`` mounts.

Parts are in identifier order (see :mod:`simready.catalog.importers.source`),
so a source whose nodes are reordered gives the same files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import manifold3d
import numpy as np
import trimesh
from numpy.typing import NDArray
from scipy.spatial import QhullError

from simready.catalog.contract import ColliderRecord, Convention, ImportRecord, Mount, SourceInertialRecord
from simready.catalog.importers.closing import close
from simready.catalog.importers.conventions import Applied, Flags, conversion_matrix, resolve, rotation, unit_name
from simready.catalog.importers.decompose import DEFAULT_THRESHOLD, MAX_PIECES, Decomposition, decompose
from simready.catalog.importers.source import RepairLog, SourceScene
from simready.catalog.meshio import (
    ObjMesh,
    component_union,
    excess_and_deficit_m3,
    manifold_mesh,
    mass_properties,
    source_inertia_problems,
    to_manifold,
)
from simready.common.errors import CatalogError
from simready.common.hashing import content_hash, file_sha256

UM_PER_M = 1_000_000
COLLIDER_CHOICES = ("auto", "source", "decompose")
#: Decompositions after the first, before a collider outside the certification tolerance is left to
#: certification to refuse. Each multiplies the threshold by :data:`RETRY_THRESHOLD_FACTOR` and allows up to
#: :data:`RETRY_MAX_PIECES` pieces: CoACD's merge down to 32 pieces is what leaves the excess (the pybullet bunny:
#: 32 pieces 6.1 % over at 0.05 and 5.5 % at 0.035 in 43 s; 64 pieces at 0.035 within it in 29 s, where halving
#: the threshold twice took minutes).
MAX_DECOMPOSE_RETRIES = 2
RETRY_THRESHOLD_FACTOR = 0.7
RETRY_MAX_PIECES = 64
#: No retry goes below this threshold (CoACD 1.0.14 crashed its process at 0.00625 on the bunny's solid).
MIN_RETRY_THRESHOLD = 0.01
#: Volume tolerance the collider is held to (certification's COLLIDER_VOLUME_REL_TOL; a test checks they agree).
COLLIDER_VOLUME_REL_TOL = 0.05


@dataclass(frozen=True)
class ImportOptions:
    """The user's choices for one import: conventions (None: as the file declares) and the collider."""

    units: str | None = None
    up: str | None = None
    forward: str | None = None
    collider: str = "auto"
    threshold: float = DEFAULT_THRESHOLD
    repair: bool = False

    def params(self) -> dict[str, Any]:
        """As recorded in the contract's ``generator.params`` (so that regeneration repeats the import); ``repair``
        only when on, so that contracts written before it existed keep their bytes."""
        params: dict[str, Any] = {"units": self.units, "up": self.up, "forward": self.forward,
                                  "collider": self.collider, "threshold": self.threshold}
        return {**params, "repair": True} if self.repair else params


@dataclass(frozen=True)
class PartLook:
    """A part's source material: rgba base colour (or None), (M, 3, 2) uv per triangle corner of its render
    triangles (glTF convention) and its (H, W, 3) uint8 sRGB texture, both None when untextured."""

    rgba: tuple[float, float, float, float] | None
    corner_uv: NDArray[np.float64] | None
    texture: NDArray[np.uint8] | None


@dataclass(frozen=True)
class ImportedAsset:
    """Converted geometry, body frame, metres on the 1 µm grid; the shape :func:`generate.write_entry` writes.

    render: every part's triangles, parts in identifier order. part_ranges: ``(part, first, count)``.
    collision: convex pieces. record: the ``import`` block of entry.json (collider volume error filled in).
    rgba: the first part's colour, when the source gives one. looks: each part's material, in part order.
    """

    render: trimesh.Trimesh
    part_ranges: tuple[tuple[str, int, int], ...]
    collision: tuple[trimesh.Trimesh, ...]
    record: ImportRecord
    rgba: tuple[float, float, float, float] | None = None
    looks: tuple[PartLook, ...] = ()
    mounts: dict[str, Mount] = field(default_factory=dict)
    #: The watertight solid measured instead of an open render mesh (``--repair``), or None.
    volume: trimesh.Trimesh | None = None


#: How far from its source's origin a vertex may lie, in metres (a scene's objects lie at their places in it).
MAX_COORDINATE_M = 1e6


def _check_extent(vertices_m: NDArray[np.float64], source: Path, field: str) -> None:
    """Every vertex finite and within :data:`MAX_COORDINATE_M` of the source's origin once in metres, before the
    1 µm grid: a coordinate far past it (1e300) overflows the grid's integers and was read as no geometry."""
    with np.errstate(over="ignore", invalid="ignore"):
        reach = np.abs(vertices_m)
        bad = ~np.isfinite(vertices_m) | (reach > MAX_COORDINATE_M)
    if bad.any():
        row = int(np.argwhere(bad)[0][0])
        value = vertices_m[row][bad[row]][0]
        raise CatalogError(source, field, f"vertex {row} lies at {value:g} m from the origin; the limit is "
                           f"{MAX_COORDINATE_M:g} m (check the units)")


def _to_um(vertices: NDArray[np.float64], linear: NDArray[np.float64]) -> NDArray[np.int64]:
    return np.rint(np.asarray(vertices, dtype=np.float64) @ linear.T * UM_PER_M).astype(np.int64)


def _merge(v_um: NDArray[np.int64], faces: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_]]:
    """Vertices sharing a grid point merged in first-use order; degenerate triangles dropped (``keep`` says which
    source triangles remain)."""
    if faces.size and (faces.min() < 0 or faces.max() >= len(v_um)):
        raise ValueError("a face refers to a vertex that does not exist")
    _, first, inverse = np.unique(v_um, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    new_faces = rank[inverse.reshape(-1)][faces]
    keep = (new_faces[:, 0] != new_faces[:, 1]) & (new_faces[:, 1] != new_faces[:, 2]) & (new_faces[:, 0] != new_faces[:, 2])
    new_faces = new_faces[keep]
    used = np.unique(new_faces)
    remap = np.full(len(order), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    return v_um[first[order]][used], remap[new_faces], keep


def _edge_faults(faces: NDArray[np.int64]) -> str:
    """Why a triangle mesh is not closed, counted exactly: edges of one triangle (open) and edges of more than two
    (non-manifold). (trimesh's row grouping hashes rows and can miss them on large meshes.)"""
    edges = np.sort(np.asarray(faces, dtype=np.int64)[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
    _, counts = np.unique(edges[:, 0] * (int(edges.max(initial=0)) + 1) + edges[:, 1], return_counts=True)
    open_edges, shared = int((counts == 1).sum()), int((counts > 2).sum())
    words = [f"{open_edges} open edges"]
    if shared:
        words.append(f"{shared} edges shared by more than two triangles")
    return ", ".join(words)


def _closure_problem(v_um: NDArray[np.int64], faces: NDArray[np.int64]) -> str | None:
    """Why a part cannot be measured as drawn (the asset contract measures the render volume, SPEC §4), or None."""
    mesh = trimesh.Trimesh(v_um.astype(np.float64), faces, process=False)
    if not mesh.is_watertight:
        return f"render geometry is not closed ({_edge_faults(faces)})"
    if not mesh.is_winding_consistent:
        return "render geometry has inconsistent triangle winding"
    if mesh.volume <= 0:
        return "render geometry encloses no volume (its triangles face inwards)"
    try:
        to_manifold(mesh)
    except ValueError:
        return "render geometry is not a 2-manifold (manifold3d refuses it)"
    return None


_CLOSE_REMEDY = "measure a watertight solid made from it (the render mesh stays as drawn)"


def _hull(points_um: NDArray[np.int64]) -> trimesh.Trimesh | None:
    """Convex hull of grid points (vertices are a subset of them); None for a flat or degenerate piece."""
    pts = np.unique(points_um, axis=0).astype(np.float64) / UM_PER_M
    if len(pts) < 4:
        return None
    try:
        hull = trimesh.convex.convex_hull(pts, repair=True)
    except QhullError:
        return None
    return hull if hull.volume > 0 and hull.is_watertight else None


def _convention(declared: str | None, applied: str, decided_by: str) -> Convention:
    return Convention(declared=declared, applied=applied, decided_by=decided_by)


def _units_text(meters_per_unit: float | None) -> str | None:
    if meters_per_unit is None:
        return None
    return unit_name(meters_per_unit) or f"{meters_per_unit:g} m"


def convert(scene: SourceScene, options: ImportOptions, source: Path, source_file: str, fmt: str,
            mass_kg: float | None = None) -> ImportedAsset:
    """Everything of :mod:`this module's docstring <simready.catalog.importers.assemble>`, for one source.

    mass_kg: the entry's mass when it is known (``--mass-kg``, or the contract's on regeneration): a source mass
    it contradicts is a repair (refused in :mod:`simready.catalog.add` without ``--repair``).
    """
    log = RepairLog(options.repair)
    if options.collider not in COLLIDER_CHOICES:
        raise CatalogError(source, "--collider", f"{options.collider!r} is not one of {', '.join(COLLIDER_CHOICES)}")
    if not 0.0 < options.threshold <= 1.0:
        raise CatalogError(source, "--threshold", f"{options.threshold:g} is not in (0, 1]")
    applied: Applied = resolve(scene.declared, Flags(options.units, options.up, options.forward), source)
    linear = rotation(applied) * applied.meters_per_unit
    merged, looks, dropped = [], [], 0
    for part in scene.parts:
        _check_extent(part.vertices @ linear.T if len(part.vertices) else part.vertices, source, f"parts.{part.name}")
        try:
            v_um, part_faces, keep = _merge(_to_um(part.vertices, linear), part.faces)
        except ValueError as exc:
            raise CatalogError(source, f"parts.{part.name}", str(exc)) from None
        dropped += int((~keep).sum())
        if len(part_faces):
            problem = _closure_problem(v_um, part_faces)
            if problem is not None and not options.repair:
                log.fix(source, f"parts.{part.name}", "watertight solid", problem, "", f"{problem}; the asset "
                        "contract measures its volume", _CLOSE_REMEDY)
            merged.append((part.name, v_um, part_faces, problem))
            corner_uv = None if part.uv is None or part.texture is None else part.uv[part.faces][keep]
            looks.append(PartLook(part.rgba, corner_uv, part.texture if corner_uv is not None else None))
    if not merged:
        raise CatalogError(source, "", "no triangle with an area remains after conversion to the 1 µm grid")
    all_um = np.concatenate([v for _, v, _, _ in merged])
    lo, hi = all_um.min(axis=0), all_um.max(axis=0)
    shift = np.array([-((lo[0] + hi[0]) // 2), -((lo[1] + hi[1]) // 2), -lo[2]], dtype=np.int64)

    vertices, faces, ranges, offset, first = [], [], [], 0, 0
    solids, repaired = [], False
    for name, v_um, f, problem in merged:
        if problem is None:
            solids.append(component_union([trimesh.Trimesh((v_um + shift).astype(np.float64) / UM_PER_M, f, process=False)]))
        else:
            closed = close((v_um + shift).astype(np.float64) / UM_PER_M, f)
            log.fix(source, f"parts.{name}", "watertight solid", problem,
                    f"{closed.method}: {closed.volume_m3:.6g} m³ against the open surface's {closed.surface_volume_m3:.6g} "
                    f"m³ (volume error {closed.volume_error:+.2%})", problem, _CLOSE_REMEDY)
            solids.append(closed.solid)
            repaired = True
        vertices.append(v_um + shift)
        faces.append(f + offset)
        ranges.append((name, first, len(f)))
        offset += len(v_um)
        first += len(f)
    render_um = np.concatenate(vertices)
    render_faces = np.concatenate(faces)
    render = trimesh.Trimesh(render_um.astype(np.float64) / UM_PER_M, render_faces, process=False)
    matrix = conversion_matrix(applied, shift.astype(np.float64) / UM_PER_M)

    # The solid everything is measured on: the union of the closed shells (overlapping shells, a table top and its
    # legs, are not one manifold), with each open part's watertight solid in its place.
    whole = _union(solids) if repaired else component_union([render])
    collider_notes: list[str] = []
    use_source = options.collider == "source" or (options.collider == "auto" and scene.collision)
    method: str | None = None
    settings: dict[str, Any] = {}
    if use_source:
        if not scene.collision:
            raise CatalogError(source, "--collider", "source: the file has no collision geometry; use auto or decompose")
        for i, p in enumerate(scene.collision):
            _check_extent(np.asarray(p, dtype=np.float64).reshape(-1, 3) @ linear.T, source, f"collision[{i}]")
        pieces_um = [_to_um(p, linear) + shift for p in scene.collision]
        hulls = _hulls(pieces_um, collider_notes, source)
        fault = _collider_fault(whole, hulls) if options.repair and options.collider == "auto" else None
        if fault is not None:
            use_source = False
            log.fix(source, "collision", "collider", f"the source's {len(hulls)} collision pieces: {fault}",
                    "a decomposition of the render solid", fault, "decompose the render mesh instead")
    if not use_source:
        hulls, method, settings = _decomposed(whole, options, source, log, collider_notes)

    render_volume = float(whole.volume()) if whole.volume() > 0 else None
    collider_volume = float(component_union(list(hulls)).volume())
    volume_error = None if render_volume is None else (collider_volume - render_volume) / render_volume
    source_inertial = _inertial_record(scene, linear, applied.meters_per_unit, shift)
    if source_inertial is not None:
        source_inertial = _checked_inertial(source_inertial, hulls, render, mass_kg, options, source, log)
    record = ImportRecord(
        source_file=source_file,
        source_sha256=file_sha256(str(source)),
        source_files=len(scene.files),
        format=fmt,
        declared_by=scene.declared.by or "nothing (the format declares no conventions)",
        units=_convention(_units_text(scene.declared.meters_per_unit), _units_text(applied.meters_per_unit) or "",
                          applied.units_from),
        meters_per_unit=applied.meters_per_unit,
        up_axis=_convention(scene.declared.up, applied.up, applied.up_from),
        forward_axis=_convention(scene.declared.forward, applied.forward, applied.forward_from),
        conversion=tuple(tuple(float(x) + 0.0 for x in row) for row in matrix),
        geometry_sha256=geometry_hash(render_um, render_faces),
        degenerate_triangles_dropped=dropped,
        collider=ColliderRecord(origin="source" if use_source else "decomposition", method=method, settings=settings,
                                pieces=len(hulls), volume_error=None if volume_error is None else round(volume_error, 6)),
        source_inertial=source_inertial,
        notes=scene.notes + collider_notes,
    )
    mounts = _frames(scene, applied, linear, shift, source, log) if options.repair else {}
    record = record.model_copy(update={"repairs": [*scene.repairs, *log.items]})
    rgba = next((look.rgba for look in looks if look.rgba is not None), None)
    volume = None
    if repaired:
        solid = manifold_mesh(whole)
        volume = trimesh.Trimesh(solid.vertices, solid.faces, process=False)
    return ImportedAsset(render, tuple(ranges), tuple(hulls), record, rgba, tuple(looks), mounts, volume)


def _union(solids: list[manifold3d.Manifold]) -> manifold3d.Manifold:
    return manifold3d.Manifold.batch_boolean(solids, manifold3d.OpType.Add)


def _hulls(pieces_um: list[NDArray[np.int64]], notes: list[str], source: Path) -> list[trimesh.Trimesh]:
    hulls = [h for h in (_hull(p) for p in pieces_um) if h is not None]
    if len(hulls) < len(pieces_um):
        notes.append(f"{len(pieces_um) - len(hulls)} flat collider piece(s) without volume left out")
    if not hulls:
        raise CatalogError(source, "collider", "no collider piece has a volume")
    return hulls


def _collider_fault(whole: manifold3d.Manifold, hulls: list[trimesh.Trimesh]) -> str | None:
    """What certification's volume rule would say of these pieces against the solid (None: within tolerance)."""
    volume = float(whole.volume())
    excess, deficit = excess_and_deficit_m3(whole, [ObjMesh(np.asarray(h.vertices), np.asarray(h.faces)) for h in hulls])
    worst = max(excess, deficit) / volume if volume > 0 else 0.0
    if worst <= COLLIDER_VOLUME_REL_TOL:
        return None
    return (f"{excess / volume:.1%} of the render volume outside it and {deficit / volume:.1%} uncovered "
            f"(tolerance {COLLIDER_VOLUME_REL_TOL:.0%})")


def _decomposed(whole: manifold3d.Manifold, options: ImportOptions, source: Path, log: RepairLog,
                notes: list[str]) -> tuple[list[trimesh.Trimesh], str, dict[str, Any]]:
    """Convex pieces of the solid; with ``--repair``, decomposed again with a tighter threshold and more pieces while
    they are outside the certification tolerance (at most :data:`MAX_DECOMPOSE_RETRIES` times, each try recorded).

    A library that failed before the one that made the pieces (CoACD crashing its process, :mod:`.decompose`) is a
    repair (``decomposition fallback``) with ``--repair`` and a note without it. Only CoACD takes the threshold, so
    pieces from the fallback are not decomposed again."""
    solid = manifold_mesh(whole)
    threshold, max_pieces = options.threshold, MAX_PIECES
    for attempt in range(MAX_DECOMPOSE_RETRIES + 1):
        tries_notes: list[str] = []
        dec: Decomposition = decompose(solid.vertices, solid.faces, threshold, source, max_pieces)
        if dec.failures:
            text = "; ".join(dec.failures)
            if options.repair:
                log.fix(source, "collider", "decomposition fallback", text, f"{dec.method} (threshold {threshold:g})",
                        "", "")
            else:
                tries_notes.append(f"{text}: decomposed by {dec.method} instead")
        settings = dec.settings
        if dec.simplified is not None:
            settings = {**settings, "simplified_triangles": list(dec.simplified)}
            tries_notes.append(f"the solid's {dec.simplified[0]} triangles simplified to {dec.simplified[1]} "
                               "(manifold3d) before decomposing")
        hulls = _hulls([np.rint(p * UM_PER_M).astype(np.int64) for p in dec.pieces], tries_notes, source)
        fault = _collider_fault(whole, hulls) if options.repair else None
        takes_threshold = dec.method.startswith("coacd")
        tighter = round(threshold * RETRY_THRESHOLD_FACTOR, 6)
        if (fault is None or attempt == MAX_DECOMPOSE_RETRIES or tighter < MIN_RETRY_THRESHOLD
                or not takes_threshold):
            notes += tries_notes
            if fault is not None:
                notes.append(f"the decomposition stays outside the tolerance after {attempt} retries: {fault}")
            return hulls, dec.method, settings
        log.fix(source, "collider", "decomposition retried", f"threshold {threshold:g}: {len(hulls)} pieces, {fault}",
                f"threshold {tighter:g}, up to {RETRY_MAX_PIECES} pieces", fault, "retry with a tighter threshold")
        threshold, max_pieces = tighter, RETRY_MAX_PIECES
    raise AssertionError("unreachable")


def _checked_inertial(src: SourceInertialRecord, hulls: list[trimesh.Trimesh], render: trimesh.Trimesh,
                      mass_kg: float | None, options: ImportOptions, source: Path,
                      log: RepairLog) -> SourceInertialRecord | None:
    """The source's inertial, or (``--repair``) None when the entry's mass or the geometry contradicts it: the
    entry's mass properties are then the geometry's, and the repair says what the file said."""
    before = (f"{src.mass_kg:g} kg, centre of mass {list(src.center_of_mass_m)} m, inertia diagonal "
              f"{[src.inertia_kg_m2[i][i] for i in range(3)]} kg·m²")
    if mass_kg is not None and abs(mass_kg - src.mass_kg) > 1e-6 * src.mass_kg:
        if options.repair:  # without --repair, add.py refuses the contradiction before converting
            log.fix(source, "inertial.mass", "source mass", before, f"--mass-kg {mass_kg:g} kg over the geometry",
                    "", "")
            return None
    if not options.repair:
        return src
    basis = manifold_mesh(component_union(hulls))
    lo, hi = render.bounds
    problems = source_inertia_problems(src, basis, float(np.linalg.norm(hi - lo)))
    if not problems:
        return src
    props = mass_properties(basis, src.mass_kg)
    log.fix(source, "inertial", "source inertia", before,
            f"the geometry's: centre of mass {np.round(props.center_of_mass_m, 4).tolist()} m, inertia diagonal "
            f"{np.round(np.diag(props.inertia_kg_m2), 6).tolist()} kg·m² ({problems[0].split(' (')[0]})", "", "")
    return None


def _frames(scene: SourceScene, applied: Applied, linear: NDArray[np.float64], shift_um: NDArray[np.int64],
            source: Path, log: RepairLog) -> dict[str, Mount]:
    """Links without geometry (sensor frames), as ``frame_<link>`` mounts in the body frame."""
    r = rotation(applied)
    out = {}
    for name in sorted(scene.frames):
        t = scene.frames[name]
        pos = linear @ t[:3, 3] + shift_um / UM_PER_M
        rpy: NDArray[np.float64] = np.degrees(trimesh.transformations.euler_from_matrix(  # type: ignore[no-untyped-call]
            r @ t[:3, :3] @ r.T, axes="sxyz"))
        mount = Mount(translation_m=tuple(float(x) for x in np.round(pos, 6) + 0.0),
                      rpy_deg=tuple(float(x) for x in np.round(rpy, 6) + 0.0))
        log.fix(source, f"link[{name}]", "frame", "a link without geometry",
                f"mount frame_{name} at {list(mount.translation_m)} m, rpy {list(mount.rpy_deg)}°", "", "")
        out[f"frame_{name}"] = mount
    return out


def geometry_hash(vertices_um: NDArray[np.int64], faces: NDArray[np.int64]) -> str:
    """Canonical hash of grid vertices and triangles (names left out)."""
    return content_hash({"vertices_um": np.asarray(vertices_um).tolist(), "triangles": np.asarray(faces).tolist()})


def _inertial_record(scene: SourceScene, linear: NDArray[np.float64], meters_per_unit: float,
                     shift_um: NDArray[np.int64]) -> SourceInertialRecord | None:
    """The source's inertial in the body frame: rotated, scaled (inertia by the square of the unit)."""
    inertial = scene.inertial
    if inertial is None:
        return None
    r = linear / meters_per_unit
    com = linear @ inertial.center_of_mass + shift_um / UM_PER_M
    tensor = r @ inertial.inertia @ r.T * meters_per_unit**2
    return SourceInertialRecord(
        mass_kg=inertial.mass_kg,
        center_of_mass_m=tuple(float(x) for x in np.round(com, 9) + 0.0),
        inertia_kg_m2=tuple(tuple(float(x) for x in row) for row in np.round(tensor, 12) + 0.0),
    )
