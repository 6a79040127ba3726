"""Convex decomposition in a child process (issue 30): a library that crashes its process, or runs too long, is one
line naming the library and why, and the next library decomposes instead; a large solid is simplified first."""

from __future__ import annotations

import os
import resource
import time
from pathlib import Path

import numpy as np
import pytest
import trimesh

from simready.catalog.add import ImportRequest, import_asset
from simready.catalog.importers import decompose as D
from simready.catalog.importers.assemble import ImportOptions
from simready.common.errors import CatalogError


def _coacd_that_crashes(vertices: np.ndarray, faces: np.ndarray, threshold: float, max_pieces: int) -> D.Decomposition:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file from the test's crash
    os.abort()


def _coacd_that_hangs(vertices: np.ndarray, faces: np.ndarray, threshold: float, max_pieces: int) -> D.Decomposition:
    time.sleep(60)
    raise AssertionError("not reached")


def _coacd_that_refuses(vertices: np.ndarray, faces: np.ndarray, threshold: float, max_pieces: int) -> D.Decomposition:
    raise RuntimeError("no cut found")


def box() -> trimesh.Trimesh:
    return trimesh.creation.box(extents=(0.6, 0.4, 0.4))


def test_a_library_that_crashes_its_process_is_one_line_and_the_next_decomposes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(D, "RUNNERS", (_coacd_that_crashes, D._vhacd))
    b = box()
    dec = D.decompose(b.vertices, b.faces, 0.05, "crate.obj")
    assert dec.failures == ("coacd_that_crashes: crashed its process (SIGABRT)",)
    assert dec.method.startswith("vhacdx") and dec.pieces
    monkeypatch.setattr(D, "RUNNERS", (_coacd_that_crashes, _coacd_that_refuses))
    with pytest.raises(CatalogError) as err:
        D.decompose(b.vertices, b.faces, 0.05, "crate.obj")
    line = err.value.one_line()
    assert "\n" not in line and "crate.obj" in line and "collider" in line
    assert "coacd_that_crashes: crashed its process (SIGABRT); coacd_that_refuses: no cut found" in line


def test_a_library_past_its_time_is_stopped() -> None:
    b = box()
    t0 = time.monotonic()
    with pytest.raises(D.DecomposeFailure, match=r"^ran past 1 s and was stopped$"):
        D._in_child(_coacd_that_hangs, b.vertices, b.faces, 0.05, 32, timeout_s=1.0)
    assert time.monotonic() - t0 < 30


def test_a_large_solid_is_simplified_before_it_is_decomposed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(D, "MAX_DECOMPOSE_FACES", 2000)
    sphere = trimesh.creation.icosphere(subdivisions=4, radius=0.5)  # 5 120 triangles
    v, f = D.simplified(sphere.vertices, sphere.faces)
    assert len(f) <= 2000
    solid = trimesh.Trimesh(v, f, process=False)
    assert solid.is_watertight and solid.volume == pytest.approx(sphere.volume, rel=0.01)
    dec = D.decompose(sphere.vertices, sphere.faces, 0.05, "ball.obj")
    assert dec.simplified == (5120, len(f)) and dec.pieces


@pytest.mark.slow
@pytest.mark.parametrize("repair", [False, True])
def test_the_fallback_is_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repair: bool) -> None:
    monkeypatch.setattr(D, "RUNNERS", (_coacd_that_crashes, D._vhacd))
    box().export(tmp_path / "crate.obj")
    req = ImportRequest(tmp_path / "crate.obj", "asset:crate/x", "road_object",
                        ImportOptions(units="meter", collider="decompose", repair=repair), mass_kg=12.0, license="Zlib")
    result = import_asset(req, tmp_path / "catalog")
    assert result.certification.passed, result.certification.reasons
    rec = result.entry.import_
    assert rec is not None and rec.collider.method is not None and rec.collider.method.startswith("vhacdx")
    if repair:
        (fallback,) = [r for r in rec.repairs if r.what == "decomposition fallback"]
        assert fallback.where == "collider" and fallback.before == "coacd_that_crashes: crashed its process (SIGABRT)"
        assert fallback.after.startswith("vhacdx")
    else:
        assert "coacd_that_crashes: crashed its process (SIGABRT): decomposed by vhacdx" in " ".join(rec.notes)


@pytest.mark.slow
def test_a_solid_over_coacds_triangle_budget_goes_to_vhacd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(D, "COACD_MAX_FACES", 100)
    ball = trimesh.creation.icosphere(subdivisions=2, radius=0.3)  # 320 triangles
    dec = D.decompose(ball.vertices, ball.faces, 0.05, "ball.obj")
    assert dec.failures == ("coacd: 320 triangles, over its budget of 100",)
    assert dec.method.startswith("vhacdx") and dec.simplified is None
    hull_volume = sum(trimesh.convex.convex_hull(p).volume for p in dec.pieces)
    assert hull_volume == pytest.approx(ball.volume, rel=0.15)  # V-HACD voxels; its old call gave slivers of 1 %
