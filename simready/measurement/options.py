"""What an observation renders and how: the pass names, :class:`ObserveOptions`, and the input checks made
before anything is written (SPEC §10)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from simready.common.errors import OutputExistsError, SimreadyError
from simready.sensors_hw.camera import DEPTH_FORMATS
from simready.sensors_hw.camera import PASSES as CAMERA_PASSES
from simready.sensors_hw.lidar import LIDAR_FORMATS
from simready.sensors_hw.schedule import POLICIES

#: Pass names ``--passes`` accepts: the camera passes, one per other sensor type, and the SPEC §11 truth.
PASSES: tuple[str, ...] = ("rgb", "depth", "id", "semantic", "lidar", "radar", "truth")

#: PNG zlib level of the camera passes by default: 1, Up-filtered rows with zlib's run-length strategy
#: (:data:`simready.sensors_hw.camera.encoding.PNG_RLE_LEVEL`), several times faster than 6 for images that stay small.
PNG_COMPRESS_LEVEL = 1
#: The opt-in compressed variant of each published file (:meth:`ObserveOptions.compressed`), lossless:
#: ``depth.f32.bin.zst`` (byte planes + zstd), ``<tick>.ply.zst`` (the ASCII PLY's bytes in one zstd frame) and
#: the same PNGs at zlib level 6 (the same pixels; on a 1280x720 street frame rgb ~1.3x, id ~2.7x and semantic ~1.7x
#: smaller than at level 1, for ~2-3x its encoding time).
COMPRESSED = {"depth_format": "f32.zst", "lidar_format": "ascii.zst", "png_compress_level": 6}


class PassError(SimreadyError):
    kind = "passes"


class ObservationError(SimreadyError):
    kind = "observe"


def parse_passes(spec: str | Iterable[str] | None) -> tuple[str, ...]:
    """``"rgb,depth"`` or ``["rgb", "depth"]`` → passes in canonical order; None = every pass."""
    if spec is None:
        return PASSES
    names = [p.strip() for p in (spec.split(",") if isinstance(spec, str) else spec)]
    names = [p for p in names if p]
    unknown = sorted(set(names) - set(PASSES))
    if unknown:
        raise PassError("--passes", ",".join(unknown), f"unknown pass name(s); expected some of {','.join(PASSES)}")
    if not names:
        raise PassError("--passes", "", f"no pass selected; expected some of {','.join(PASSES)}")
    return tuple(p for p in PASSES if p in names)


def check_output_dir(out_dir: str | Path) -> Path:
    """The output folder must be new or empty (SPEC §10)."""
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise OutputExistsError(out, "", "output folder exists and is not empty; choose a new or empty folder")
    return out


class Progress(Protocol):
    def update(self, n: int = 1) -> Any: ...

    def close(self) -> Any: ...


@dataclass(frozen=True)
class ObserveOptions:
    """How to observe (all recorded in ``render.json``).

    Attributes:
        passes: subset of :data:`PASSES`.
        lidar_format: ``ascii`` (SPEC §10) or ``binary`` (little-endian, same columns), or either one's opt-in
            compressed variant ``ascii.zst`` / ``binary.zst`` (``<tick>.ply.zst``: the PLY's bytes as one zstd
            frame, an ASCII sweep ~4x smaller; :data:`~simready.sensors_hw.lidar.LIDAR_FORMATS`, read by
            :func:`simready.sensors_hw.lidar.read_ply`).
        lidar_time_column: add each point's firing time ``t`` to the PLY (seconds since the sweep's
            ``sampleTime``; on by default, as SPEC §10 lists it).
        depth_format: ``f32`` (``depth.f32.bin``, SPEC §10) or the opt-in lossless ``f32.zst``
            (``depth.f32.bin.zst``: byte planes + zstd, ~10-15x smaller; read by
            :func:`simready.sensors_hw.camera.read_depth_file`).
        png_compress_level: zlib level (0-9) of the camera passes' PNGs; the pixels are the same at every level.
        video: write ``video/<sensor>.mp4``.
        pairing_policy: camera-centred pairing (:data:`simready.sensors_hw.schedule.POLICIES`).
        from_s: observe only samples whose window starts at or after then, seconds of scenario time
            (None: from the clip start). Ticks keep each sensor's own numbering (tick k still starts at
            ``phase + k/rate``), so a windowed observation's files are named as the full clip's are.
        until_s: observe only samples whose window ends by then (None: the whole clip); with
            ``from_s`` the observed window is [from_s, until_s].
        writer_thread: encode PNG and Parquet on a background thread. Measured on the 200-frame
            1280×720 3-sensor bench sample (2 shared cores): 287 s instead of 407 s, peak resident
            memory 1376 MiB instead of 1209 MiB (the budget is 2 GB).
        truth_thread: compute each frame pair's backward correspondence on a second thread while the
            forward one runs (same results bit for bit; two projections are held at once instead of one).
    """

    passes: tuple[str, ...] = PASSES
    lidar_format: str = "ascii"
    lidar_time_column: bool = True
    depth_format: str = "f32"
    png_compress_level: int = PNG_COMPRESS_LEVEL
    video: bool = True
    pairing_policy: str = "nearest_start"
    from_s: float | None = None
    until_s: float | None = None
    writer_thread: bool = True
    truth_thread: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "passes", parse_passes(self.passes))
        if self.lidar_format not in LIDAR_FORMATS:
            raise ObservationError("options", "lidar_format",
                                   f"must be one of {', '.join(LIDAR_FORMATS)}, got {self.lidar_format!r}")
        if self.depth_format not in DEPTH_FORMATS:
            raise ObservationError("options", "depth_format",
                                   f"must be one of {', '.join(DEPTH_FORMATS)}, got {self.depth_format!r}")
        if isinstance(self.png_compress_level, bool) or self.png_compress_level not in range(10):
            raise ObservationError("options", "png_compress_level",
                                   f"must be an integer 0-9, got {self.png_compress_level!r}")
        if self.pairing_policy not in POLICIES:
            raise ObservationError("options", "pairing_policy", f"must be one of {POLICIES}")
        for name in ("from_s", "until_s"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value >= 0.0):
                raise ObservationError("options", name, f"must be a finite time >= 0 s, got {value!r}")
        if self.from_s is not None and self.until_s is not None and self.from_s > self.until_s:
            raise ObservationError("options", "from_s", f"{self.from_s} s is after until_s {self.until_s} s")

    @classmethod
    def compressed(cls, **options: Any) -> "ObserveOptions":
        """Options that write each published file's opt-in compressed variant (:data:`COMPRESSED`), with
        ``options`` over them; a binary ``lidar_format`` becomes ``binary.zst``."""
        if options.get("lidar_format") in ("ascii", "binary"):
            options["lidar_format"] += ".zst"
        return cls(**{**COMPRESSED, **options})

    @property
    def camera_passes(self) -> tuple[str, ...]:
        return tuple(p for p in CAMERA_PASSES if p in self.passes)
