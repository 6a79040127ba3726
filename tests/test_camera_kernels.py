"""The compiled RGB finish (exposure, tone map, vignette, lens resampling, sRGB) is byte for byte the numpy one."""

from __future__ import annotations

import numpy as np
import pytest

from simready.sensors_hw.camera import finish_rgb, finish_rgb_numpy
from simready.sensors_hw.models import CameraModel


def model(**kw) -> CameraModel:
    base = dict(width_px=160, height_px=90, hfov_deg=90.0, near_m=0.1, far_m=200.0, rate_hz=20.0, phase_s=0.0,
                shutter="rolling", line_time_s=1e-4, distortion_k1=0.0)
    return CameraModel(**{**base, **kw})


@pytest.mark.parametrize("kw", [{}, {"distortion_k1": -0.05}, {"vignette": 0.0, "tone_map": "clip", "exposure_ev": 0.7},
                                {"distortion_k1": 0.1, "distortion_k2": -0.03, "exposure_ev": -1.3}])
def test_compiled_finish_is_the_numpy_finish_byte_for_byte(kw):
    rng = np.random.default_rng(3)
    radiance = (rng.gamma(1.0, 0.6, (90, 160, 3)) * rng.uniform(0.0, 3.0, (90, 160, 1))).astype(np.float32)
    radiance[:5] = 0.0
    radiance[-3:, :7] = 40.0
    m = model(**kw)
    out = finish_rgb(m, radiance)
    assert out.dtype == np.uint8 and out.shape == (90, 160, 3)
    np.testing.assert_array_equal(out, finish_rgb_numpy(m, radiance))
