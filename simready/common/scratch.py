"""Reusable work arrays for temporaries of the per-frame sensor passes (one set per thread).

Why: a sensor frame writes tens of megabytes of short-lived arrays (segment starts, draws, nearest-hit
distances, shadow-ray starts). Fresh ones cost more than the arithmetic in them: the allocator hands
large blocks back to the system when they are freed, so every frame faults its pages in again
(measured here: about 0.3 ms per MB, a LiDAR sweep's temporaries ~1 ms, a 1280×720 camera frame's ~10 ms).
A work array asked for again under the same name reuses the pages of the last one.

Rule: a work array never leaves the call that asked for it (not returned, not stored in a result),
and a name is used by one step at a time; each thread has its own arrays (the truth pool casts while
the sensors do).
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np
from numpy.typing import DTypeLike, NDArray

_LOCAL = threading.local()


def work_array(name: str, shape: int | tuple[int, ...], dtype: DTypeLike) -> NDArray[Any]:
    """An uninitialized C-contiguous array of ``shape`` and ``dtype`` in this thread's work buffer ``name``
    (grown when too small, else reused: its previous contents are overwritten by the caller)."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    dt = np.dtype(dtype)
    nbytes = math.prod(shape) * dt.itemsize
    buffers: dict[str, NDArray[np.uint8]] = _LOCAL.__dict__.setdefault("buffers", {})
    buf = buffers.get(name)
    if buf is None or buf.nbytes < nbytes:
        # Aligned for any dtype (numpy's allocations are 16-byte aligned); the old buffer is released.
        buf = buffers[name] = np.empty(max(nbytes, 1), np.uint8)
    return buf[:nbytes].view(dt).reshape(shape)
