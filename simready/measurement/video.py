"""The review videos (``video/<sensor>.mp4``): one frame per sensor sample; LiDAR and radar drawn top-down,
the sensor's forward up and its right on the right."""

from __future__ import annotations

import math
import queue
import subprocess
import threading
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import IO

import imageio_ffmpeg
import numpy as np
from numpy.typing import NDArray

from simready.sensors_hw.camera import FramePasses
from simready.sensors_hw.models import RadarModel
from simready.sensors_hw.radar import RadarDetections
from simready.measurement.review_images import TOPDOWN_PX, TOPDOWN_RANGE_M, palette, topdown_canvas


#: x264's speed preset for the review videos: ``veryfast`` spends about half the encoder's CPU of its default
#: (``medium``) on the default suite's clips at the same quality setting (files a few per cent larger); the
#: encoders were 15 % of the observation stage's CPU seconds. The videos are for review: their bytes are the
#: encoder's, outside the byte fingerprints (tests/fingerprint.py).
X264_PRESET = "veryfast"
#: One x264 thread per encoder: an observation worker's encoders run beside its renderer, one worker per core, so
#: the cores are full without x264's threads, whose coordination cost ~7 % of the encoder's CPU seconds (the
#: default suite's videos, 7 runs each: 9 videos 789 -> 729 ms; 8 of them the same bytes, one 15 bytes smaller,
#: PSNR against its frames 45.50 -> 45.49 dB).
X264_THREADS = 1

#: x264's constant rate factor: imageio's ``quality=7`` (``int((1 - 7 / 10) * 51)``), which the videos were
#: written with before the encoder was started here.
X264_CRF = 15

#: H.264 macroblocks: a video's frames are padded (right and bottom, black) to multiples of this.
MACROBLOCK_PX = 16


def encoder_command(path: Path, width_px: int, height_px: int, fps: float) -> list[str]:
    """The ffmpeg command that encodes RGB24 frames read from its standard input into ``path`` (H.264, yuv420p):
    the arguments imageio-ffmpeg's ``write_frames`` gave it, in its order, then x264's thread count."""
    return [imageio_ffmpeg.get_ffmpeg_exe(), "-y", "-f", "rawvideo", "-vcodec", "rawvideo",
            "-s", f"{width_px:d}x{height_px:d}", "-pix_fmt", "rgb24", "-r", str(Fraction(fps).limit_denominator()),
            "-i", "-", "-an", "-vcodec", "libx264", "-pix_fmt", "yuv420p", "-crf", str(X264_CRF),
            "-v", "error", "-preset", X264_PRESET, "-threads", str(X264_THREADS), str(path)]


class _Encoder:
    """One ffmpeg process writing ``path`` from the frames piped to it.

    Started without a ``preexec_fn`` (``process_group=0`` puts it in a process group of its own, as imageio's
    ``os.setpgrp`` did, so a Ctrl-C at the terminal reaches the caller, which ends it, not the encoder), so
    Python starts it with ``vfork``: a fork of an observation worker copied its page tables (hundreds of MB)
    for a process that at once replaced them, ~10-20 ms of CPU per video.
    """

    def __init__(self, path: Path, width_px: int, height_px: int, fps: float) -> None:
        self.path, self.size = path, (height_px, width_px)
        self.process = subprocess.Popen(encoder_command(path, width_px, height_px, fps), stdin=subprocess.PIPE,
                                        stdout=subprocess.DEVNULL, process_group=0)
        self.stdin: IO[bytes] = self.process.stdin  # type: ignore[assignment]

    def write(self, frame: NDArray[np.uint8]) -> None:
        if frame.shape != (*self.size, 3):
            raise ValueError(f"video frame of shape {frame.shape}, not the first frame's {(*self.size, 3)}")
        try:
            self.stdin.write(memoryview(np.ascontiguousarray(frame)).cast("B"))
        except BrokenPipeError as exc:  # ffmpeg is gone (its own error went to stderr): say which and how
            raise self._failed(self.process.wait()) from exc

    def close(self) -> None:
        """End the input and wait for ffmpeg to write the file's end; a failed encoder raises."""
        broken = False
        try:
            self.stdin.close()  # flushes what the pipe's buffer holds: a gone ffmpeg breaks it
        except BrokenPipeError:
            broken = True
        finally:
            code = self.process.wait()
        if code != 0 or broken:
            raise self._failed(code)

    def _failed(self, code: int) -> OSError:
        return OSError(f"ffmpeg exited with status {code} writing the review video {self.path}"
                       + ("" if code else " before it read every frame"))

    def kill(self) -> None:
        self.process.kill()
        try:
            self.stdin.close()  # the pipe's descriptor now, not at garbage collection (its flush may fail)
        except OSError:
            pass
        self.process.wait()


def padded_size(width_px: int, height_px: int) -> tuple[int, int]:
    """A picture's size in its review video: padded to whole macroblocks (the picture at the top left)."""
    return -(-width_px // MACROBLOCK_PX) * MACROBLOCK_PX, -(-height_px // MACROBLOCK_PX) * MACROBLOCK_PX


def _pad16(image: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """Pad to whole macroblocks with black, so ffmpeg never rescales."""
    h, w = image.shape[:2]
    pw, ph = padded_size(w, h)
    ph, pw = ph - h, pw - w
    if ph == 0 and pw == 0:
        return image
    return np.pad(image, ((0, ph), (0, pw), (0, 0)))


class Video:
    """One sensor's review video, written frame by frame.

    The encoder is an ffmpeg process fed through a pipe: a frame written to
    a full pipe waits until ffmpeg has taken the ones before, and at its end
    ffmpeg holds back its last frames until its input ends and then takes a
    while to exit. So the frames go to a thread of the video's own that feeds
    the pipe (the caller goes on rendering while it encodes), :meth:`finish`
    ends the input and lets ffmpeg finish on that thread (the caller writes
    its other files meanwhile, several videos finish together), and
    :meth:`close` waits for it. An encoder's failure is raised by the next
    :meth:`add` or by :meth:`close`.
    """

    #: Frames queued for the encoder before :meth:`add` waits (bounds the memory they hold).
    QUEUE_FRAMES = 8

    def __init__(self, path: Path, fps: float) -> None:
        self.path, self.fps, self.frames = path, fps, 0
        self.encoder: _Encoder | None = None
        self._queue: queue.Queue[NDArray[np.uint8] | None] | None = None
        self._feeder: threading.Thread | None = None
        self._error: BaseException | None = None

    def add(self, image: NDArray[np.uint8]) -> None:
        self._raise()
        if self._feeder is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._queue = queue.Queue(self.QUEUE_FRAMES)
            self._feeder = threading.Thread(target=self._feed, args=(self._queue,), name=f"video {self.path.name}",
                                            daemon=True)
            self._feeder.start()
        padded = _pad16(image)
        # The queue keeps the frame until the encoder takes it: a copy of its own, whatever the caller does next.
        self._queue.put(padded if padded is not image else image.copy())
        self.frames += 1

    def _feed(self, frames: queue.Queue[NDArray[np.uint8] | None]) -> None:
        try:
            while (frame := frames.get()) is not None:
                if self.encoder is None:
                    self.encoder = _Encoder(self.path, frame.shape[1], frame.shape[0], self.fps)
                self.encoder.write(frame)
        except BaseException as exc:  # raised on the caller's thread by add() or close()
            self._error = exc
            if self.encoder is not None:
                self.encoder.kill()
                self.encoder = None
            while frames.get() is not None:  # let the caller's puts through until its finish()
                pass
        finally:
            if self.encoder is not None:
                try:
                    self.encoder.close()
                except BaseException as exc:
                    self._error = self._error or exc
                self.encoder = None

    def finish(self) -> None:
        """End the input: the encoder takes the frames still queued, flushes and exits in the background."""
        if self._feeder is not None and self._queue is not None:
            self._queue.put(None)
            self._queue = None

    def close(self) -> None:
        """Finish the video and wait until its file is complete."""
        self.finish()
        if self._feeder is not None:
            self._feeder.join()
        self._raise()

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error


@lru_cache(maxsize=8)
def _radar_background(rng: float, hfov_deg: float
                      ) -> tuple[NDArray[np.uint8], Callable[[NDArray, NDArray], tuple[NDArray, NDArray]]]:
    """A radar's top-down before its detections (the range rings and the field of view's edges) and its
    (x, y) → (row, col) map: drawn once per radar, each frame a copy (read-only here)."""
    img, to_px = topdown_canvas(rng)
    r = np.linspace(0.0, rng, 400)
    for az in (-0.5, 0.5):
        a = math.radians(hfov_deg) * az
        rr, cc = to_px(r * math.cos(a), r * math.sin(a))
        ok = (rr >= 0) & (rr < TOPDOWN_PX) & (cc >= 0) & (cc < TOPDOWN_PX)
        img[rr[ok], cc[ok]] = (90, 90, 0)
    img.setflags(write=False)
    return img, to_px


def radar_topdown(det: RadarDetections, model: RadarModel) -> NDArray[np.uint8]:
    """Top-down review image of a radar frame: field-of-view edges, detections coloured by radial velocity
    (red approaching, blue receding), forward up, the sensor's right on the right."""
    background, to_px = _radar_background(min(model.max_range_m, TOPDOWN_RANGE_M), float(model.hfov_deg))
    img = background.copy()
    x = det.range_m * np.cos(det.elevation_rad) * np.cos(det.azimuth_rad)
    y = det.range_m * np.cos(det.elevation_rad) * np.sin(det.azimuth_rad)
    rr, cc = to_px(x, y)
    s = np.clip(det.radial_velocity_mps / 10.0, -1.0, 1.0)
    colour = np.stack([np.where(s < 0, 255, 255 * (1 - s)), 255 * (1 - np.abs(s)),
                       np.where(s > 0, 255, 255 * (1 + s))], axis=1).astype(np.uint8)
    for dr in range(-2, 3):
        for dc in range(-2, 3):
            ok = (rr + dr >= 0) & (rr + dr < TOPDOWN_PX) & (cc + dc >= 0) & (cc + dc < TOPDOWN_PX)
            img[rr[ok] + dr, cc[ok] + dc] = colour[ok]
    return img


def camera_review(frame: FramePasses) -> NDArray[np.uint8]:
    """The camera's review frame: RGB when rendered, else depth (near bright), else semantic, else the
    primary hits' entity colours (what the id pass would show)."""
    if frame.rgb is not None:
        return frame.rgb
    if frame.depth is not None:
        d = np.where(np.isfinite(frame.depth), frame.depth, np.inf)
        g = (255.0 * np.clip(1.0 - np.log1p(d) / np.log1p(200.0), 0.0, 1.0)).astype(np.uint8)
        return np.repeat(g[..., None], 3, axis=2)
    if frame.semantic is not None:
        return palette(frame.semantic)
    ids = frame.id if frame.id is not None else frame.hits.compact_id.reshape(frame.sample_times_s.shape[0], -1)
    return palette(ids)
