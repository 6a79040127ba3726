"""The published file encodings of the camera passes (SPEC §10).

How the camera passes are stored in an observation folder, the one place that says so: every writer and
every reader of ``id.png``, ``semantic.png`` and ``depth.f32.bin`` goes through these functions.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray
import zstandard
from zlib_ng import zlib_ng

from simready.artifacts.layout import ZSTD_SUFFIX
from simready.sensors_hw import camera_kernels as kern


#: ``semantic.png``'s blue channel holds the class id; the ontology's ignore class (65535) is stored as this.
SEMANTIC_IGNORE_8BIT = 255
#: The semantic value of a pixel that hit nothing (sky): neither an ontology class nor the ignore value.
SEMANTIC_NOTHING_HIT = 0
#: When each row of a camera frame was sampled, and which row a truth correspondence targets (legend.json, datasheet).
ROW_TIME_RULE = ("row v (0 = top, pinhole rows) is sampled at sampleTime + v * line_time_s with the camera's and every "
                 "body's pose at that time; a correspondence's target row in frame B is the row whose own time and "
                 "pose see the point there (the fixed point of projecting with each row's time)")
#: The ontology's ignore class id (:data:`simready.world.ontology.UNKNOWN_CLASS_ID`).
SEMANTIC_IGNORE = 65535
#: ``depth.f32.bin``'s convention, as ``results.json`` states it beside each camera frame.
DEPTH_CONVENTION = "near_m / z_depth (float32, little-endian, H x W row-major); 0 where nothing was hit"


def encode_id_rgb(ids: ArrayLike) -> NDArray[np.uint8]:
    """Compact ids (…,) < 2**24 → (…, 3) uint8 with instance = R + 256·G + 65536·B (0 = nothing)."""
    a = np.asarray(ids, np.uint32)
    if np.any(a >= 1 << 24):
        raise ValueError("compact ids must fit 24 bits")
    return np.stack([a & 255, (a >> 8) & 255, (a >> 16) & 255], axis=-1).astype(np.uint8)


def decode_id_rgb(rgb: ArrayLike) -> NDArray[np.uint32]:
    """Inverse of :func:`encode_id_rgb`: R + 256·G + 65536·B of an RGB(A) image."""
    c = np.asarray(rgb, np.uint32)
    ids: NDArray[np.uint32] = c[..., 0] | (c[..., 1] << np.uint32(8)) | (c[..., 2] << np.uint32(16))
    return ids


def encode_semantic_rgb(classes: ArrayLike) -> NDArray[np.uint8]:
    """Class ids (…,) → (…, 3) uint8 with the class in the blue channel (R = G = 0); 0 is nothing hit, the
    ignore class becomes :data:`SEMANTIC_IGNORE_8BIT`. Another class id past 254 is a bug (ValueError)."""
    c = np.asarray(classes, np.uint16)
    ignore = c == SEMANTIC_IGNORE
    if np.any((c >= SEMANTIC_IGNORE_8BIT) & ~ignore):
        raise ValueError(f"semantic class ids must be below {SEMANTIC_IGNORE_8BIT} (or the ignore class)")
    out = np.zeros(c.shape + (3,), np.uint8)
    out[..., 2] = np.where(ignore, SEMANTIC_IGNORE_8BIT, c)
    return out


def decode_semantic_rgb(rgb: ArrayLike) -> NDArray[np.uint16]:
    """Inverse of :func:`encode_semantic_rgb` on an RGB(A) image: the ontology's class ids (ignore: 65535)."""
    b = np.asarray(rgb)[..., 2].astype(np.uint16)
    return np.where(b == SEMANTIC_IGNORE_8BIT, np.uint16(SEMANTIC_IGNORE), b).astype(np.uint16)


def encode_depth(z_m: ArrayLike, near_m: float) -> NDArray[np.float32]:
    """Z-depth (m; +inf or 0 where nothing was hit) → ``near_m / z`` as float32, 0 where nothing was hit
    (a float32 image, as the camera renders it, in one compiled pass: bit for bit :func:`encode_depth_numpy`)."""
    z = np.asarray(z_m)
    if z.dtype == np.float32 and z.ndim:
        return kern.depth_raw(np.ascontiguousarray(z).reshape(-1), float(near_m)).reshape(z.shape)
    return encode_depth_numpy(z, near_m)


def encode_depth_numpy(z_m: ArrayLike, near_m: float) -> NDArray[np.float32]:
    """:func:`encode_depth` as numpy passes (in float64 throughout): its bit reference."""
    z = np.asarray(z_m, np.float64)
    with np.errstate(divide="ignore"):
        return np.where(np.isfinite(z) & (z > 0.0), near_m / z, 0.0).astype(np.float32)


#: PNG encoding of the observation passes (``rgb.png``, ``id.png``, ``semantic.png``): 8-bit RGB, every row
#: Up-filtered (:func:`simready.sensors_hw.camera_kernels.png_scanlines`), the zlib stream at the level asked; at
#: :data:`PNG_RLE_LEVEL` (the observation default) with zlib's run-length strategy (``Z_RLE``), which on Up-filtered
#: street frames was 2-3x faster than Pillow's level 1 (adaptive filters) and smaller (1280x720: rgb 17.5 -> 5.1 ms,
#: 121 -> 92 KB; id and semantic 10 -> 3.5 ms, 18 -> 16 and 9 KB). The pixels are the image's whatever the filter and
#: the strategy; any PNG reader reads them. That stream is deflated by zlib-ng (:func:`_png`): its run-length
#: strategy at level 1 writes zlib's stream byte for byte (the same files; ``tests/test_camera_kernels.py``) in about
#: a fifth of the CPU (1280x720 street frame: rgb 4.9 -> 1.6 ms, id and semantic 3.5 -> 0.5 ms each).
PNG_RLE_LEVEL = 1


def rgb_png_bytes(rgb: ArrayLike, level: int = PNG_RLE_LEVEL) -> bytes:
    """An (H, W, 3) uint8 image as the bytes of an 8-bit RGB PNG (zlib ``level``, :data:`PNG_RLE_LEVEL`)."""
    a = np.ascontiguousarray(rgb, np.uint8)
    if a.ndim != 3 or a.shape[2] != 3:
        raise ValueError(f"an RGB image must be (H, W, 3), got {a.shape}")
    h, w = a.shape[:2]
    return _png(kern.png_scanlines(a.reshape(h, 3 * w)), w, h, level)


def id_png_bytes(ids: ArrayLike, level: int = PNG_RLE_LEVEL) -> bytes:
    """(H, W) compact ids as ``id.png``'s bytes: the PNG of :func:`encode_id_rgb`'s image, made in one compiled pass
    from the ids."""
    a = np.ascontiguousarray(ids, np.uint32)
    if a.ndim != 2:
        raise ValueError(f"an id image must be (H, W), got {a.shape}")
    scan, ok = kern.id_scanlines(a)
    if not ok:
        raise ValueError("compact ids must fit 24 bits")
    return _png(scan, a.shape[1], a.shape[0], level)


def semantic_png_bytes(classes: ArrayLike, level: int = PNG_RLE_LEVEL) -> bytes:
    """(H, W) class ids as ``semantic.png``'s bytes: the PNG of :func:`encode_semantic_rgb`'s image, made in one
    compiled pass from the classes."""
    a = np.ascontiguousarray(classes, np.uint16)
    if a.ndim != 2:
        raise ValueError(f"a semantic image must be (H, W), got {a.shape}")
    scan, ok = kern.semantic_scanlines(a, SEMANTIC_IGNORE, SEMANTIC_IGNORE_8BIT)
    if not ok:
        raise ValueError(f"semantic class ids must be below {SEMANTIC_IGNORE_8BIT} (or the ignore class)")
    return _png(scan, a.shape[1], a.shape[0], level)


def _png(scanlines: NDArray[np.uint8], width: int, height: int, level: int) -> bytes:
    """The PNG file of an 8-bit RGB image's filtered ``scanlines``: signature, IHDR, one IDAT, IEND."""
    if not 0 <= level <= 9:
        raise ValueError(f"a PNG's zlib level must be 0..9, got {level}")
    # zlib-ng for the run-length strategy, whose stream is zlib's; zlib's own for the other levels (the opt-in
    # level's stream would differ).
    rle = level == PNG_RLE_LEVEL
    z = (zlib_ng if rle else zlib).compressobj(level, zlib.DEFLATED, zlib.MAX_WBITS, 8,
                                               zlib.Z_RLE if rle else zlib.Z_DEFAULT_STRATEGY)
    data = z.compress(scanlines.data) + z.flush()

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(body, zlib.crc32(kind)))

    return b"".join((b"\x89PNG\r\n\x1a\n", chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)),
                     chunk(b"IDAT", data), chunk(b"IEND", b"")))


#: Depth file formats: the published ``depth.f32.bin`` (SPEC §10, the default) and its opt-in compressed
#: variant ``depth.f32.bin.zst``: the same little-endian float32 bytes, split into their four byte planes
#: (all first bytes, then all second bytes, …) and compressed as one zstd frame. Lossless: decompressing
#: and interleaving the planes gives the published file byte for byte (``zstd -d`` alone gives the planes).
DEPTH_FORMATS = ("f32", "f32.zst")
#: The compressed variant's suffix, after the published file's name.
DEPTH_ZSTD_SUFFIX = ZSTD_SUFFIX
#: zstd level of the compressed depth variant (the byte planes, not the level, give most of the ratio).
DEPTH_ZSTD_LEVEL = 3


def depth_file_bytes(raw: NDArray[np.float32], fmt: str = "f32") -> bytes:
    """An encoded depth image (:func:`encode_depth`) as the bytes of its file in format ``fmt``."""
    data = np.ascontiguousarray(raw, "<f4")
    if fmt == "f32":
        return data.tobytes()
    if fmt != "f32.zst":
        raise ValueError(f"depth format must be one of {DEPTH_FORMATS}, got {fmt!r}")

    planes = np.ascontiguousarray(data.reshape(-1).view(np.uint8).reshape(-1, 4).T)
    return zstandard.ZstdCompressor(level=DEPTH_ZSTD_LEVEL).compress(planes.tobytes())


def read_depth_file(path: str | Path) -> NDArray[np.float32]:
    """The raw ``near_m / z`` values (flat float32) of a depth file in either format (by its suffix)."""
    path = Path(path)
    if path.name.endswith(DEPTH_ZSTD_SUFFIX):
        planes = np.frombuffer(zstandard.ZstdDecompressor().decompress(path.read_bytes()), np.uint8)
        return np.ascontiguousarray(planes.reshape(4, -1).T).view("<f4").reshape(-1)
    return np.fromfile(path, "<f4")


def decode_depth(raw: ArrayLike, near_m: float) -> NDArray[np.float64]:
    """Inverse of :func:`encode_depth`: z-depth in metres, ``near_m / raw`` where raw > 0, else +inf."""
    r = np.asarray(raw, np.float64)
    with np.errstate(divide="ignore"):
        return np.where(r > 0.0, near_m / r, np.inf)
