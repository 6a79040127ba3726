"""Rules on the entry's files: every file hashed as recorded, the summaries in ``entry.json`` equal to what the
files hold, the appearance files, the geometry hash."""

from __future__ import annotations

import numpy as np

from simready.catalog.certification.context import RuleContext, entry_file, render_volume
from simready.catalog.certification.policy import SUMMARY_REL_TOL
from simready.catalog.generate import urdf_spec
from simready.catalog.meshio import bounds, union, urdf_text
from simready.catalog.wheels import vehicle_record
from simready.common.hashing import file_sha256


def _hash_problems(c: RuleContext) -> list[str]:
    e = c.entry
    out: list[str] = []
    for ref in e.files():
        path = entry_file(c.entry_dir, ref.file, out)
        if path is None:
            continue
        if not path.is_file():
            out.append(f"missing file {ref.file}")
        elif (actual := file_sha256(str(path))) != ref.sha256:
            out.append(f"{ref.file} sha256 {actual[7:19]}… does not match entry.json {ref.sha256[7:19]}…")
    urdf = entry_file(c.entry_dir, e.urdf.file, [])
    if urdf is not None and urdf.is_file() and urdf.read_text(encoding="utf-8") != urdf_text(urdf_spec(e)):
        out.append(f"{e.urdf.file} does not state entry.json's mass, inertia, material or files")
    return out


def _summary_problems(c: RuleContext) -> list[str]:
    """entry.json's geometry summaries must describe the files (they feed templates and physics)."""
    e, r = c.entry, c.render
    out: list[str] = []
    if r is None:
        return out
    groups = [(p.name, p.first_triangle, p.triangle_count) for p in e.parts]
    if list(r.groups) != groups:
        out.append(f"render.obj part groups {list(r.groups)} differ from entry.json parts {groups}")
    if e.import_ is not None and (found := vehicle_record(r)) != e.vehicle:
        out.append("entry.json vehicle " + ("(absent)" if e.vehicle is None else f"wheelbase {e.vehicle.wheelbase_m:g} m")
                   + " differs from the wheels found on render.obj: "
                   + ("none" if found is None else f"wheelbase {found.wheelbase_m:g} m, track {found.track_m:g} m"))
    mesh = (c.volume if c.volume is not None else r).trimesh()
    if not (mesh.is_watertight and mesh.is_winding_consistent):
        out.append("render.obj is not watertight with consistent winding")
        return out
    volume = render_volume(c)
    if abs(volume - e.render_volume_m3) > SUMMARY_REL_TOL * volume:
        out.append(f"entry.json render_volume_m3 {e.render_volume_m3:.6g} m³ differs from render.obj's {volume:.6g} m³")
    if not np.allclose(e.render_bounds_m, bounds([r]), rtol=0, atol=1e-6):
        out.append("entry.json render_bounds_m differ from render.obj's bounds")
    out += _appearance_problems(c)
    if c.pieces is not None:
        cvol = union(c.pieces).volume()
        if abs(cvol - e.collision_volume_m3) > SUMMARY_REL_TOL * max(cvol, 1e-12):
            out.append(f"entry.json collision_volume_m3 {e.collision_volume_m3:.6g} m³ differs from the pieces' {cvol:.6g} m³")
    return out


def _appearance_problems(c: RuleContext) -> list[str]:
    """An imported entry's appearance names its parts in order, and its uv file has a row per triangle."""
    look, e = c.entry.appearance, c.entry
    if look is None:
        return []
    out = []
    if [p.part for p in look.parts] != [p.name for p in e.parts]:
        out.append(f"appearance parts {[p.part for p in look.parts]} are not the entry's parts {[p.name for p in e.parts]}")
    if look.uv is not None:
        path = entry_file(c.entry_dir, look.uv.file, [])
        want = sum(p.triangle_count for p in e.parts) * 3 * 2 * 4
        if path is not None and path.is_file() and path.stat().st_size != want:
            out.append(f"{look.uv.file} holds {path.stat().st_size} bytes, not {want} (3 corners × (u, v) float32 per triangle)")
    return out


def check_geometry_hash(c: RuleContext) -> list[str]:
    return c.load_problems + _hash_problems(c) + _summary_problems(c)
