"""The DVC-tracked catalog is exactly what project code regenerates."""

from __future__ import annotations

from simready.catalog.build import dvc_dir_md5, dvc_locked_md5
from simready.catalog.generate import generate_catalog


def test_regenerated_catalog_matches_dvc_lock(tmp_path):
    """Fails when a generator changed without `make dvc-repro` (dvc.lock would be stale)."""
    locked = dvc_locked_md5()
    assert locked is not None and locked.endswith(".dir")
    out = tmp_path / "generated"
    generate_catalog(out_dir=out)
    assert dvc_dir_md5(out) == locked


def test_dvc_is_not_importable_in_the_runtime_venv():
    """dvc's antlr pin breaks Dagster's selection parser; it must live in .venv-dvc only."""
    import importlib.util

    assert importlib.util.find_spec("dvc") is None
