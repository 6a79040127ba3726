"""numpy's own float64 ufunc loops called from compiled code (numba): ``arctan2``, ``sin``, ``cos`` with its bits.

Why: numba's ``atan2`` does not always give numpy's bits (numpy's is a SIMD loop on this kind of CPU), and the
compiled quiet ticks (:mod:`.tick_kernels`) must repeat the Python tick's numpy calls bit for bit. :func:`numpy_loop`
finds numpy's compiled inner loop of a ufunc for float64 (checked on a probe), and :func:`atan2_rows` /
:func:`unary_rows` call it through :func:`_call_loop` on the same contiguous rows numpy is given.

Cache: compiled beside this module (``cache=True``); the quiet ticks' loop calls these, so its cache key includes this
file's contents (:data:`simready.sim.core.tick_kernels._CALLEES`).
"""

from __future__ import annotations

import ctypes
import functools

import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

_JIT = dict(cache=True, nogil=True, error_model="numpy", fastmath=False)


@intrinsic
def _call_loop(typingctx, fptr, args, dims, steps):  # type: ignore[no-untyped-def]
    """Call a numpy ufunc inner loop ``void f(char **args, npy_intp *dims, npy_intp *steps, void *data)`` at
    address ``fptr`` with the addresses ``args``, ``dims``, ``steps`` (int64; ``data`` NULL)."""
    sig = types.void(types.int64, types.int64, types.int64, types.int64)

    def codegen(context, builder, signature, llargs):  # type: ignore[no-untyped-def]
        i8p = ir.IntType(8).as_pointer()
        i64p = ir.IntType(64).as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [i8p.as_pointer(), i64p, i64p, i8p])
        fn = builder.inttoptr(llargs[0], fnty.as_pointer())
        builder.call(fn, [builder.inttoptr(llargs[1], i8p.as_pointer()), builder.inttoptr(llargs[2], i64p),
                          builder.inttoptr(llargs[3], i64p), ir.Constant(i8p, None)])
        return context.get_dummy_value()

    return sig, codegen


@numba.njit(**_JIT)
def atan2_rows(fp: int, y: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """``out = np.arctan2(y, x)`` for contiguous float64 (n,) arrays, by numpy's loop at ``fp``."""
    ptrs = np.empty(3, dtype=np.int64)
    ptrs[0], ptrs[1], ptrs[2] = y.ctypes.data, x.ctypes.data, out.ctypes.data
    dims = np.empty(1, dtype=np.int64)
    dims[0] = y.shape[0]
    steps = np.full(3, 8, dtype=np.int64)
    _call_loop(fp, ptrs.ctypes.data, dims.ctypes.data, steps.ctypes.data)


@functools.cache
def numpy_loop(uf: np.ufunc) -> int:
    """Address of numpy's compiled inner loop of ``uf`` for float64 (``dd->d`` or ``d->d``), found once per process
    (the one cache of it: every compiled tick asks here), read from the ufunc object (``PyUFuncObject``: ``functions`` at offset 32, ``ntypes`` at 48, ``name`` at 56, ``types`` at 64); 0
    when the layout is not the one expected or the loop does not give ``uf``'s bits on a probe (the caller then
    keeps the Python tick)."""
    nargs = uf.nin + uf.nout
    want = "d" * uf.nin + "->d"
    try:
        addr = id(uf)
        if ctypes.c_char_p.from_address(addr + 56).value != uf.__name__.encode():
            return 0
        ntypes = ctypes.c_int.from_address(addr + 48).value
        if ntypes != uf.ntypes or uf.nout != 1 or nargs not in (2, 3):
            return 0
        code = np.dtype(np.float64).num
        types_at = ctypes.c_void_p.from_address(addr + 64).value
        functions_at = ctypes.c_void_p.from_address(addr + 32).value
        if not types_at or not functions_at:
            return 0
        sig = ctypes.string_at(types_at, nargs * ntypes)
        idx = [k for k in range(ntypes) if sig[nargs * k:nargs * (k + 1)] == bytes([code] * nargs)]
        if len(idx) != 1 or uf.types[idx[0]] != want:
            return 0
        fp = ctypes.c_void_p.from_address(functions_at + 8 * idx[0]).value or 0
    except (ValueError, OSError):  # pragma: no cover - a numpy whose ufunc object is laid out otherwise
        return 0
    if fp and not _probe(uf, fp):
        return 0
    return int(fp)


def _probe(uf: np.ufunc, fp: int) -> bool:
    """Whether the loop at ``fp`` gives ``uf``'s bits on awkward values, at several lengths."""
    rng = np.random.default_rng(7)
    for n in (1, 3, 8, 10, 17, 64):
        y = rng.normal(size=n) * rng.choice([1e-9, 1e-3, 1.0, 1e3], n)
        x = rng.normal(size=n) * rng.choice([1e-9, 1.0, 1e3], n)
        y[0], x[-1] = -0.0, 0.0
        out = np.empty(n)
        if uf.nin == 2:
            atan2_rows(fp, y, x, out)
            want = uf(y, x)
        else:
            unary_rows(fp, y, out)
            want = uf(y)
        if out.tobytes() != want.tobytes():
            return False
    return True


@numba.njit(**_JIT)
def unary_rows(fp: int, x: np.ndarray, out: np.ndarray) -> None:
    """``out = f(x)`` for contiguous float64 (n,) arrays, by numpy's ``d->d`` loop at ``fp``."""
    ptrs = np.empty(2, dtype=np.int64)
    ptrs[0], ptrs[1] = x.ctypes.data, out.ctypes.data
    dims = np.empty(1, dtype=np.int64)
    dims[0] = x.shape[0]
    steps = np.full(2, 8, dtype=np.int64)
    _call_loop(fp, ptrs.ctypes.data, dims.ctypes.data, steps.ctypes.data)
