"""The compiled RGB finish (exposure, tone map, vignette, lens resampling, sRGB) is byte for byte the numpy one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def test_compiled_depth_is_the_numpy_depth_byte_for_byte():
    """z-depth from the hit distances in one compiled pass: the numpy passes' float32 bytes (misses +inf)."""
    from simready.raycast import SceneGeometry
    from simready.sensors_hw.camera import render_frame, z_depth, z_depth_numpy
    from simready.sensors_hw.models import Rig
    from simready.testing.street import box_body, linear_track

    car = box_body("t/actor:car", (4.0, 2.0, 3.0), linear_track((10.0, -2.0, 0.0), (0.0, 20.0, 0.0), t_end_s=1.0),
                   10, (0.5, 0.5, 0.5), 0.5)
    rig = Rig.from_dict({"mounts": {"cam": {"type": "camera", "translation_m": [0.0, 0.0, 1.5],
                                            "rpy_deg": [3.0, 2.0, 10.0]}},
                         "sensors": {"cam": {"width_px": 96, "height_px": 64, "hfov_deg": 90.0, "near_m": 0.1,
                                             "far_m": 200.0, "rate_hz": 20.0, "phase_s": 0.0, "shutter": "rolling",
                                             "line_time_s": 2e-4, "distortion_k1": 0.0}}},
                        body=linear_track((0.0, 0.0, 0.0), (3.0, 0.5, 0.0), t_end_s=1.0))
    frame = render_frame(SceneGeometry([car]), rig, "cam", 0.2, ("depth",))
    fast, ref = z_depth(frame.hits, frame.T_world_camera), z_depth_numpy(frame.hits, frame.T_world_camera)
    assert np.isinf(fast).any() and np.isfinite(fast).any()
    assert fast.dtype == np.float32 and fast.tobytes() == ref.tobytes()


def test_depth_pass_in_one_walk_is_refine_then_z_depth():
    """The depth pass's one walk (static hits refined and every pixel's z-depth, after the moving bodies' hits):
    the same depth bytes, distances and plane flags as ``Hits.refine`` then :func:`z_depth`, on a street with
    moving cars, the sky and a rolling shutter."""
    from simready.sensors_hw.camera import render_frame, z_depth
    from simready.sensors_hw.camera.render import refined_z_depth
    from simready.sensors_hw.models import Rig
    from simready.testing.street import EGO_ID, street_scene

    scene, bodies = street_scene()
    cam = {"width_px": 320, "height_px": 180, "hfov_deg": 90.0, "near_m": 0.1, "far_m": 300.0, "rate_hz": 20.0,
           "phase_s": 0.0, "shutter": "rolling", "line_time_s": 1e-4, "distortion_k1": 0.0}
    rig = Rig.from_dict({"mounts": {"cam": {"type": "camera", "translation_m": [1.5, 0.0, 1.6],
                                            "rpy_deg": [1.0, 3.0, -20.0]}},
                         "sensors": {"cam": cam}}, body=bodies[EGO_ID].track)
    walked = render_frame(scene, rig, "cam", 0.5, ("id",), ignore=[EGO_ID]).hits
    passes = render_frame(scene, rig, "cam", 0.5, ("id",), ignore=[EGO_ID]).hits
    assert len(walked._hits_by_motion[1]) and not walked.hit.all()
    T_rows = render_frame(scene, rig, "cam", 0.5, ("id",), ignore=[EGO_ID]).T_world_camera
    depth = refined_z_depth(walked, T_rows)
    passes.refine(barycentrics=False, copy=False)
    assert depth.tobytes() == z_depth(passes, T_rows).tobytes()
    assert walked.distance_m.tobytes() == passes.distance_m.tobytes()
    assert np.array_equal(walked._plane_ok, passes._plane_ok) and walked.exact_distance


@pytest.mark.parametrize("headlights", [False, True])
def test_compiled_shading_is_the_numpy_shading_byte_for_byte(headlights):
    """Normals, facing, n·sun, shadow-ray starts and radiance in two compiled passes: the numpy passes' float32
    values exactly (sun shadows, moving cars, sky; with and without the ego's lamps)."""
    from simready.sensors_hw.camera import Lighting, render_frame, shade, shade_numpy
    from simready.sensors_hw.models import Rig
    from simready.testing.street import EGO_ID, street_scene

    scene, bodies = street_scene()
    rig = Rig.from_dict({"mounts": {"cam": {"type": "camera", "translation_m": [1.5, 0.0, 1.6]}},
                         "sensors": {"cam": {"width_px": 160, "height_px": 90, "hfov_deg": 90.0, "near_m": 0.1,
                                             "far_m": 300.0, "rate_hz": 20.0, "phase_s": 0.0, "shutter": "rolling",
                                             "line_time_s": 1e-4, "distortion_k1": 0.0}}}, body=bodies[EGO_ID].track)
    frame = render_frame(scene, rig, "cam", 0.5, ("depth",), ignore=[EGO_ID])
    moving = ~np.take(scene._is_static_ext, frame.hits.body_index)
    assert moving.any() and (~frame.hits.hit).any()
    lighting = Lighting(headlights=headlights)
    args = (scene, rig, rig.sensors["cam"], frame.hits, lighting, frame.T_world_camera)
    fast, ref = shade(*args, ignore=[EGO_ID]), shade_numpy(*args, ignore=[EGO_ID])
    assert fast.dtype == np.float32 and fast.tobytes() == ref.tobytes()


def test_compiled_body_tables_and_start_points_are_the_numpy_gathers():
    """A frame's rows, compact ids, classes and albedo from one compiled pass, and the segments' float32 start
    points, equal the numpy gathers (misses read the tables' last row)."""
    from simready.raycast.rays import segment_starts
    from simready.sensors_hw.camera import camera_poses, camera_rays
    from simready.sensors_hw.camera.primary_rays import ray_tables
    from simready.sensors_hw.models import Rig
    from simready.testing.street import EGO_ID, street_scene

    scene, bodies = street_scene()
    rig = Rig.from_dict({"mounts": {"cam": {"type": "camera", "translation_m": [1.5, 0.0, 1.6]}},
                         "sensors": {"cam": {"width_px": 128, "height_px": 72, "hfov_deg": 90.0, "near_m": 0.1,
                                             "far_m": 300.0, "rate_hz": 20.0, "phase_s": 0.0, "shutter": "rolling",
                                             "line_time_s": 2e-4, "distortion_k1": 0.0}}}, body=bodies[EGO_ID].track)
    model = rig.sensors["cam"]
    o, d = camera_rays(model, camera_poses(rig, "cam", 0.5))
    _, _, near, far = ray_tables(model)
    start = segment_starts(o, d, near)
    ref = np.multiply(d, near[:, None])
    ref += o
    assert start.tobytes() == ref.tobytes()
    hits = scene.cast(o, d, 0.5, far, near, ignore=[EGO_ID], normalized=True)
    assert hits.hit.any() and not hits.hit.all()
    rows, ids, classes = hits.rows, hits.compact_id, hits.semantic
    albedo = scene.albedo_at(hits)
    static, moving = hits._hits_by_motion
    assert len(static) and len(moving)
    hits.fill_tables(albedo=True)
    assert hits._hits_by_motion[0].tobytes() == static.tobytes() and hits._hits_by_motion[1].tobytes() == moving.tobytes()
    for fast, slow in ((hits.rows, rows), (hits.compact_id, ids), (hits.semantic, classes), (scene.albedo_at(hits), albedo)):
        assert fast.dtype == slow.dtype and fast.tobytes() == slow.tobytes()
    assert "_base_albedo" not in hits.__dict__  # handed out once


def test_compiled_hit_distances_are_the_numpy_ones():
    from simready.raycast.kernels import hit_distances

    rng = np.random.default_rng(5)
    body = rng.integers(-1, 4, 1000).astype(np.int32)
    t = rng.uniform(0.0, 300.0, 1000).astype(np.float32)
    for r_min in (np.float32(0.1), rng.uniform(0.1, 0.2, 1000).astype(np.float32)):
        ref = t.astype(np.float64)
        ref += np.asarray(r_min)
        ref[body < 0] = np.inf
        hit, dist = hit_distances(body, t, np.asarray(r_min).reshape(-1), np.zeros(0, np.float32))
        assert np.array_equal(hit, body >= 0) and dist.tobytes() == ref.tobytes()


def test_compiled_spans_are_the_numpy_spans():
    from simready.sensors_hw.camera.prefilters import concat_ranges, concat_ranges_numpy

    rng = np.random.default_rng(3)
    for n in (0, 1, 57):
        starts = np.sort(rng.integers(0, 10**6, n)).astype(np.int64)
        counts = rng.integers(1, 1300, n).astype(np.int64)
        fast, ref = concat_ranges(starts, counts), concat_ranges_numpy(starts, counts)
        assert fast.dtype == ref.dtype and np.array_equal(fast, ref)


def test_compiled_projection_prefilter_keeps_the_numpy_pixels():
    """Boxes in front, straddling the camera plane, behind it and nearer than the near plane, seen by a rolling
    shutter turning and climbing: the compiled pass keeps exactly the numpy rule's pixels."""
    from simready.sensors_hw.camera import projection_candidates, projection_prefilter

    m = model(width_px=320, height_px=180, near_m=0.3)
    rng = np.random.default_rng(9)
    T = np.tile(np.eye(4), (180, 1, 1))
    yaw = np.linspace(0.0, 0.4, 180)
    # optical frame: x right, y down, z forward (world x forward, z up), turning about world z
    base = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
    for r, a in enumerate(yaw):
        rz = np.array([[np.cos(a), -np.sin(a), 0.0], [np.sin(a), np.cos(a), 0.0], [0.0, 0.0, 1.0]])
        T[r, :3, :3] = rz @ base
        T[r, :3, 3] = [0.01 * r, 0.0, 1.5 + 0.001 * r]
    fast, ref = projection_candidates(m, T), projection_prefilter(m, T)
    kept = 0
    for _ in range(400):
        lo = rng.uniform([-20.0, -30.0, -2.0], [60.0, 30.0, 3.0])
        hi = lo + rng.uniform(0.05, 12.0, 3)
        a, b = fast(lo, hi), ref(lo, hi)
        assert a.dtype == np.int64 and np.array_equal(a, b)
        kept += len(a) > 0
    assert 50 < kept < 400


def test_compiled_undistortion_is_the_numpy_one_bit_for_bit():
    """The distortion remap's taps undistort point by point in a kernel: undistort_normalized's float64 bits."""
    from simready.sensors_hw import camera_kernels as kern
    from simready.sensors_hw.camera import undistort_normalized

    xy = np.random.default_rng(5).uniform(-1.3, 1.3, (4000, 2))
    for k1, k2 in ((-0.2, 0.05), (0.1, 0.0), (-0.05, -0.01)):
        for iterations in (1, 20):
            ref = undistort_normalized(xy, k1, k2, iterations)
            assert kern.undistort(xy, k1, k2, iterations).tobytes() == ref.tobytes()


def test_compiled_depth_encoding_is_the_numpy_one_bit_for_bit():
    from simready.sensors_hw.camera import encode_depth, encode_depth_numpy

    z = np.random.default_rng(6).gamma(2.0, 20.0, (37, 53)).astype(np.float32)
    z.flat[::7] = np.inf
    z.flat[3::11] = 0.0
    z.flat[5::13] = -1.0
    z.flat[6::17] = np.nan
    out = encode_depth(z, 0.1)
    assert out.dtype == np.float32 and out.shape == z.shape
    assert out.tobytes() == encode_depth_numpy(z, 0.1).tobytes()
    assert out[0, 0] == 0.0 and out.flat[3] == 0.0 and out.flat[5] == 0.0 and out.flat[6] == 0.0


@pytest.mark.parametrize("level", [0, 1, 6, 9])
def test_the_observation_pngs_hold_the_images_pixels(level):
    """rgb.png, id.png and semantic.png written by the compiled Up-filter + zlib encoder: a PNG reader gets the
    very pixels back (encode_id_rgb's / encode_semantic_rgb's images for ids and classes); bad values refused."""
    import io

    from PIL import Image

    from simready.sensors_hw.camera import (SEMANTIC_IGNORE, encode_id_rgb, encode_semantic_rgb, id_png_bytes,
                                            rgb_png_bytes, semantic_png_bytes)

    rng = np.random.default_rng(level)
    rgb = rng.integers(0, 256, (41, 67, 3), dtype=np.uint8)
    rgb[:20] = rgb[0]  # rows repeating the row above (Up's zero runs)
    ids = rng.integers(0, 1 << 24, (41, 67)).astype(np.uint32)
    ids[10:30, 5:50] = 77
    classes = rng.integers(0, 255, (41, 67)).astype(np.uint16)
    classes[::3, ::5] = SEMANTIC_IGNORE
    for data, image in ((rgb_png_bytes(rgb, level), rgb), (id_png_bytes(ids, level), encode_id_rgb(ids)),
                        (semantic_png_bytes(classes, level), encode_semantic_rgb(classes))):
        back = Image.open(io.BytesIO(data))
        assert back.mode == "RGB" and back.size == (67, 41)
        np.testing.assert_array_equal(np.asarray(back), image)
    with pytest.raises(ValueError, match="24 bits"):
        id_png_bytes(np.full((2, 2), 1 << 24, np.uint32), level)
    with pytest.raises(ValueError, match="below 255"):
        semantic_png_bytes(np.full((2, 2), 300, np.uint16), level)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), rows=st.integers(1, 300), width=st.integers(1, 4000),
       run=st.integers(1, 400), noise=st.floats(0.0, 1.0))
def test_the_png_deflate_is_zlibs_stream(seed, rows, width, run, noise):
    """The observation PNGs' IDAT is deflated by zlib-ng at the run-length level (PNG_RLE_LEVEL): its stream is
    the one zlib writes with the same settings, byte for byte, so the files are what they were with zlib (runs
    of repeated bytes, as Up-filtered rows have, mixed with noise)."""
    import zlib

    from zlib_ng import zlib_ng

    from simready.sensors_hw.camera.encoding import PNG_RLE_LEVEL

    rng = np.random.default_rng(seed)
    n = rows * width
    data = np.repeat(rng.integers(0, 256, n // run + 1, dtype=np.uint8), run)[:n]
    mask = rng.random(n) < noise
    data[mask] = rng.integers(0, 256, int(mask.sum()), dtype=np.uint8)
    streams = []
    for lib in (zlib, zlib_ng):
        z = lib.compressobj(PNG_RLE_LEVEL, zlib.DEFLATED, zlib.MAX_WBITS, 8, zlib.Z_RLE)
        streams.append(z.compress(data.data) + z.flush())
    assert streams[0] == streams[1]
    assert zlib.decompress(streams[1]) == data.tobytes()
