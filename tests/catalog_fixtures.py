"""Builders of broken catalog entries, each designed to trip exactly one certification rule.

Every builder copies (or regenerates, through the real writer) a genuine
entry into ``dest_root/<family>/<variant>/`` and breaks one thing while
keeping everything else self-consistent — hashes, URDF, mass properties —
so the certifier must find the *intended* fault, not collateral damage.
Each returns the entry directory; :data:`EXPECTED_CODES` says what it must trip.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import trimesh

from simready import paths
from simready.catalog.catalog import load_entry
from simready.catalog.contract import AssetContract, load_contract
from simready.catalog.generate import generate_catalog, write_entry, write_entry_metadata
from simready.catalog.procedural import ProceduralAsset, build

VAN = "asset:delivery_van/white"


@pytest.fixture(scope="module")
def generated_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real contracts generated into a temporary directory."""
    out = tmp_path_factory.mktemp("catalog") / "generated"
    generate_catalog(paths.CATALOG_CONTRACTS_DIR, out)
    return out


def entry_dir_of(generated: Path, asset_id: str) -> Path:
    family, variant = asset_id.removeprefix("asset:").split("/")
    return generated / family / variant


def _copy(src: Path, dest_root: Path) -> Path:
    dst = dest_root / src.parent.name / src.name
    shutil.copytree(src, dst)
    return dst


def _edit(src: Path, dest_root: Path, **updates: object) -> Path:
    """Copy an entry and change entry.json fields; URDF and its hash are rewritten to match."""
    dst = _copy(src, dest_root)
    entry = load_entry(dst)
    write_entry_metadata(dst, entry.model_copy(update=updates))
    return dst


def _regenerate(
    src: Path,
    dest_root: Path,
    change_asset: Callable[[ProceduralAsset], ProceduralAsset] = lambda a: a,
    **contract_updates: object,
) -> Path:
    """Rebuild an entry through the real writer from its contract, after altering it."""
    entry = load_entry(src)
    source = paths.CATALOG_CONTRACTS_DIR / f"{entry.family}__{entry.variant}.yaml"
    contract, sha = load_contract(source)
    contract = AssetContract.model_validate({**contract.model_dump(), **contract_updates})
    asset = change_asset(build(contract.generator))
    dst = dest_root / src.parent.name / src.name
    write_entry(dst, contract, sha, asset, source)
    return dst


# --- the required fixtures -------------------------------------------------


def centimetre_units(src: Path, dest_root: Path) -> Path:
    return _edit(src, dest_root, units="centimeter")


def inertia_times_10000(src: Path, dest_root: Path) -> Path:
    inertia = np.asarray(load_entry(src).inertia_kg_m2) * 10_000.0
    return _edit(src, dest_root, inertia_kg_m2=tuple(tuple(float(v) for v in row) for row in inertia))


def chassis_box_collider(src: Path, dest_root: Path) -> Path:
    """One box from the ground to the roof, filling the open space under the chassis.

    Its bounds equal the render bounds exactly, so only the volume test can catch it.
    """

    def one_box(asset: ProceduralAsset) -> ProceduralAsset:
        return dataclasses.replace(asset, collision=(trimesh.creation.box(bounds=asset.render.bounds),))

    return _regenerate(src, dest_root, one_box)


def no_license(src: Path, dest_root: Path) -> Path:
    return _edit(src, dest_root, license=None)


def non_uniform_scale(src: Path, dest_root: Path) -> Path:
    return _edit(src, dest_root, scale=(1.0, 1.0, 1.03))


def hidden_scale_geometry(src: Path, dest_root: Path) -> Path:
    """Geometry stretched 1.03× in z (render and colliders alike), declared dimensions unchanged."""
    stretch = np.diag([1.0, 1.0, 1.03, 1.0])

    def scaled(asset: ProceduralAsset) -> ProceduralAsset:
        return dataclasses.replace(
            asset,
            render=asset.render.copy().apply_transform(stretch),
            collision=tuple(piece.copy().apply_transform(stretch) for piece in asset.collision),
        )

    return _regenerate(src, dest_root, scaled)


# --- more single-fault fixtures ---------------------------------------------


def uniform_scale_declared(src: Path, dest_root: Path) -> Path:
    return _edit(src, dest_root, scale=(1.03, 1.03, 1.03))


def implausible_mass(src: Path, dest_root: Path) -> Path:
    """12 t van, with inertia consistently recomputed for 12 t."""
    return _regenerate(src, dest_root, mass_kg=12_000.0)


def no_split_key(src: Path, dest_root: Path) -> Path:
    return _edit(src, dest_root, split_lineage_key="  ")


def wrong_semantic_class(src: Path, dest_root: Path) -> Path:
    return _edit(src, dest_root, semantic_class="car")


def tampered_render(src: Path, dest_root: Path) -> Path:
    """A vertex nudged by 1 µm after hashing: volumes barely move, the hash does."""
    dst = _copy(src, dest_root)
    obj = dst / "render.obj"
    lines = obj.read_text().splitlines()
    x, y, z = (float(t) for t in lines[0].split()[1:])
    lines[0] = f"v {x:.6f} {y:.6f} {z - 1e-6:.6f}"
    obj.write_text("\n".join(lines) + "\n")
    return dst


def missing_collision_piece(src: Path, dest_root: Path) -> Path:
    dst = _copy(src, dest_root)
    (dst / "collision_01.obj").unlink()
    return dst


EXPECTED_CODES: dict[Callable[[Path, Path], Path], set[str]] = {
    centimetre_units: {"units"},
    inertia_times_10000: {"inertia"},
    chassis_box_collider: {"collider_mismatch"},
    no_license: {"license"},
    non_uniform_scale: {"non_uniform_scale"},
    hidden_scale_geometry: {"hidden_scale"},
    uniform_scale_declared: {"hidden_scale"},
    implausible_mass: {"mass"},
    no_split_key: {"split_key"},
    # A 5.9 m van declared a car is also too long and too tall for a car (issue 16).
    wrong_semantic_class: {"ontology", "plausibility"},
    tampered_render: {"geometry_hash"},
    missing_collision_piece: {"geometry_hash"},
}
