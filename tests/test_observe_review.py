"""Review images of an observations folder: contact sheet of camera passes, LiDAR top-down (orientation)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from simready.testing.street import street_sample
from simready.common.hashing import file_sha256
from simready.artifacts.layout import ObservationDir
from simready.artifacts.records import Results
from simready.sensors_hw.camera import decode_semantic_rgb
from simready.sensors_hw.lidar import read_ply, write_ply_ascii
from simready.measurement.observe import ObserveOptions, observe
from simready.measurement.review_images import (GAP, LABEL_H, REVIEW_TOPDOWN_PX, SHEET_PASSES, TILE_W, evenly_spaced,
                                              lidar_review, palette, write_review_images)

SMALL = {"width_px": 96, "height_px": 64, "line_time_s": 2e-4, "azimuth_steps": 256, "channels": 16}


@pytest.fixture(scope="module")
def observed(tmp_path_factory) -> Path:
    built, rig, trace = street_sample(0.32, **SMALL)
    out = tmp_path_factory.mktemp("review") / "obs"
    result = observe(built, rig, trace, out, options=ObserveOptions(video=False))
    assert "review.images" in result.timings_s  # timed, and the time returned (not written)
    return out


def results_of(folder: Path) -> Results:
    return Results.read(ObservationDir(folder).results)


def test_the_writer_leaves_both_images_listed_with_their_hashes(observed):
    obs = ObservationDir(observed)
    listed = {e.path: e for e in results_of(observed).files if e.pass_name == "review"}
    assert {obs.file(rel) for rel in listed} == {obs.contact_sheet, obs.lidar_topdown}
    for rel, e in listed.items():
        assert obs.file(rel).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert e.sha256 == file_sha256(str(obs.file(rel)))
    assert not list(obs.review.glob(".*"))  # no temporary file left behind


def test_contact_sheet_has_one_row_per_chosen_frame_and_the_passes_side_by_side(observed):
    frames = results_of(observed).cameras["front_camera"].frames
    rows = min(4, len(frames))
    tile_h = round(TILE_W * SMALL["height_px"] / SMALL["width_px"])
    obs = ObservationDir(observed)
    sheet = np.asarray(Image.open(obs.contact_sheet).convert("RGB"))
    assert sheet.shape == (rows * (LABEL_H + tile_h + GAP), len(SHEET_PASSES) * TILE_W + (len(SHEET_PASSES) + 1) * GAP, 3)
    # The semantic tile of the first row shows only the palette colours of the classes in that frame's file.
    first = evenly_spaced(frames, 4)[0].tick
    sem = decode_semantic_rgb(np.asarray(Image.open(obs.file(obs.frame_name("front_camera", first, "semantic")))))
    allowed = {tuple(c) for c in palette(np.unique(sem))}
    x0 = GAP + SHEET_PASSES.index("semantic") * (TILE_W + GAP)
    tile = sheet[LABEL_H:LABEL_H + tile_h, x0:x0 + TILE_W].reshape(-1, 3)
    assert {tuple(c) for c in np.unique(tile, axis=0)} <= allowed
    depth_tile = sheet[LABEL_H:LABEL_H + tile_h, GAP + TILE_W + GAP:GAP + 2 * TILE_W + GAP]
    assert len(np.unique(depth_tile.reshape(-1, 3), axis=0)) > 10  # colour-mapped, not flat


def test_evenly_spaced_frames_run_from_first_to_last():
    assert evenly_spaced(list(range(7)), 4) == [0, 2, 4, 6]
    assert evenly_spaced([1, 2], 4) == [1, 2]


def _lit(img: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pixels of a plotted point (saturated colour; rings, labels and the sensor marker are grey)."""
    rgb = img.astype(np.int64)
    return np.nonzero(rgb.max(axis=2) - rgb.min(axis=2) > 100)


def test_lidar_review_puts_the_sensors_left_on_the_left_and_forward_up():
    n = REVIEW_TOPDOWN_PX
    rows, cols = _lit(lidar_review(np.array([[0.0, 15.0, 0.0]]), "left", range_m=40.0))  # +y: the sensor's left
    assert len(cols) and cols.max() < n // 2 - 10 and abs(rows.mean() - n / 2) < 3
    rows, cols = _lit(lidar_review(np.array([[15.0, 0.0, 0.0]]), "ahead", range_m=40.0))  # +x: forward
    assert len(rows) and rows.max() < n // 2 - 10 and abs(cols.mean() - n / 2) < 3


def test_lidar_topdown_from_a_folder_reads_the_written_sweep(observed, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(observed, folder)
    sweeps = results_of(folder).sweeps["roof_lidar"]
    tick = sweeps[len(sweeps) // 2].tick
    ply = ObservationDir(folder).file(ObservationDir.frame_name("roof_lidar", tick, "lidar"))
    assert len(read_ply(ply)["x"]) > 100
    # Replace the middle sweep by one point 10 m to the sensor's left (+y) and 1 m up: it must show on the left.
    one = {"x": np.array([0.0]), "y": np.array([10.0]), "z": np.array([1.0]), "intensity": np.array([0.5]),
           "instance_id": np.array([1], np.uint32)}
    write_ply_ascii(ply, one)
    paths = write_review_images(folder)
    assert paths["lidar_topdown"] == ObservationDir(folder).lidar_topdown
    img = np.asarray(Image.open(paths["lidar_topdown"]).convert("RGB"))
    assert img.shape == (REVIEW_TOPDOWN_PX, REVIEW_TOPDOWN_PX, 3)
    rows, cols = _lit(img)
    assert len(cols) and cols.max() < REVIEW_TOPDOWN_PX // 2 - 10


def test_same_folder_same_bytes(observed, tmp_path):
    folder = tmp_path / "again"
    shutil.copytree(observed, folder)
    write_review_images(folder)
    again, first = ObservationDir(folder), ObservationDir(observed)
    assert again.contact_sheet.read_bytes() == first.contact_sheet.read_bytes()
    assert again.lidar_topdown.read_bytes() == first.lidar_topdown.read_bytes()


def test_a_folder_without_cameras_or_lidar_gets_no_images(tmp_path):
    obs = ObservationDir(tmp_path)
    empty = Results(version="test", passes=[], sensors={}, cameras={}, sweeps={}, files=[])
    obs.results.write_text(empty.line())
    assert write_review_images(tmp_path) == {}
    assert not obs.review.exists()


def _masked_dots(img: np.ndarray, rr: np.ndarray, cc: np.ndarray, colours: np.ndarray, dot_px: int) -> None:
    """The numpy drawing the compiled :func:`~simready.measurement.review_kernels.dots` replaced."""
    n_r, n_c = img.shape[:2]
    for dr in range(dot_px):
        for dc in range(dot_px):
            ok = (rr + dr >= 0) & (rr + dr < n_r) & (cc + dc >= 0) & (cc + dc < n_c)
            img[rr[ok] + dr, cc[ok] + dc] = colours[ok]


@pytest.mark.parametrize("dot_px", [1, 2, 3])
def test_draw_points_same_pixels_as_masked_numpy(dot_px: int) -> None:
    """Points drawn by the compiled pass: the pixels of the masked numpy assignment, overlaps (a later point over
    an earlier one) and points off the canvas included."""
    from simready.measurement.review_images import draw_points, height_colours, topdown_canvas

    rng = np.random.default_rng(dot_px)
    pts = np.concatenate([rng.normal(size=(5000, 3)) * 30.0, np.repeat(rng.normal(size=(50, 3)), 4, axis=0)])
    colours = rng.integers(0, 256, (len(pts), 3)).astype(np.uint8)
    colours[:2500] = height_colours(pts[:2500, 2])
    expected, to_px = topdown_canvas(40.0)
    got = expected.copy()
    _masked_dots(expected, *to_px(pts[:, 0], pts[:, 1]), colours, dot_px)
    draw_points(got, to_px, pts, colours, dot_px)
    assert np.array_equal(got, expected)
    assert np.array_equal(draw_points(got.copy(), to_px, pts[:0], colours[:0], dot_px), got)


@pytest.mark.parametrize("dot_px", [1, 2])
def test_heights_drawn_in_one_pass_are_the_colours_and_map_of_the_numpy_passes(dot_px: int) -> None:
    """A sweep drawn by ``draw_heights`` (the top-down map and the height colours per point, compiled): the pixels
    of ``height_colours`` and ``draw_points`` over the canvas's map, points off the canvas and past the colour
    ramp's ends included; the review video's frame and the review PNG's ranges."""
    from simready.measurement.review_images import (REVIEW_TOPDOWN_PX, draw_heights, draw_points, height_colours,
                                                    lidar_topdown, topdown_canvas)

    rng = np.random.default_rng(10 + dot_px)
    pts = np.concatenate([rng.normal(size=(20000, 3)) * [40.0, 40.0, 3.0], np.repeat(rng.normal(size=(50, 3)), 4,
                                                                                          axis=0)])
    for range_m, size_px in ((60.0, 384), (13.7, 384), (37.0, REVIEW_TOPDOWN_PX)):
        expected, to_px = topdown_canvas(range_m, size_px)
        got = expected.copy()
        draw_points(expected, to_px, pts, height_colours(pts[:, 2]), dot_px)
        assert np.array_equal(draw_heights(got, range_m, pts, dot_px), expected)
    if dot_px == 1:
        expected, to_px = topdown_canvas(60.0)
        assert np.array_equal(lidar_topdown(pts, 120.0), draw_points(expected, to_px, pts, height_colours(pts[:, 2])))


def test_radar_topdown_background_drawn_once_is_the_same_picture() -> None:
    """A radar video frame over its background drawn once per radar: the pixels of a frame drawn from scratch,
    and the frame the caller's own (the background is not written through)."""
    import math
    from types import SimpleNamespace

    from simready.measurement.review_images import TOPDOWN_PX, TOPDOWN_RANGE_M, topdown_canvas
    from simready.measurement.video import radar_topdown

    rng = np.random.default_rng(7)
    k = 12
    det = SimpleNamespace(range_m=rng.uniform(1, 80, k), elevation_rad=rng.normal(0, .05, k),
                          azimuth_rad=rng.normal(0, .3, k), radial_velocity_mps=rng.normal(0, 8, k))
    model = SimpleNamespace(max_range_m=150.0, hfov_deg=90.0)
    first = radar_topdown(det, model)  # type: ignore[arg-type]
    first[:] = 7
    again = radar_topdown(det, model)  # type: ignore[arg-type]
    expected, to_px = topdown_canvas(min(model.max_range_m, TOPDOWN_RANGE_M))
    r = np.linspace(0.0, min(model.max_range_m, TOPDOWN_RANGE_M), 400)
    for az in (-0.5, 0.5):
        a = math.radians(model.hfov_deg) * az
        rr, cc = to_px(r * math.cos(a), r * math.sin(a))
        ok = (rr >= 0) & (rr < TOPDOWN_PX) & (cc >= 0) & (cc < TOPDOWN_PX)
        expected[rr[ok], cc[ok]] = (90, 90, 0)
    drawn = again != expected
    # Only the detections' dots differ from the background drawn from scratch.
    x = det.range_m * np.cos(det.elevation_rad) * np.cos(det.azimuth_rad)
    y = det.range_m * np.cos(det.elevation_rad) * np.sin(det.azimuth_rad)
    rows, cols = to_px(x, y)
    near = np.zeros(drawn.shape[:2], bool)
    for r0, c0 in zip(rows, cols):
        near[max(r0 - 2, 0):r0 + 3, max(c0 - 2, 0):c0 + 3] = True
    assert drawn.any(axis=2)[~near].sum() == 0 and drawn.any()


def test_topdown_canvas_is_the_callers_own() -> None:
    """The canvas drawn once per range is handed out as a copy: drawing on one leaves the next blank."""
    from simready.measurement.review_images import topdown_canvas

    first, _ = topdown_canvas(30.0)
    blank = first.copy()
    first[:] = 200
    again, to_px = topdown_canvas(30.0)
    assert again.flags.writeable and np.array_equal(again, blank) and (blank == 45).any()
    assert [int(v[0]) for v in to_px(np.array([0.0]), np.array([0.0]))] == [again.shape[0] // 2] * 2
