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



def test_lane_arrows_outside_the_view_are_left_out_and_the_picture_is_the_same():
    """draw_lanes(view=...) skips the arrows matplotlib would not draw: fewer artists, the same PNG bytes."""
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.text import Annotation

    from simready.world.template_plot import draw_lanes, draw_regions

    tpl = loaded("urban_signalized_intersection")
    xmin, ymin, xmax, ymax = tpl.bounds
    view = (xmin, ymin, 0.5 * (xmin + xmax), 0.5 * (ymin + ymax))  # a quarter of the map

    def picture(with_view: bool) -> tuple[bytes, int]:
        fig = Figure(figsize=(6, 6))
        FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
        draw_regions(ax, tpl)
        draw_lanes(ax, tpl, view=view if with_view else None)
        ax.set_xlim(view[0], view[2])
        ax.set_ylim(view[1], view[3])
        ax.set_aspect("equal")
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=60)
        return buf.getvalue(), sum(isinstance(c, Annotation) for c in ax.get_children())

    full, n_full = picture(False)
    viewed, n_viewed = picture(True)
    assert 0 < n_viewed < n_full
    assert viewed == full
