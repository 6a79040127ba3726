"""``Polyline.points_at`` is ``point_at`` element by element, bit for bit (issue 29: the junction waiting points'
footprints are placed with it, and every trace depends on those)."""

from __future__ import annotations

import numpy as np
import pytest

from simready.common import paths
from simready.world.polyline import Polyline
from simready.world.template import load_template


@pytest.mark.parametrize("template_id", sorted(p.stem for p in paths.TEMPLATES_DIR.glob("*.yaml")))
def test_points_at_is_point_at_bit_for_bit(template_id):
    template = load_template(paths.TEMPLATES_DIR / f"{template_id}.yaml")
    rng = np.random.default_rng(29)
    lanes = template.lane_graph.lanes
    assert lanes
    for lane in lanes.values():
        line = Polyline.from_points(lane.points)
        length = line.length_m
        # Before the start, on every vertex, between them, past the end: the end segments extrapolate.
        s = np.concatenate([rng.uniform(-5.0, length + 5.0, 64), line.cum_s, [-0.0, 0.0, length, -1e-12]])
        for t in (0.0, -0.0, 1.75, -2.5):
            xs, ys = line.points_at(s, t)
            want = np.array([line.point_at(v, t) for v in s.tolist()])
            assert np.array_equal(xs.view(np.int64), want[:, 0].view(np.int64))
            assert np.array_equal(ys.view(np.int64), want[:, 1].view(np.int64))
