"""A tick's physics through PyBullet's C API in one compiled call (:func:`tick_step`; :func:`tick_substeps` where the
ground under an agent is unknown): the ego's steering, the agents' drive forces, the ego's tyre model, the steps and
the end-of-tick reads, the same commands in the same order as the Python binding makes them, without a Python call
per command.

Why: each ``dynamic-v1`` tick made ~60 binding calls (four substeps of the agents' force and torque, the ego's two
reads and two forces, the step; then two reads per moved body), and the binding's argument parsing and the tuples it
returns cost more than the commands themselves (an ``applyExternalForce`` ~0.45 µs through the binding, ~0.1 µs
through the C API; a body's two reads ~1.9 µs, one state request ~0.7 µs).

How: the binding is a thin layer over the C API its extension module exports (``b3ApplyExternalForceCommandInit``,
``b3SubmitClientCommandAndWaitStatus`` …); the kernel calls those functions by name (numba resolves them in the
extension, which :func:`_load` makes visible to its linker). What the binding keeps private is the client's handle
behind a ``physicsClientId`` (a static table of the extension, ``sPhysicsClients1``): :func:`client_handle` finds it
through the extension's own symbol table (ELF; the build ``pyproject.toml`` pins keeps it), the load address checked
against three exported functions'. Where any of that is missing (another platform, a stripped or other build of
PyBullet) it returns None and the backend makes the same commands through the binding.

Bits: every command is the binding's (the same C function with the same doubles, one command per call as the
binding submits them), so PyBullet computes the same world; the ego's tyre arithmetic is
:func:`~.chassis.tyre_forces`' IEEE operations in its order (``math.hypot`` rebuilt as CPython's, :func:`.kernels.py_hypot`);
and one state request per body gives both its pose and its twist (the binding asks twice; a read changes nothing).
Tested against the binding's path, rollout for rollout.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import glob
import math
import os
import struct
import sys
from typing import Any

import llvmlite.binding as llvm
import numba
import numpy as np
import pybullet as p
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from simready.sim.backends.dynamic import kernels as dynamic_kernels
from simready.sim.backends.dynamic.kernels import (agent_drive_rows, body_frames, bullet_matrix, ego_steer_setup,
                                                  ground_under, py_hypot)
from simready.sim.core import kernels as core_kernels
from simready.sim.core.cache_stamp import stamp_callees

# The cached functions here carry compiled copies of the kernels they call: their cache follows those files too.
stamp_callees(__file__, (dynamic_kernels.__file__, core_kernels.__file__))

#: The GIL held (``nogil`` off), as the binding holds it: PyBullet's clients are not for two threads at once.
_JIT = dict(cache=True, nogil=False, error_model="numpy", fastmath=False)

#: The extension module whose C API the kernel calls.
_LIBRARY = p.__file__
#: The binding's table of client handles (``static b3PhysicsClientHandle sPhysicsClients1[MAX_PHYSICS_CLIENTS]``).
_TABLE = "sPhysicsClients1"
_TABLE_SIZE = 1024 * 8
#: Exported functions of the same extension: their addresses give (and check) the load address of the table.
_PROBES = ("b3GetStatusType", "b3SubmitClientCommandAndWaitStatus", "b3ApplyExternalForce")


def _load() -> bool:
    """Make the extension's exported functions visible to numba's linker (once per process; the extension is already
    loaded, so this only adds it to the linker's search)."""
    if not _LIBRARY:
        return False
    try:
        llvm.load_library_permanently(_LIBRARY)
    except RuntimeError:
        return False
    return True


_LOADED = _load()

# The C API's functions, handles and pointers as 64-bit integers (what they are on the platforms this runs on).
_i8, _i4 = types.int64, types.int32
_force_init: Any = types.ExternalFunction("b3ApplyExternalForceCommandInit", _i8(_i8))
_force: Any = types.ExternalFunction("b3ApplyExternalForce", types.void(_i8, _i4, _i4, _i8, _i8, _i4))
_torque: Any = types.ExternalFunction("b3ApplyExternalTorque", types.void(_i8, _i4, _i4, _i8, _i4))
_send: Any = types.ExternalFunction("b3SubmitClientCommand", _i4(_i8, _i8))
_status: Any = types.ExternalFunction("b3ProcessServerStatus", _i8(_i8))
_step_init: Any = types.ExternalFunction("b3InitStepSimulationCommand", _i8(_i8))
_state_init: Any = types.ExternalFunction("b3RequestActualStateCommandInit", _i8(_i8, _i4))
_state: Any = types.ExternalFunction("b3GetStatusActualState", _i4(_i8, _i8, _i8, _i8, _i8, _i8, _i8, _i8))
_compose: Any = types.ExternalFunction("b3MultiplyTransforms", types.void(_i8, _i8, _i8, _i8, _i8, _i8))
_contacts_init: Any = types.ExternalFunction("b3InitRequestContactPointInformation", _i8(_i8))
_status_type: Any = types.ExternalFunction("b3GetStatusType", _i4(_i8))
_contacts_get: Any = types.ExternalFunction("b3GetContactPointInformation", types.void(_i8, _i8))

#: ``CMD_CONTACT_POINT_INFORMATION_COMPLETED`` of the C API's ``EnumSharedMemoryServerStatus`` (SharedMemoryPublic.h):
#: the status of a contact request that completed.
_CONTACTS_COMPLETED = 39
#: ``struct b3ContactPointData`` (SharedMemoryPublic.h): its size, and the offsets of ``m_bodyUniqueIdA``,
#: ``m_bodyUniqueIdB`` (ints) and ``m_positionOnAInWS`` (3 doubles).
_CONTACT_SIZE, _CONTACT_A, _CONTACT_B, _CONTACT_POS_A = 176, 4, 8, 24


def _symbols(path: str, names: tuple[str, ...]) -> dict[str, tuple[int, int, int]]:
    """``names``' (value, size, type) in the ELF symbol table (``.symtab``) of the shared object at ``path``."""
    with open(path, "rb") as f:
        head = f.read(64)
        if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
            return {}  # not a little-endian 64-bit ELF file
        (shoff,) = struct.unpack_from("<Q", head, 0x28)
        entsize, count = struct.unpack_from("<HH", head, 0x3A)
        f.seek(shoff)
        table = f.read(entsize * count)
        sections = [struct.unpack_from("<IIQQQQIIQQ", table, k * entsize) for k in range(count)]
        symbol = np.dtype([("name", "<u4"), ("info", "u1"), ("other", "u1"), ("shndx", "<u2"), ("value", "<u8"),
                           ("size", "<u8")])
        out: dict[str, tuple[int, int, int]] = {}
        for sec in sections:
            if sec[1] != 2:  # SHT_SYMTAB
                continue
            f.seek(sec[4])
            syms = np.frombuffer(f.read(sec[5]), dtype=symbol)
            strings_sec = sections[sec[6]]
            f.seek(strings_sec[4])
            strings = f.read(strings_sec[5])
            for name in names:
                key = name.encode() + b"\0"
                at = strings.find(key)
                while at >= 0:
                    if at == 0 or strings[at - 1] == 0:
                        hit = syms[syms["name"] == at]
                        if len(hit):
                            out[name] = (int(hit["value"][0]), int(hit["size"][0]), int(hit["info"][0]) & 0xF)
                            break
                    at = strings.find(key, at + 1)
        return out


#: Whether the backend steps through the C API where it finds the handle (off: the binding only; the environment's
#: ``SIMREADY_PYBULLET_BINDING_ONLY=1`` turns it off, tests compare the two paths).
ENABLED = os.environ.get("SIMREADY_PYBULLET_BINDING_ONLY", "") != "1"

_TABLE_ADDRESS: list[int | None] = []


def _table_address() -> int | None:
    """The address of the binding's handle table in this process, or None where it cannot be found and checked."""
    if not _TABLE_ADDRESS:
        address = None
        if _LOADED and sys.platform.startswith("linux"):
            try:
                syms = _symbols(_LIBRARY, (_TABLE, *_PROBES))
                lib = ctypes.CDLL(_LIBRARY)
                loaded = [ctypes.cast(getattr(lib, name), ctypes.c_void_p).value for name in _PROBES]
            except (OSError, AttributeError, IndexError, struct.error, ValueError):
                syms, loaded = {}, []
            table = syms.get(_TABLE)
            funcs = [syms.get(name) for name in _PROBES]
            # The load address: each exported probe's address less its symbol value, the same for all of them (the
            # file read is the one loaded); the table: a data object of 1024 handles.
            bases = {at - func[0] for at, func in zip(loaded, funcs) if at and func is not None and func[2] == 2}
            found = all(func is not None for func in funcs) and len(loaded) == len(_PROBES) and all(loaded)
            if found and table is not None and table[1] == _TABLE_SIZE and table[2] == 1 and len(bases) == 1:
                address = bases.pop() + table[0]
        _TABLE_ADDRESS.append(address)
    return _TABLE_ADDRESS[0]


def available() -> bool:
    """Whether this process can reach PyBullet's clients through the C API (the binding's handle table was found)."""
    return _table_address() is not None


def client_handle(client: int) -> int | None:
    """The C API handle of PyBullet client ``client`` (a ``physicsClientId``), or None (then use the binding)."""
    address = _table_address()
    if address is None or not 0 <= client < 1024:
        return None
    handle = ctypes.c_void_p.from_address(address + 8 * client).value
    return handle or None


@intrinsic
def _f8_at(typingctx, address, k):  # type: ignore[no-untyped-def]
    """The ``k``-th double at ``address`` (a pointer the C API returned)."""
    sig = types.float64(types.int64, types.int64)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        ptr = builder.inttoptr(args[0], ir.DoubleType().as_pointer())
        return builder.load(builder.gep(ptr, [args[1]]))

    return sig, codegen


@intrinsic
def _i4_at(typingctx, address, k):  # type: ignore[no-untyped-def]
    """The int at byte offset ``k`` of ``address`` (a pointer the C API returned)."""
    sig = types.int64(types.int64, types.int64)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        ptr = builder.inttoptr(builder.add(args[0], args[1]), ir.IntType(32).as_pointer())
        return builder.sext(builder.load(ptr), ir.IntType(64))

    return sig, codegen


@intrinsic
def _call_gemv(typingctx, fptr, a, x, y):  # type: ignore[no-untyped-def]
    """``y = A x`` for one 3 × 3 row-major ``A`` at address ``a`` and the 3-vector at ``x`` by the CBLAS ``dgemv`` at
    ``fptr`` (64-bit integers), called as numpy's ``matmul`` calls it for such a product: column-major, transposed,
    ``lda`` 3, unit strides, alpha 1, beta 0."""
    sig = types.void(types.int64, types.int64, types.int64, types.int64)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        i32, i64, f8 = ir.IntType(32), ir.IntType(64), ir.DoubleType()
        fp8 = f8.as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [i32, i32, i64, i64, f8, fp8, i64, fp8, i64, f8, fp8, i64])
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        three, one = ir.Constant(i64, 3), ir.Constant(i64, 1)
        builder.call(fn, [ir.Constant(i32, _COL_MAJOR), ir.Constant(i32, _TRANS), three, three, ir.Constant(f8, 1.0),
                          builder.inttoptr(args[1], fp8), three, builder.inttoptr(args[2], fp8), one,
                          ir.Constant(f8, 0.0), builder.inttoptr(args[3], fp8), one])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _call_pow(typingctx, fptr, x, y):  # type: ignore[no-untyped-def]
    """The C library's ``pow(x, y)`` at address ``fptr`` (an indirect call: the compiler cannot replace it)."""
    sig = types.float64(types.int64, types.float64, types.float64)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        f8 = ir.DoubleType()
        fn = builder.inttoptr(args[0], ir.FunctionType(f8, [f8, f8]).as_pointer())
        return builder.call(fn, [args[1], args[2]])

    return sig, codegen


#: CBLAS's ``CblasColMajor`` and ``CblasTrans``.
_COL_MAJOR, _TRANS = 102, 112


@numba.njit(**_JIT)
def lever_arms(fp: int, rot: np.ndarray, coms: np.ndarray, out: np.ndarray) -> None:
    """``out = rot.reshape(n, 3, 3) @ coms`` (``coms``, ``out``: (n, 3, 1) C-contiguous) by the CBLAS ``dgemv`` numpy's
    ``matmul`` calls (:func:`gemv_address`), one body at a time as numpy does: its bits."""
    for k in range(rot.shape[0]):
        _call_gemv(fp, rot.ctypes.data + 72 * k, coms.ctypes.data + 24 * k, out.ctypes.data + 24 * k)


@numba.njit(**_JIT)
def _pow_rows(fp: int, x: np.ndarray, y: float, out: np.ndarray) -> None:
    """``out[k] = pow(x[k], y)`` by the C library's ``pow`` at ``fp`` (:func:`pow_address`'s probe)."""
    for k in range(x.shape[0]):
        out[k] = _call_pow(fp, x[k], y)


def _blas_library() -> str | None:
    """The OpenBLAS numpy's wheel carries (the library its ``matmul`` calls), or None."""
    here = os.path.dirname(os.path.dirname(np.__file__))
    found = sorted(glob.glob(os.path.join(here, "numpy.libs", "libscipy_openblas*.so*")))
    return found[0] if found else None


def _probe_stacks(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Rotation-like (n, 3, 3) stacks and (n, 3, 1) arms of awkward magnitudes, for the probes."""
    rng = np.random.default_rng(seed)
    rot = rng.normal(size=(257, 3, 3)) * rng.choice([1e-9, 1e-3, 1.0, 1e3], size=(257, 3, 3))
    coms = rng.normal(size=(257, 3, 1)) * np.array([1.5, 0.02, 0.3])[None, :, None]
    return rot, coms


@functools.cache
def gemv_address() -> int:
    """Address of the CBLAS ``dgemv`` that numpy's ``matmul`` calls for a stack of 3 × 3 by 3 × 1 products (the
    lever arms, :meth:`~.exchange.BodyExchange._read_frames`), found once per process; 0 where it is not found or
    :func:`lever_arms` does not give ``matmul``'s bits on a probe (the caller then keeps numpy's product).

    Why: BLAS sums those products in its own order (with fused multiply-adds where the CPU has them, chosen at load
    time), which no fixed order of IEEE operations reproduces; calling the same function gives the same bits."""
    path = _blas_library()
    if path is None:
        return 0
    try:
        lib = ctypes.CDLL(path)
        fp = next((ctypes.cast(getattr(lib, name), ctypes.c_void_p).value for name in
                   ("scipy_cblas_dgemv64_", "cblas_dgemv64_") if hasattr(lib, name)), None)
    except OSError:
        return 0
    if not fp:
        return 0
    for seed in (3, 5):
        rot, coms = _probe_stacks(seed)
        rows = np.ascontiguousarray(rot.reshape(-1, 9))
        got = np.empty_like(coms)
        lever_arms(fp, rows, coms, got)
        if got.tobytes() != (rows.reshape(-1, 3, 3) @ coms).tobytes():
            return 0
    return int(fp)


@functools.cache
def pow_address() -> int:
    """Address of the C library's ``pow``, which Python's ``x ** y`` on floats calls, found once per process; 0 where
    it is not found or does not give ``**``'s bits on a probe (squares of awkward values)."""
    try:
        fp = ctypes.cast(ctypes.CDLL(ctypes.util.find_library("m") or None).pow, ctypes.c_void_p).value
    except (OSError, AttributeError, TypeError):  # TypeError: Windows, whose ctypes cannot load CDLL(None)
        return 0
    if not fp:
        return 0
    rng = np.random.default_rng(11)
    x = rng.normal(size=4096) * rng.choice([1e-9, 1e-3, 1.0, 37.0, 1e3], size=4096)
    x[:4] = 0.0, -0.0, 1.0, -2.5
    got = np.empty_like(x)
    _pow_rows(fp, x, 2.0, got)
    if got.tobytes() != np.array([v ** 2 for v in x.tolist()]).tobytes():
        return 0
    return int(fp)


@numba.njit(**_JIT)
def ego_energy(sm: int, body: int, mass: float, ix: float, iy: float, iz: float, g: float, pow_fp: int,
               ptrs: np.ndarray) -> float:
    """:func:`~.checks.body_energy` of ``body`` (J) from one state request (:func:`state_energy` of it); NaN where the
    state could not be read or a velocity is beyond ±1e100 (where Python's ``**`` would raise on overflow: the caller
    then takes the binding's path)."""
    if not _read(sm, body, ptrs):
        return math.nan
    q, qd = ptrs[0], ptrs[1]
    energy: float = state_energy(_f8_at(q, 2), _f8_at(q, 3), _f8_at(q, 4), _f8_at(q, 5), _f8_at(q, 6),
                                 _f8_at(qd, 0), _f8_at(qd, 1), _f8_at(qd, 2), _f8_at(qd, 3), _f8_at(qd, 4),
                                 _f8_at(qd, 5), mass, ix, iy, iz, g, pow_fp)
    return energy


@numba.njit(**_JIT)
def state_energy(z: float, qx: float, qy: float, qz: float, qw: float, l0: float, l1: float, l2: float, a0: float,
                 a1: float, a2: float, mass: float, ix: float, iy: float, iz: float, g: float, pow_fp: int) -> float:
    """:func:`~.checks.body_energy` (J) of a body whose state request gave centre-of-mass height ``z``, quaternion
    ``qx`` … ``qw``, linear velocity ``l0`` … ``l2`` and angular velocity ``a0`` … ``a2``, its operations in its order
    (the squares by the C library's ``pow`` at ``pow_fp``, as Python's ``**`` makes them; the rotation by
    :func:`~.kernels.bullet_matrix`, ``getMatrixFromQuaternion``'s); NaN where a velocity is beyond ±1e100."""
    quat, rot = np.empty(4), np.empty(9)
    quat[0], quat[1], quat[2], quat[3] = qx, qy, qz, qw
    bullet_matrix(quat, rot)
    if not (abs(l0) < 1e100 and abs(l1) < 1e100 and abs(l2) < 1e100):
        return math.nan
    wx = rot[0] * a0 + rot[3] * a1 + rot[6] * a2
    wy = rot[1] * a0 + rot[4] * a1 + rot[7] * a2
    wz = rot[2] * a0 + rot[5] * a1 + rot[8] * a2
    kinetic = 0.5 * mass * (_call_pow(pow_fp, l0, 2.0) + _call_pow(pow_fp, l1, 2.0) + _call_pow(pow_fp, l2, 2.0)) + \
        0.5 * (ix * wx * wx + iy * wy * wy + iz * wz * wz)
    energy: float = kinetic + mass * g * z
    return energy


#: How many times :func:`_submit` asks for a submitted command's status before it gives up (a client in this process,
#: ``p.DIRECT``, has it at the first ask).
_STATUS_POLLS = 100_000_000


@numba.njit(**_JIT)
def _submit(sm: int, cmd: int) -> int:
    """Submit command ``cmd`` on client ``sm`` and return its status (0: none came): what the binding's
    ``b3SubmitClientCommandAndWaitStatus`` does (``b3SubmitClientCommand``, then ``b3ProcessServerStatus`` until a
    status comes), without its wall-clock timeout, whose clock reads (three ``gettimeofday`` a command) and profile
    zone cost more than a force command itself. The same calls in the same order reach the physics server, so the
    world is the same."""
    _send(sm, cmd)
    status = _status(sm)
    polls = 0
    while status == 0 and polls < _STATUS_POLLS:
        status = _status(sm)
        polls += 1
    result: int = status
    return result


@numba.njit(**_JIT)
def _read(sm: int, body: int, ptrs: np.ndarray) -> bool:
    """Request body ``body``'s state: ``ptrs`` gets the addresses of its base position and quaternion (7 doubles) and its
    linear and angular velocity (6 doubles); False where the request failed."""
    status = _submit(sm, _state_init(sm, body))
    ptrs[0] = 0
    ptrs[1] = 0
    if status == 0:  # no status came: Bullet's reader would dereference it
        return False
    ok = _state(status, 0, 0, 0, 0, ptrs.ctypes.data, ptrs.ctypes.data + 8, 0)
    return bool(ok != 0 and ptrs[0] != 0 and ptrs[1] != 0)


@numba.njit(**_JIT)
def _tyres(sm: int, body: int, steer: float, a_cmd: float, setup: np.ndarray, slip_min: float, standstill: float,
           frame: int, ptrs: np.ndarray, vec: np.ndarray, known: int) -> float:
    """:func:`~.chassis.tyre_forces` for one substep (its operations in its order); the utilisation, or -1.0 where
    the ego's state could not be read. ``known``: 0, or the address of the ego's state as a state request gives it
    now (13 doubles, a row of :func:`read_states`), taken instead of a request of its own."""
    m, lf, lr, kf, kr = setup[0], setup[1], setup[2], setup[3], setup[4]
    limit_f, limit_r, cs, sn, hold, h = setup[5], setup[6], setup[7], setup[8], setup[9], setup[10]
    if known != 0:
        q, qd = known, known + 56
    elif _read(sm, body, ptrs):
        q, qd = ptrs[0], ptrs[1]
    else:
        return -1.0
    cx, cy, cz = _f8_at(q, 0), _f8_at(q, 1), _f8_at(q, 2)
    x, y, z, w = _f8_at(q, 3), _f8_at(q, 4), _f8_at(q, 5), _f8_at(q, 6)
    lx, ly, r = _f8_at(qd, 0), _f8_at(qd, 1), _f8_at(qd, 5)
    s = 2.0 / (x * x + y * y + z * z + w * w)
    ys, zs = y * s, z * s
    r0, r3 = 1.0 - (y * ys + z * zs), x * ys + w * zs
    norm = py_hypot(r0, r3)
    if norm == 0.0:
        norm = 1.0
    hx, hy = r0 / norm, r3 / norm
    vx = lx * hx + ly * hy
    vy = lx * -hy + ly * hx
    big_v = abs(vx)
    big_v = slip_min if slip_min > big_v else big_v
    fy_f = kf * (steer - math.atan2(vy + lf * r, big_v))
    fy_r = kr * -math.atan2(vy - lr * r, big_v)
    if vx <= standstill and a_cmd <= 0.0:
        fx = -m * vx / h
        fx = hold if hold < fx else fx
        fx = -hold if -hold > fx else fx
    else:
        fx = m * a_cmd
    fx_f = fx_r = 0.5 * fx
    total = py_hypot(fx_f, fy_f)
    t = total / limit_f if limit_f > 0 else 0.0
    util = t if t > 0.0 else 0.0
    if total > limit_f and limit_f > 0:
        sc = limit_f / total
        fx_f, fy_f = fx_f * sc, fy_f * sc
    total = py_hypot(fx_r, fy_r)
    t = total / limit_r if limit_r > 0 else 0.0
    util = t if t > util else util
    if total > limit_r and limit_r > 0:
        sc = limit_r / total
        fx_r, fy_r = fx_r * sc, fy_r * sc
    fwx, fwy = hx * cs + -hy * sn, hy * cs + hx * sn
    vec[0], vec[1], vec[2] = fwx * fx_f + -fwy * fy_f, fwy * fx_f + fwx * fy_f, 0.0
    vec[3], vec[4], vec[5] = cx + hx * lf, cy + hy * lf, cz
    cmd = _force_init(sm)
    _force(cmd, body, -1, vec.ctypes.data, vec.ctypes.data + 24, frame)
    _submit(sm, cmd)
    vec[0], vec[1], vec[2] = hx * fx_r + -hy * fy_r, hy * fx_r + hx * fy_r, 0.0
    vec[3], vec[4], vec[5] = cx - hx * lr, cy - hy * lr, cz
    cmd = _force_init(sm)
    _force(cmd, body, -1, vec.ctypes.data, vec.ctypes.data + 24, frame)
    _submit(sm, cmd)
    return util


@numba.njit(**_JIT)
def tick_substeps(sm: int, substeps: int, h: float, frame: int, bodies: np.ndarray, drives: np.ndarray, ego: int,
                  steer: float, a_cmd: float, setup: np.ndarray, slip_min: float, standstill: float, read: np.ndarray,
                  raw: np.ndarray) -> float:
    """A tick's substeps on client handle ``sm`` (:func:`client_handle`), then the reads of bodies ``read``.

    Each substep: every agent's force (at its centre of mass carried along at its velocity, ``cx + vx·h·k``) and
    torque, in ``bodies``' order (``drives``: :func:`~.drive.agent_drive_table`'s rows, held for the tick); the ego's
    tyre forces (body ``ego``, none when it is -1) under ``steer`` and ``a_cmd`` (``setup``:
    :func:`~.chassis.tyre_setup`'s 11 constants, ``frame``: ``p.WORLD_FRAME``); then one step. After the last step,
    row ``k`` of ``raw`` gets body ``read[k]``'s centre of mass, base quaternion, linear and angular velocity (13
    doubles, what the binding's two reads return). Returns the ego's largest tyre utilisation (0.0 without an ego),
    or -1.0 where a state request failed (``raw`` incomplete).
    """
    util: float = _substeps(sm, substeps, h, frame, bodies, drives, ego, steer, a_cmd, setup, slip_min, standstill,
                            read, raw, 0)
    return util


@numba.njit(**_JIT)
def _substeps(sm: int, substeps: int, h: float, frame: int, bodies: np.ndarray, drives: np.ndarray, ego: int,
              steer: float, a_cmd: float, setup: np.ndarray, slip_min: float, standstill: float, read: np.ndarray,
              raw: np.ndarray, known: int) -> float:
    """:func:`tick_substeps`, the first substep's tyres from the ego's state at address ``known`` where it is not 0
    (:func:`_tyres`)."""
    ptrs = np.zeros(2, dtype=np.int64)
    vec = np.empty(6)
    util = 0.0
    for k in range(substeps):
        for j in range(len(bodies)):
            body = bodies[j]
            vec[0], vec[1], vec[2] = drives[j, 0], drives[j, 1], drives[j, 2]
            vec[3] = drives[j, 6] + drives[j, 9] * h * k
            vec[4] = drives[j, 7] + drives[j, 10] * h * k
            vec[5] = drives[j, 8] + drives[j, 11] * h * k
            cmd = _force_init(sm)
            _force(cmd, body, -1, vec.ctypes.data, vec.ctypes.data + 24, frame)
            _submit(sm, cmd)
            vec[0], vec[1], vec[2] = drives[j, 3], drives[j, 4], drives[j, 5]
            cmd = _force_init(sm)
            _torque(cmd, body, -1, vec.ctypes.data, frame)
            _submit(sm, cmd)
        if ego >= 0:
            at = known if k == 0 else 0
            u = _tyres(sm, ego, steer, a_cmd, setup, slip_min, standstill, frame, ptrs, vec, at)
            if u < 0.0:
                return -1.0
            util = u if u > util else util
        _submit(sm, _step_init(sm))
    return util if read_states(sm, read, raw, ptrs) else -1.0


@numba.njit(**_JIT)
def read_states(sm: int, read: np.ndarray, raw: np.ndarray, ptrs: np.ndarray) -> bool:
    """Row ``k`` of ``raw``: body ``read[k]``'s centre of mass, base quaternion, linear and angular velocity (13
    doubles, what the binding's two reads return); False where a state request failed (``raw`` incomplete)."""
    for k in range(len(read)):
        if not _read(sm, read[k], ptrs):
            return False
        for c in range(7):
            raw[k, c] = _f8_at(ptrs[0], c)
        for c in range(6):
            raw[k, 7 + c] = _f8_at(ptrs[1], c)
    return True


@numba.njit(**_JIT)
def base_quats(raw: np.ndarray, inv: np.ndarray, has: np.ndarray) -> None:
    """Where ``has[k]``: row ``k``'s quaternion (``raw[k, 3:7]``, the inertial frame's, as :func:`tick_substeps` read
    it) composed with ``inv[k]`` (the inverse of the body's inertial frame), in place: the body frame's quaternion.

    The binding's ``multiplyTransforms`` (zero positions) is the C API's ``b3MultiplyTransforms`` with the same
    doubles, called here without a Python call per body.
    """
    buf = np.zeros(17)  # posA (3), ornA (4), posB (3, zero), outPos (3), outOrn (4)
    at = buf.ctypes.data
    for k in range(len(has)):
        if has[k]:
            for c in range(4):
                buf[3 + c] = raw[k, 3 + c]
            _compose(at, at + 24, at + 56, inv.ctypes.data + 32 * k, at + 80, at + 104)
            for c in range(4):
                raw[k, 3 + c] = buf[13 + c]


@numba.njit(**_JIT)
def contact_points(sm: int, role: np.ndarray, out: np.ndarray) -> int:
    """The world's contact points that the backend reads (``getContactPoints()``'s request, the same command), in the
    C API's order: row ``k`` of ``out`` gets body A, body B and the x, y of the point on A, for each point between two
    bodies of role 1 (actors) or between one of role 1 and one of role 2 (static colliders other than the ground);
    ``role`` is indexed by body id (0 beyond it). Returns how many points were kept (rows past ``len(out)`` are not
    written: call again with room for them), or -1 where the request failed."""
    status = _submit(sm, _contacts_init(sm))
    if _status_type(status) != _CONTACTS_COMPLETED:
        return -1
    info = np.zeros(2, dtype=np.int64)  # struct b3ContactInformation: int m_numContactPoints; b3ContactPointData* ...
    _contacts_get(sm, info.ctypes.data)
    count = info[0] & 0xFFFFFFFF
    at = info[1]
    m = 0
    n_role = len(role)
    for k in range(count):
        row = at + _CONTACT_SIZE * k
        a, b = _i4_at(row, _CONTACT_A), _i4_at(row, _CONTACT_B)
        ra = role[a] if 0 <= a < n_role else 0
        rb = role[b] if 0 <= b < n_role else 0
        if (ra == 1 and (rb == 1 or rb == 2)) or (ra == 2 and rb == 1):
            if m < len(out):
                out[m, 0], out[m, 1] = a, b
                out[m, 2] = _f8_at(row + _CONTACT_POS_A, 0)
                out[m, 3] = _f8_at(row + _CONTACT_POS_A, 1)
            m += 1
    return m


@numba.njit(**_JIT)
def tick_step(sm: int, substeps: int, h: float, frame: int, bodies: np.ndarray, ego: int, e: int, crashed: bool,
              prev_steer: float, friction: float, ego_k: np.ndarray, u: np.ndarray, d_ref: np.ndarray, v: np.ndarray,
              cum: np.ndarray, base: np.ndarray, last: np.ndarray, pts: np.ndarray, dirs: np.ndarray, a_cmd: float,
              setup: np.ndarray, slip_min: float, standstill: float, read: np.ndarray, raw: np.ndarray,
              heights: np.ndarray, g_x0: float, g_y0: float, g_scale: float, idx: np.ndarray, stop: np.ndarray,
              parked: np.ndarray, accel: np.ndarray, pos: np.ndarray, vel: np.ndarray, omega: np.ndarray,
              quat: np.ndarray, kpos: np.ndarray, kvel: np.ndarray, komega: np.ndarray, yaw: np.ndarray,
              cyaw: np.ndarray, mass: np.ndarray, wheelbase: np.ndarray, inertia: np.ndarray, com: np.ndarray,
              mu_g: float, g: float, dt: float, pos_tau: float, yaw_tau: float, support_tau: float, inv: np.ndarray,
              has: np.ndarray, any_inv: bool, frame_quat: np.ndarray, frame_rot: np.ndarray, gemv_fp: int,
              coms: np.ndarray, levers: np.ndarray, known: np.ndarray) -> tuple[float, float]:
    """A tick's physics in one call: the ego's steering and tyre constants (:func:`~.kernels.ego_steer_setup` into
    ``setup``, where the ego ``e`` is present: ``ego`` its body, else -1 and the steering 0), the agents' drive rows
    (:func:`~.drive.agent_drive_table`'s kernels, the ground under them first), the substeps and reads
    (:func:`tick_substeps`), then the read bodies' frames: their base quaternions (:func:`base_quats` where
    ``any_inv``) and :func:`~.kernels.body_frames` into ``frame_quat``, ``frame_rot``, and where ``gemv_fp`` is set
    their lever arms into ``levers`` (:func:`lever_arms` of ``coms``). ``known``: the ego's state as a state request
    would give it now (a row of :func:`read_states`: the last tick's, the world untouched since), whose first substep
    then takes it instead of a request (empty: none known). Returns :func:`tick_substeps`'
    value, or -2.0 before any command where a coordinate under an agent is not finite (the caller then computes the
    drive rows with its fallback and calls :func:`tick_substeps` with ``setup``), and the steering angle (rad)."""
    steer = 0.0
    if ego >= 0:
        steer = ego_steer_setup(e, crashed, prev_steer, friction, ego_k, u, d_ref, v, pos, cyaw, cum, base, last, pts,
                                dirs, setup)
    k = len(idx)
    ground = np.empty(k)
    if not ground_under(heights, g_x0, g_y0, g_scale, pos, idx, ground):
        return -2.0, steer
    drives = np.empty((k, 12))
    agent_drive_rows(idx, stop, parked, accel, pos, vel, omega, quat, kpos, kvel, komega, yaw, cyaw, ground, mass,
                     wheelbase, inertia, com, mu_g, g, dt, pos_tau, yaw_tau, support_tau, drives)
    at = known.ctypes.data if known.shape[0] == 13 else 0
    util = _substeps(sm, substeps, h, frame, bodies, drives, ego, steer, a_cmd, setup, slip_min, standstill, read, raw,
                     at)
    if util < 0.0:
        return util, steer
    if any_inv:
        base_quats(raw, inv, has)
    body_frames(raw, frame_quat, frame_rot)
    if gemv_fp != 0:
        lever_arms(gemv_fp, frame_rot, coms, levers)
    return util, steer
