"""The review videos (``video/<sensor>.mp4``): one frame per sensor sample; LiDAR and radar drawn top-down,
the sensor's forward up and its right on the right."""

from __future__ import annotations

import math
import os
import queue
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class _Stream:
    """One review video as its encoder sees it: its file and its (padded) frames' size and rate."""

    path: Path
    width_px: int
    height_px: int
    fps: float


def encoder_command(streams: Sequence[_Stream], pipe_fds: Sequence[int] = ()) -> list[str]:
    """The ffmpeg command that encodes each stream's RGB24 frames into its file (H.264, yuv420p): the first
    stream's frames read from ffmpeg's standard input, each other's from the pipe ``pipe_fds`` gives it, in order.
    Per stream the arguments imageio-ffmpeg's ``write_frames`` gave it, in its order, then x264's thread count (a
    single stream's command is the one each video had when it had an ffmpeg of its own)."""
    sources = ["-", *(f"pipe:{fd:d}" for fd in pipe_fds)]
    if len(sources) != len(streams):
        raise ValueError(f"{len(streams)} streams, {len(sources)} inputs")
    command = [imageio_ffmpeg.get_ffmpeg_exe(), "-y"]
    for s, source in zip(streams, sources):
        command += ["-f", "rawvideo", "-vcodec", "rawvideo", "-s", f"{s.width_px:d}x{s.height_px:d}", "-pix_fmt",
                    "rgb24", "-r", str(Fraction(s.fps).limit_denominator()), "-i", source]
    for k, s in enumerate(streams):
        command += [*(["-map", f"{k:d}:v"] if len(streams) > 1 else []), "-an", "-vcodec", "libx264", "-pix_fmt",
                    "yuv420p", "-crf", str(X264_CRF), "-v", "error", "-preset", X264_PRESET, "-threads",
                    str(X264_THREADS), str(s.path)]
    return command


class _Encoder:
    """One ffmpeg process encoding several review videos, each read from a pipe of its own.

    One process a folder rather than one a video: an ffmpeg's start costs ~12 ms of CPU (its 170 MB static binary
    mapped, its libraries set up), and a folder had three. Each stream keeps an x264 of its own with its own
    settings, so each file is the bytes its own process wrote (sha256 of the default suite's videos).

    Started without a ``preexec_fn`` (``process_group=0`` puts it in a process group of its own, as imageio's
    ``os.setpgrp`` did, so a Ctrl-C at the terminal reaches the caller, which ends it, not the encoder), so
    Python starts it with ``vfork``: a fork of an observation worker copied its page tables (hundreds of MB)
    for a process that at once replaced them, ~10-20 ms of CPU per video.
    """

    def __init__(self, streams: Sequence[_Stream]) -> None:
        self.paths = [s.path for s in streams]
        pipes = [os.pipe() for _ in streams[1:]]
        try:
            self.process = subprocess.Popen(encoder_command(streams, [r for r, _ in pipes]), stdin=subprocess.PIPE,
                                            stdout=subprocess.DEVNULL, pass_fds=[r for r, _ in pipes],
                                            process_group=0)
        except BaseException:
            for pair in pipes:
                os.close(pair[0])
                os.close(pair[1])
            raise
        for r, _ in pipes:
            os.close(r)  # ffmpeg's alone now: a gone ffmpeg breaks our writes
        first: IO[bytes] = self.process.stdin  # type: ignore[assignment]
        #: Each stream's input, in ``streams``' order.
        self.inputs: list[IO[bytes]] = [first, *(os.fdopen(w, "wb") for _, w in pipes)]

    def failed(self, code: int) -> OSError:
        names = ", ".join(str(p) for p in self.paths)
        return OSError(f"ffmpeg exited with status {code} writing the review video{'s' if len(self.paths) > 1 else ''}"
                       f" {names}" + ("" if code else " before it read every frame"))

    def kill(self) -> None:
        self.process.kill()
        for f in self.inputs:
            try:
                f.close()  # the pipe's descriptor now, not at garbage collection (its flush may fail)
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


class Videos:
    """A folder's review videos, encoded by one ffmpeg process (:class:`_Encoder`), each written frame by frame
    through its :class:`Video`.

    ffmpeg is started once every video has its first frame (its size) or has ended without one; until then the
    frames wait in their videos' queues. Each video has a thread of its own that feeds its pipe (the caller goes
    on rendering while ffmpeg encodes). A video's queue is not bounded: one ffmpeg reads its inputs in step (it
    stops reading one whose encoded stream is ahead of another's by 100 ms), and x264 holds back a number of
    frames, not seconds, so a faster sensor's frames wait until a slower one's encoder gives its first; a bounded
    queue would stop the caller there, before it rendered the slower sensor's frames: a deadlock. The wait is
    about a second of the faster sensor's frames; a video whose sensor is done should be :meth:`Video.finish`-ed
    at once, so the others' frames do not wait for its end. An encoder's failure is raised by the next
    :meth:`Video.add` or by :meth:`close`, once.
    """

    def __init__(self) -> None:
        self.members: list[Video] = []
        self.encoder: _Encoder | None = None
        self._feeders: list[threading.Thread] = []
        #: The first failure (ffmpeg's start, a pipe, its exit status); raised once (``_reported``), and no ffmpeg
        #: is started after it.
        self._error: BaseException | None = None
        self._reported = False
        self._lock = threading.Lock()
        self._open_inputs = 0
        self._closed = False

    def video(self, path: Path, fps: float) -> Video:
        """A new video of the folder (before any frame is added to any)."""
        if self.encoder is not None or any(v.frames for v in self.members):
            raise RuntimeError("a review video added after the first frame")
        v = Video(path, fps, self)
        self.members.append(v)
        return v

    def _maybe_start(self) -> None:
        """Start ffmpeg and the feeders once every video has its first frame or has ended without one."""
        if self.encoder is not None or self._closed or self._error is not None:
            return
        if any(v.size is None and not v.ended for v in self.members):
            return
        shown = [v for v in self.members if v.size is not None]
        if not shown:
            return
        for v in shown:
            v.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.encoder = _Encoder([_Stream(v.path, v.size[1], v.size[0], v.fps) for v in shown])  # type: ignore[index]
        except BaseException as exc:
            self._error = exc
            return
        self._open_inputs = len(shown)
        for v, pipe in zip(shown, self.encoder.inputs):
            t = threading.Thread(target=self._feed, args=(v, pipe), name=f"video {v.path.name}", daemon=True)
            self._feeders.append(t)
            t.start()

    def _feed(self, v: Video, pipe: IO[bytes]) -> None:
        encoder = self.encoder
        assert encoder is not None
        ended = False  # the caller's finish() taken from the queue
        try:
            while (frame := v.queue.get()) is not None:
                try:
                    pipe.write(memoryview(np.ascontiguousarray(frame)).cast("B"))
                except BrokenPipeError as exc:  # ffmpeg is gone (its own error went to stderr): say which and how
                    raise encoder.failed(encoder.process.wait()) from exc
            ended = True
            try:
                pipe.close()  # flushes what the pipe's buffer holds: a gone ffmpeg breaks it
            except BrokenPipeError as exc:
                raise encoder.failed(encoder.process.wait()) from exc
        except BaseException as exc:  # raised on the caller's thread by add() or close()
            with self._lock:
                self._error = self._error or exc
            encoder.kill()
            while not ended and v.queue.get() is not None:  # take the caller's frames until its finish()
                pass
        finally:
            with self._lock:
                self._open_inputs -= 1
                last = self._open_inputs == 0
            if last:  # every input ended: ffmpeg writes the files' ends and exits
                code = encoder.process.wait()
                with self._lock:
                    if code != 0 and self._error is None:
                        self._error = encoder.failed(code)

    def finish(self) -> None:
        """End every video's input: ffmpeg takes the frames still queued, flushes and exits in the background."""
        for v in self.members:
            v.finish()

    def close(self) -> None:
        """Finish every video and wait until their files are complete (or ffmpeg has failed: raised once)."""
        self.finish()
        for t in self._feeders:
            t.join()
        self._closed = True
        self._raise()

    def kill(self) -> None:
        """Stop encoding at once (an exception is on its way out): the files are not complete."""
        self._closed = True
        if self.encoder is not None:
            self.encoder.kill()
        for v in self.members:
            v.finish()
        for t in self._feeders:
            t.join()

    def _raise(self) -> None:
        with self._lock:
            error, self._reported = (None if self._reported else self._error), self._reported or self._error is not None
        if error is not None:
            raise error


class Video:
    """One sensor's review video, written frame by frame into its folder's :class:`Videos` (a video of its own
    when made alone).

    :meth:`add` queues a frame for the encoder's feeder thread; :meth:`finish` ends the input (the sensor is done:
    ffmpeg flushes the file's last frames in the background while the caller writes its other files);
    :meth:`close` waits until every video of the folder is complete.
    """

    def __init__(self, path: Path, fps: float, videos: Videos | None = None) -> None:
        self.path, self.fps, self.frames = path, fps, 0
        self.videos = videos if videos is not None else Videos()
        if videos is None:
            self.videos.members.append(self)
        #: Frames for the encoder until its feeder takes them, then None for the end of the input.
        self.queue: queue.SimpleQueue[NDArray[np.uint8] | None] = queue.SimpleQueue()
        #: (rows, columns) of the first frame, which every frame has.
        self.size: tuple[int, int] | None = None
        self.ended = False

    def add(self, image: NDArray[np.uint8]) -> None:
        self.videos._raise()
        if self.ended:
            raise ValueError(f"a frame added to the review video {self.path} after its end")
        padded = _pad16(image)
        if self.size is None:
            self.size = (padded.shape[0], padded.shape[1])
        elif padded.shape != (*self.size, 3):
            raise ValueError(f"video frame of shape {padded.shape}, not the first frame's {(*self.size, 3)}")
        # The queue keeps the frame until the encoder takes it: a copy of its own, whatever the caller does next.
        self.queue.put(padded if padded is not image else image.copy())
        self.frames += 1
        if self.frames == 1:
            self.videos._maybe_start()

    def finish(self) -> None:
        """End the input: the encoder takes the frames still queued, flushes and exits in the background."""
        if not self.ended:
            self.ended = True
            self.queue.put(None)
            self.videos._maybe_start()

    def close(self) -> None:
        """Finish the folder's videos and wait until their files are complete."""
        self.videos.close()


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
    if len(rr):  # 5 x 5 px dots centred on each detection, drawn by the top-downs' compiled pass
        from simready.measurement.review_kernels import dots  # numba: only where detections are drawn

        dots(img, np.ascontiguousarray(rr - 2, np.int64), np.ascontiguousarray(cc - 2, np.int64), colour, 5)
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
