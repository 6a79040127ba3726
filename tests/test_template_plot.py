"""Top-down template plot: a real PNG, written atomically, with or without catalog footprints."""

from __future__ import annotations

from matplotlib.image import imread

from simready.world.template_plot import plot_template
from tests.fixtures.templates import footprints, loaded

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_plot_writes_a_png(tmp_path):
    out = plot_template(loaded("residential_crosswalk_v3"), tmp_path / "plot.png", footprints())
    assert out == tmp_path / "plot.png"
    assert out.read_bytes()[:8] == PNG_MAGIC
    image = imread(out)
    assert image.shape[1] > 800 and image.shape[0] > 200
    assert [p.name for p in tmp_path.iterdir()] == ["plot.png"]  # no temp file left behind


def test_plot_without_dimensions(tmp_path):
    out = plot_template(loaded("urban_signalized_intersection"), tmp_path / "i.png", None)
    assert out.stat().st_size > 10_000

