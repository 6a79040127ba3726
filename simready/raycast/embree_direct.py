"""Embree's nearest-hit query called from a compiled kernel, on the scenes embreex builds: what lets a sensor's ray
generation, its cast and the per-ray work after it run as one pass (no (N, 3) ray buffers for embreex to read, none of
the six result arrays it allocates per call), and cast coherent rays in packets.

How: embreex's ``EmbreeScene.run`` packs each ray into an ``RTCRayHit`` and calls ``rtcIntersect1`` of the
``libembree4`` it ships; a kernel (:func:`simready.raycast.kernels.spin_cast_static`, and
:func:`~simready.raycast.kernels.cast_static_rows` for ``SceneGeometry.cast``) packs them the same way and
calls that query, or ``rtcIntersect8`` on 8 rays at once (a LiDAR column's beams share an origin, 8 neighbouring
pixels of a camera row nearly so: ~20–25 % less Embree time), through the function's address and the scene's
handle found here. The handle is the first field of the Cython object (``EmbreeScene``: the scene handle,
``is_committed``, the device object): it is read only when that layout checks out (the object's size, the public
``is_committed`` read back at its offset, the device field pointing at an ``EmbreeDevice``). A query is taken only
when its library is the one mapped into the process (the copy embreex ships, not another on the system) and a
one-triangle scene's rays, hits and misses, give embreex's results through it bit for bit (:func:`query_address`);
anything else (another platform, another embreex) gives 0 and the caller casts through ``EmbreeScene.run`` as
before. Embree does not promise that a packet and single rays break exact ties between two triangles alike; the
casts' tests and the fingerprint (the sweep's, a whole run too) found them the same bit for bit.
"""

from __future__ import annotations

import ctypes
import glob
import os
from functools import lru_cache

import embreex
import embreex.rtcore as embree_rtcore
import embreex.rtcore_scene as embree_scene
import numpy as np
from numpy.typing import NDArray

#: ``RTCRayHit`` (Embree 4) as float32 / uint32 words, and ``RTCRayHitK`` the same words as arrays of K (word q of
#: ray j at q·K + j): origin 0-2, tnear 3, direction 4-6, time 7, tfar 8, mask 9, id 10, flags 11; normal 12-14,
#: u 15, v 16, primID 17, geomID 18, instID 19 (then room for Embree's optional fields).
RAYHIT_WORDS = 24
#: Rays per packet the sweeps cast (``rtcIntersect8``), where the packet query passes the check.
PACKET = 8

#: Words after a packet's buffer, set to :data:`_GUARD`: the self-check fails where Embree wrote past
#: :data:`RAYHIT_WORDS` words a ray (a build with more instance levels, a larger ``RTCRayHit``).
_GUARD_WORDS = 64
_GUARD = np.float32(-1234.5)

#: The Cython object's layout read here: header (refcount, type), then its fields in declaration order.
_POINTER = ctypes.sizeof(ctypes.c_void_p)
_HANDLE_AT, _COMMITTED_AT, _DEVICE_AT = 2 * _POINTER, 3 * _POINTER, 4 * _POINTER
_SCENE_SIZE = 5 * _POINTER


@lru_cache(maxsize=1)
def intersect_query() -> tuple[int, int]:
    """Embree's nearest-hit query the sweeps cast through and its rays per call: ``rtcIntersect8`` and
    :data:`PACKET`, else ``rtcIntersect1`` and 1, each only where :func:`query_address` finds it; (0, 0) when neither
    is at hand."""
    for k in (PACKET, 1):
        address = query_address(k)
        if address:
            return address, k
    return 0, 0


@lru_cache(maxsize=4)
def query_address(k: int) -> int:
    """The address of ``rtcIntersect{k}`` (k 1, 4, 8 or 16) in the ``libembree4`` embreex loaded, taken only when a
    one-triangle scene's rays give embreex's results through it in packets of k (:func:`_self_check`); 0 when not
    found (not Embree 4, another layout) or not the same."""
    try:
        if not str(getattr(embreex, "__version__", "")).startswith("4."):
            return 0
        libs = sorted(glob.glob(os.path.join(os.path.dirname(os.path.dirname(embreex.__file__)), "embreex.libs",
                                             "libembree4*.so*")))
        if len(libs) != 1 or os.path.realpath(libs[0]) not in _mapped_files():
            return 0  # not the library embreex's scenes live in
        address = ctypes.cast(getattr(ctypes.CDLL(libs[0]), f"rtcIntersect{k}"), ctypes.c_void_p).value or 0
        return address if address and _self_check(address, k) else 0
    except Exception:  # noqa: BLE001 - whatever fails (the library, the layout, the check's kernel): embreex's run
        return 0


def _mapped_files() -> set[str]:
    """The files mapped into this process (Linux's ``/proc/self/maps``; empty elsewhere)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            return {os.path.realpath(line.split(maxsplit=5)[5].strip()) for line in maps if len(line.split()) >= 6}
    except OSError:
        return set()


def scene_handle(scene: embree_scene.EmbreeScene) -> int:
    """The ``RTCScene`` of an embreex scene, committed (as ``run`` does before its first cast), or 0 when its object's
    layout is not the one this module reads (see the module doc)."""
    if type(scene) is not embree_scene.EmbreeScene or type(scene).__basicsize__ != _SCENE_SIZE:
        return 0
    if not scene.is_committed:
        scene.run(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32))  # commits, casts nothing
    base = id(scene)
    if ctypes.c_int.from_address(base + _COMMITTED_AT).value != scene.is_committed:
        return 0
    device = ctypes.c_void_p.from_address(base + _DEVICE_AT).value
    if not device or ctypes.c_void_p.from_address(device + _POINTER).value != id(embree_rtcore.EmbreeDevice):
        return 0
    return ctypes.c_void_p.from_address(base + _HANDLE_AT).value or 0


def ray_packet(k: int) -> tuple[NDArray[np.int32], NDArray[np.float32], NDArray[np.uint32]]:
    """A packet of ``k`` rays for a kernel, 64-byte aligned (as ``rtcIntersect16`` wants at most): its valid mask
    (int32 (k,)), and its ray-hit words as float32 and as uint32 (``RAYHIT_WORDS·k``)."""
    def aligned(n: int) -> NDArray[np.float32]:
        raw = np.zeros(n + 16 + _GUARD_WORDS, np.float32)
        skip = (-raw.ctypes.data % 64) // 4
        raw[skip + n:] = _GUARD
        return raw[skip:skip + n]

    f = aligned(RAYHIT_WORDS * k)
    return aligned(k).view(np.int32), f, f.view(np.uint32)


def _self_check(address: int, k: int) -> bool:
    """Rays through one triangle, cast by ``EmbreeScene.run`` and by the query at ``address`` in packets of ``k``
    (:func:`~simready.raycast.kernels.intersect_rows`): the same hits, bit for bit."""
    from simready.raycast.kernels import intersect_rows  # the kernel module imports nothing from here
    from simready.raycast.meshes import embree_scene_of

    scene = embree_scene_of([(np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.1], [0.0, 3.0, -0.2]]),
                              np.array([[0, 1, 2]], np.int64))])
    handle = scene_handle(scene)
    if not handle:
        return False
    # A miss first and last, hits between (one from below), a miss short of the triangle; 11 rays: a packet's
    # partial last call too.
    o = np.array([[9.0, 9.0, 5.0], [0.3, 0.4, 5.0], [0.5, 0.5, 5.0], [0.2, 1.0, -4.0], [0.2, 1.0, -4.0]] * 2
                 + [[0.1, 0.2, 3.0]], np.float32)
    d = np.array([[0.0, 0.0, -1.0], [0.0, 0.0, -1.0], [0.1, 0.0, -1.0], [0.0, 0.05, 1.0], [0.0, 0.05, 1.0]] * 2
                 + [[0.02, 0.01, -1.0]], np.float32)
    d /= np.sqrt((d * d).sum(axis=1))[:, None]
    tfar = np.array([20.0, 20.0, 20.0, 20.0, 2.0] * 2 + [20.0], np.float32)
    ref = scene.run(o, d, dists=tfar.copy(), output=1)
    valid, f, w = ray_packet(k)
    out_f = np.zeros((len(o), 6), np.float32)
    out_i = np.zeros((len(o), 2), np.int32)
    intersect_rows(address, handle, valid, f, w, o, d, tfar, out_f, out_i)
    raw = f.base
    assert isinstance(raw, np.ndarray)
    guard = raw[(f.ctypes.data - raw.ctypes.data) // 4 + len(f):]  # every word after the packet's
    return bool(len(guard) >= _GUARD_WORDS and np.all(guard == _GUARD) and np.array_equal(out_f[:, 0], ref["tfar"]) and np.array_equal(out_i[:, 0], ref["primID"])
                and np.array_equal(out_i[:, 1], ref["geomID"]) and np.array_equal(out_f[:, 1], ref["u"])
                and np.array_equal(out_f[:, 2], ref["v"]) and np.array_equal(out_f[:, 3:6], ref["Ng"])
                and list(ref["geomID"]) == [-1, 0, 0, 0, -1] * 2 + [0])
