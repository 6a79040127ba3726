"""Review images of an observations folder (SPEC §10): what a reviewer looks at before opening any file.

:func:`write_review_images` reads a written folder (``results.json`` and the
files it lists) and writes, atomically, under ``<observations>/review/``:

* ``contact_sheet.png`` — a few evenly spaced frames of every camera, one row
  each: the rgb, depth (colour-mapped, near warm), id (one colour per
  instance) and semantic (one colour per class) passes side by side, each row
  labelled with the sensor, tick and time. A pass that was not rendered shows
  as a grey tile naming it.
* ``lidar_topdown.png`` — one LiDAR sweep (the middle one) drawn from above in
  the sensor frame at each beam's time: forward (+x) up and the sensor's right
  (−y) on the right of the image, range rings every 10 m, points coloured by
  height.

Why numpy + PIL rather than matplotlib: the images must be cheap (they are
made for every observed sample) and byte-identical for the same inputs
(matplotlib's import alone costs more than drawing these). The top-down and
palette helpers here are the ones the review videos use too.
"""

from __future__ import annotations

import io
from functools import lru_cache
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from PIL import Image, ImageDraw, ImageFont

from simready.common.atomic import write_bytes_atomic
from simready.artifacts.layout import ObservationDir
from simready.artifacts.records import FileEntry, LidarSweep, Results
from simready.sensors_hw.camera import decode_depth, decode_id_rgb, decode_semantic_rgb, read_depth_file
from simready.sensors_hw.lidar import read_ply

#: Camera passes of a contact-sheet row, left to right.
SHEET_PASSES = ("rgb", "depth", "id", "semantic")
#: Contact sheet: width of one pass tile, height of a row's label strip, gap between tiles (pixels).
TILE_W = 320
LABEL_H = 20
GAP = 4
#: Depth colour map: log-scaled from 0 to this range (metres); farther and nothing-seen are black.
DEPTH_RANGE_M = 200.0
#: Top-down review images (videos): size (pixels) and the largest range shown (metres). 384 px (0.31 m a pixel
#: over ±60 m): x264 spent ~40 % less on a LiDAR or radar top-down than at 512 px, and those two videos were two
#: thirds of the encoders' CPU in the default suite's observation (issue 29); the review PNG keeps its 800 px.
TOPDOWN_PX = 384
TOPDOWN_RANGE_M = 60.0
#: The review PNG of a sweep: size (pixels) and largest range shown (metres); rings every RING_M.
REVIEW_TOPDOWN_PX = 800
REVIEW_TOPDOWN_RANGE_M = 80.0
RING_M = 10.0
BACKGROUND = (24, 24, 24)
#: zlib level of the review PNGs (3: a fraction of the default's time, a little larger).
PNG_LEVEL = 3


# --- shared drawing helpers (videos and review images) -------------------------------------


def height_colours(z: NDArray[np.float64], lo: float = -2.5, hi: float = 3.0) -> NDArray[np.uint8]:
    """Blue (low) → green → red (high), for top-down point clouds; z in metres, sensor frame."""
    s = np.clip((z - lo) / (hi - lo), 0.0, 1.0)
    r = np.clip(2.0 * s - 1.0, 0.0, 1.0)
    g = 1.0 - np.abs(2.0 * s - 1.0)
    b = np.clip(1.0 - 2.0 * s, 0.0, 1.0)
    return (np.stack([r, g, b], axis=1) * 255).astype(np.uint8)


def topdown_canvas(range_m: float, size_px: int = TOPDOWN_PX, ring_m: float = RING_M
                   ) -> tuple[NDArray[np.uint8], Callable[[NDArray, NDArray], tuple[NDArray, NDArray]]]:
    """A black canvas with range rings every ``ring_m``, and the sensor-frame (x, y) → (row, col) map.

    Sensor forward (+x) is up and the sensor's right (−y) is on the right of the image. The canvas is the
    caller's own: a copy of one drawn once per (range, size, ring spacing) (a video draws it every frame).
    """
    blank, to_px = _blank_canvas(float(range_m), int(size_px), float(ring_m))
    return blank.copy(), to_px


@lru_cache(maxsize=16)
def _blank_canvas(range_m: float, size_px: int, ring_m: float
                  ) -> tuple[NDArray[np.uint8], Callable[[NDArray, NDArray], tuple[NDArray, NDArray]]]:
    """:func:`topdown_canvas`'s canvas, drawn (read-only) and its map."""
    n = size_px
    scale = (n / 2) / range_m

    def to_px(x: NDArray, y: NDArray) -> tuple[NDArray, NDArray]:
        return (n / 2 - np.asarray(x) * scale).astype(np.int64), (n / 2 - np.asarray(y) * scale).astype(np.int64)

    img = np.zeros((n, n, 3), np.uint8)
    theta = np.linspace(0.0, 2 * np.pi, 720 if n <= 512 else 8 * n)  # 720: the videos' rings as before
    for r in np.arange(ring_m, range_m + 1e-9, ring_m):
        rr, cc = to_px(r * np.cos(theta), r * np.sin(theta))
        ok = (rr >= 0) & (rr < n) & (cc >= 0) & (cc < n)
        img[rr[ok], cc[ok]] = 45
    k = max(1, n // 512)
    img[n // 2 - 6 * k:n // 2 + 1, n // 2 - k:n // 2 + 1 + k] = 255  # the sensor, pointing forward (up)
    img.setflags(write=False)
    return img, to_px


def draw_points(img: NDArray[np.uint8], to_px: Callable[[NDArray, NDArray], tuple[NDArray, NDArray]],
                points_sensor: NDArray, colours: NDArray[np.uint8], dot_px: int = 1) -> NDArray[np.uint8]:
    """Plot sensor-frame points (M, ≥2) with their colours (M, 3) onto ``img`` in place (clipped), each as
    a ``dot_px`` × ``dot_px`` square whose top-left pixel is the point's."""
    if len(points_sensor):
        from simready.measurement.review_kernels import dots  # numba: only where points are drawn

        rr, cc = to_px(points_sensor[:, 0], points_sensor[:, 1])
        # One compiled pass (the masked numpy assignment per offset was most of a LiDAR video frame's cost).
        dots(img, np.ascontiguousarray(rr, np.int64), np.ascontiguousarray(cc, np.int64),
             np.ascontiguousarray(colours, np.uint8), int(dot_px))
    return img


def lidar_topdown(points_sensor: NDArray[np.float64], max_range_m: float) -> NDArray[np.uint8]:
    """Top-down review frame of a sweep (sensor frame, forward up, right on the right), coloured by height."""
    range_m = min(max_range_m, TOPDOWN_RANGE_M)
    img, _ = topdown_canvas(range_m)
    if len(points_sensor):
        draw_heights(img, float(range_m), points_sensor)
    return img


def draw_heights(img: NDArray[np.uint8], range_m: float, points_sensor: NDArray, dot_px: int = 1,
                 lo: float = -2.5, hi: float = 3.0) -> NDArray[np.uint8]:
    """:func:`draw_points` of sensor-frame points (M, ≥3) in their :func:`height_colours` onto a
    :func:`topdown_canvas` ``img`` of ``range_m``, in one compiled pass over the points
    (:func:`~simready.measurement.review_kernels.height_dots`: the same pixels; a LiDAR video frame's colours and
    map as numpy passes were over half its time)."""
    from simready.measurement.review_kernels import height_dots  # numba: only where points are drawn

    half = img.shape[0] / 2
    height_dots(img, np.ascontiguousarray(points_sensor, np.float64), half, half / range_m, lo, hi - lo,
                int(dot_px))
    return img


def palette(ids: NDArray[np.integer]) -> NDArray[np.uint8]:
    """A stable colour per id (0 black), for id / semantic review images: the low 24 bits of id × 2654435761
    (Knuth's multiplicative hash), R the high byte, each channel at least 64.

    In uint32 arithmetic: a product's low 24 bits are those of its factors' low 24 bits, so wrapping at 2^32
    gives what the uint64 product did, in a sixth of its time (a 320 × 180 tile 1.8 -> 0.3 ms)."""
    h = ids.astype(np.uint32) * np.uint32(2654435761)
    rgb = np.empty((*ids.shape, 3), np.uint8)
    for k, shift in enumerate((16, 8, 0)):
        rgb[..., k] = (h >> np.uint32(shift)).astype(np.uint8)
    rgb |= np.uint8(64)
    rgb[ids == 0] = 0
    return rgb


#: :func:`depth_colours`' ramp (near last): a small "inferno"-like one, black → purple → red → orange → pale yellow.
DEPTH_STOPS = np.array([[0, 0, 4], [87, 16, 110], [188, 55, 84], [249, 142, 9], [252, 255, 164]], np.float64)
DEPTH_STOPS.setflags(write=False)


def depth_colours(depth_m: NDArray[np.floating]) -> NDArray[np.uint8]:
    """Depth (metres, +inf nothing) → RGB: log-scaled, near yellow-white through red to dark purple, far black.

    The ramp between :data:`DEPTH_STOPS` compiled (:func:`~simready.measurement.review_kernels.ramp`, the same
    float operations as its numpy form, the same bytes): a 320 × 180 tile 6.3 -> 0.56 ms."""
    from simready.measurement.review_kernels import ramp  # numba: only where depth is drawn

    d = np.asarray(depth_m, np.float64)
    with np.errstate(invalid="ignore"):
        s = np.clip(1.0 - np.log1p(np.where(np.isfinite(d), d, np.inf)) / np.log1p(DEPTH_RANGE_M), 0.0, 1.0)
    rgb = np.empty((*s.shape, 3), np.uint8)
    ramp(s.reshape(-1), DEPTH_STOPS, rgb.reshape(-1, 3))
    return rgb


# --- reading a folder ----------------------------------------------------------------------


def _files_by_key(results: Results) -> dict[tuple[str | None, int | None, str], FileEntry]:
    """results.json's file entries by (sensor, tick, pass)."""
    return {(e.sensor, e.tick, e.pass_name): e for e in results.files}


def evenly_spaced(items: Sequence[Any], count: int) -> list[Any]:
    """``count`` items spread over ``items`` from the first to the last (all when there are fewer)."""
    if len(items) <= count:
        return list(items)
    if count <= 1:
        return [items[len(items) // 2]]
    idx = np.round(np.linspace(0, len(items) - 1, count)).astype(int)
    return [items[i] for i in idx]


def _nearest(a: NDArray, size: tuple[int, int]) -> NDArray:
    """``a`` (H, W, …) sampled at the nearest source pixel of each of ``size`` = (h, w) output pixels."""
    h, w = a.shape[:2]
    rows = np.minimum(((np.arange(size[0]) + 0.5) * h / size[0]).astype(np.int64), h - 1)
    cols = np.minimum(((np.arange(size[1]) + 0.5) * w / size[1]).astype(np.int64), w - 1)
    return a.take(rows, axis=0).take(cols, axis=1)  # the pixels of a[rows[:, None], cols], 2-4x faster


def _read_pass(obs_dir: Path, entry: FileEntry, size: tuple[int, int], near_m: float) -> NDArray[np.uint8]:
    """One camera pass file as an RGB review tile of ``size`` = (h, w) pixels (``near_m``: the frame's near
    plane, which the depth file's encoding divides by).

    Depth, id and semantic are sampled (nearest) before they are coloured, so labels stay crisp and
    only tile-many pixels are coloured; rgb is resized bilinearly.
    """
    path = ObservationDir(obs_dir).file(entry.path)
    kind = entry.pass_name
    if kind == "depth":
        h, w = entry.shape  # type: ignore[misc]
        return depth_colours(decode_depth(_nearest(read_depth_file(path).reshape(h, w), size), near_m))
    with Image.open(path) as im:
        if kind == "rgb":
            return np.asarray(im.convert("RGB").resize((size[1], size[0]), Image.Resampling.BILINEAR))
        a = np.asarray(im)
    if kind == "id":
        return palette(decode_id_rgb(_nearest(a, size)))
    return palette(decode_semantic_rgb(_nearest(a, size)))


# --- contact sheet -----------------------------------------------------------------------------


def _font(size: int = 13) -> Any:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has only the fixed bitmap font
        return ImageFont.load_default()


def _placeholder(label: str, size: tuple[int, int]) -> NDArray[np.uint8]:
    """A grey tile naming a pass that was not rendered."""
    im = Image.new("RGB", (size[1], size[0]), (70, 70, 70))
    ImageDraw.Draw(im).text((8, size[0] // 2 - 7), f"no {label} pass", fill=(200, 200, 200), font=_font())
    return np.asarray(im)


def contact_sheet(obs_dir: Path, results: Results, frames_per_camera: int = 4) -> NDArray[np.uint8] | None:
    """The contact sheet image (H, W, 3), or None when the folder has no camera frame.

    Rows: for each camera (results.json order), ``frames_per_camera`` evenly
    spaced frames; columns: :data:`SHEET_PASSES`; each row has a label strip
    "sensor · tick · t0" above it.
    """
    files = _files_by_key(results)
    rows: list[NDArray[np.uint8]] = []
    for camera, info in results.cameras.items():
        w, h = info.projection.width_px, info.projection.height_px
        tile_h = max(1, round(TILE_W * h / w))
        for frame in evenly_spaced(info.frames, frames_per_camera):
            tick = frame.tick
            tiles = []
            for p in SHEET_PASSES:
                entry = files.get((camera, tick, p))
                size = (tile_h, TILE_W)
                tiles.append(_placeholder(p, size) if entry is None
                             else _read_pass(obs_dir, entry, size, frame.projection.near_m))
            width = len(SHEET_PASSES) * TILE_W + (len(SHEET_PASSES) + 1) * GAP
            row = Image.new("RGB", (width, LABEL_H + tile_h + GAP), BACKGROUND)
            for i, t in enumerate(tiles):
                row.paste(Image.fromarray(t), (GAP + i * (TILE_W + GAP), LABEL_H))
            text = f"{camera}   tick {tick}   t0 = {frame.t0_s:.3f} s   ({' | '.join(SHEET_PASSES)})"
            ImageDraw.Draw(row).text((GAP, 3), text, fill=(235, 235, 235), font=_font())
            rows.append(np.asarray(row))
    if not rows:
        return None
    width = max(r.shape[1] for r in rows)
    return np.concatenate([np.pad(r, ((0, 0), (0, width - r.shape[1]), (0, 0))) for r in rows], axis=0)


# --- LiDAR top-down ----------------------------------------------------------------------------


def review_range_m(points_sensor: NDArray) -> float:
    """The range a review top-down shows: the 98th-percentile horizontal range rounded up to whole rings,
    at least 2 rings and at most :data:`REVIEW_TOPDOWN_RANGE_M` (metres)."""
    if len(points_sensor) == 0:
        return REVIEW_TOPDOWN_RANGE_M
    r = np.percentile(np.hypot(points_sensor[:, 0], points_sensor[:, 1]), 98.0)
    return float(np.clip(np.ceil(r / RING_M) * RING_M, 2 * RING_M, REVIEW_TOPDOWN_RANGE_M))


def lidar_review(points_sensor: NDArray, label: str, range_m: float | None = None,
                 size_px: int = REVIEW_TOPDOWN_PX) -> NDArray[np.uint8]:
    """A sweep drawn top-down (forward up, the sensor's right on the right) with labelled range rings,
    coloured by height; ``points_sensor`` (M, ≥3) metres in the LiDAR frame (x forward, y left, z up);
    ``range_m`` defaults to :func:`review_range_m`."""
    pts = np.asarray(points_sensor, np.float64).reshape(len(points_sensor), -1)
    range_m = review_range_m(pts) if range_m is None else range_m
    img, to_px = topdown_canvas(range_m, size_px)
    if len(pts):
        draw_heights(img, float(range_m), pts, dot_px=2)
    im = Image.fromarray(img)
    draw = ImageDraw.Draw(im)
    font = _font(12)
    for r in np.arange(2 * RING_M, range_m + 1e-9, 2 * RING_M):
        row, col = to_px(np.array([r]), np.array([0.0]))
        draw.text((int(col[0]) + 3, int(row[0]) + 1), f"{r:.0f} m", fill=(120, 120, 120), font=font)
    draw.text((6, 4), label, fill=(235, 235, 235), font=_font())
    draw.text((6, size_px - 34), "forward up, sensor's right on the right", fill=(160, 160, 160), font=font)
    draw.text((6, size_px - 18), "colour: height z (blue -2.5 m ... red +3 m)", fill=(160, 160, 160), font=font)
    return np.asarray(im)


def _middle_sweep(results: Results) -> tuple[str, LidarSweep] | None:
    """(LiDAR name, sweep record) of the first LiDAR's middle sweep that wrote a point cloud."""
    files = _files_by_key(results)
    for sensor, sweeps in results.sweeps.items():
        written = [s for s in sweeps if isinstance(s, LidarSweep) and (sensor, s.tick, "lidar") in files]
        if written:
            return sensor, written[len(written) // 2]
    return None


# --- writing -----------------------------------------------------------------------------------


def png_bytes(image: NDArray, compress_level: int = PNG_LEVEL) -> bytes:
    """PNG bytes of an 8-bit image (zlib level: 1 for the observation passes, where speed matters)."""
    buf = io.BytesIO()
    Image.fromarray(image).save(buf, format="PNG", compress_level=compress_level)
    return buf.getvalue()


def write_review_images(obs_dir: Path, results: Results | None = None, *,
                        frames_per_camera: int = 4) -> dict[str, Path]:
    """Write ``review/contact_sheet.png`` and ``review/lidar_topdown.png`` for an observations folder.

    Args:
        obs_dir: the folder (SPEC §10 layout).
        results: its results.json record, when the caller has it in memory
            (the observation writer, before it writes results.json); read from
            the folder otherwise.
        frames_per_camera: rows of the contact sheet per camera.

    Returns:
        ``{"contact_sheet": path, "lidar_topdown": path}``, with only the
        images the folder has data for (no camera frame, no contact sheet;
        no LiDAR sweep, no top-down).
    """
    folder = ObservationDir(Path(obs_dir))
    results = Results.read(folder.results) if results is None else results
    out: dict[str, Path] = {}
    sheet = contact_sheet(folder.root, results, frames_per_camera)
    if sheet is not None:
        out["contact_sheet"] = write_bytes_atomic(folder.contact_sheet, png_bytes(sheet))
    picked = _middle_sweep(results)
    if picked is not None:
        sensor, sweep = picked
        cloud = read_ply(folder.file(_files_by_key(results)[(sensor, sweep.tick, "lidar")].path))
        pts = np.stack([cloud["x"], cloud["y"], cloud["z"]], axis=1).astype(np.float64)
        label = f"{sensor}   tick {sweep.tick}   t0 = {sweep.t0_s:.3f} s   {len(pts)} points"
        out["lidar_topdown"] = write_bytes_atomic(folder.lidar_topdown,
                                                  png_bytes(lidar_review(pts, label)))
    return out
