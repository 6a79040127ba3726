"""Convex decomposition of a render mesh into collider pieces: CoACD, with V-HACD (vhacdx) as the fallback.

CoACD (Wei et al., SIGGRAPH 2022) cuts the mesh until every piece's
concavity is below ``threshold`` (a fraction of the mesh's bounding-box
diagonal, CoACD's own normalization); fewer, tighter pieces than V-HACD's
voxel hulls, and it keeps the open space under a vehicle open. It is run
with a fixed seed and a reduced tree search (:data:`COACD_SEARCH`) so that a
10 000-triangle asset decomposes in seconds on one core. When CoACD fails on
a mesh, V-HACD runs instead; the record says which ran, with what settings.

Each library runs in a forked child process (:func:`_in_child`): CoACD 1.0.14
crashes the process outright (a segmentation fault) on some repaired solids
(the husky of ``pybullet_data``), which no ``except`` can catch. The parent
reads the pieces back through a pipe; a child that dies by a signal, or runs
past :data:`DECOMPOSE_TIMEOUT_S`, is one line naming the library and why
(:attr:`Decomposition.failures`), and the next library runs.

A solid of more than :data:`MAX_DECOMPOSE_FACES` triangles is simplified
first (manifold3d's ``simplify``, deterministic, keeping the volume within
:data:`SIMPLIFY_VOLUME_REL`; :func:`simplified`), because CoACD's time grows
with the triangles it cuts; the record says so. A solid still over
:data:`COACD_MAX_FACES` goes to V-HACD directly.

Every piece returned is a vertex array; the caller takes its convex hull
after rounding to the file grid, so a piece on disk is exactly convex.
Units: whatever the input is in (the caller passes metres, body frame).
"""

from __future__ import annotations

import faulthandler
import hashlib
import os
import pickle
import select
import signal
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, cast

import coacd
import manifold3d
import numpy as np
import vhacdx
from numpy.typing import NDArray

from simready.common.errors import CatalogError

DEFAULT_THRESHOLD = 0.05
#: CoACD's tree search, reduced from its defaults (150 iterations, 20 nodes, depth 3): measured on the
#: pybullet duck (4 212 triangles), 44 s → 2.6 s for 11 pieces and 1.4 % volume error.
COACD_SEARCH = {"mcts_iterations": 30, "mcts_nodes": 10, "mcts_max_depth": 2}
#: The input is manifold3d's union of the render shells, a closed 2-manifold already: CoACD's voxel remeshing
#: ("auto") would only coarsen it (measured on the COLLADA duck: 6.7 % collider excess instead of 1.4 %, 6× slower).
COACD_PREPROCESS = "off"
COACD_SEED = 0
MAX_PIECES = 32
VHACD_SETTINGS: dict[str, Any] = {"maxConvexHulls": MAX_PIECES, "resolution": 100_000}
#: Triangles above which the solid is simplified before it is decomposed (CoACD's time grows with them).
MAX_DECOMPOSE_FACES = 20_000
#: Triangles above which CoACD is not tried at all (after simplification): V-HACD decomposes instead, in seconds.
#: The pybullet husky's solid keeps 55 692 of its 119 542 triangles within 1 % of its volume, and CoACD ran past
#: :data:`DECOMPOSE_TIMEOUT_S` on it; a budget in triangles decides the same way on every machine.
COACD_MAX_FACES = 30_000
#: manifold3d ``simplify``'s first tolerance, a fraction of the solid's bounding-box diagonal (0.2 mm on a 2 m bike),
#: and how much of the solid's volume the simplification may change.
SIMPLIFY_TOLERANCE_REL = 1e-4
SIMPLIFY_VOLUME_REL = 0.01
#: Wall-clock bound on one library's run in its child process (s): a guard against a run that does not end, whose
#: one line says so (the pybullet bicycle's frame simplified to 9 982 triangles ran past 240 s; at 14 824, within
#: 1 % of its volume, CoACD crashes on it instead). No corpus file reaches it (``make bench import``); what
#: decides between the libraries is :data:`COACD_MAX_FACES`, the same on every machine.
DECOMPOSE_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Decomposition:
    """Convex pieces (vertex arrays) and how they were made (recorded in ``entry.json``).

    failures: one line per library that ran before this one and failed (crashed, ran out of time, or raised),
    in order; ``simplified``: (triangles before, after) when the solid was simplified first, else None.
    """

    pieces: list[NDArray[np.float64]]
    method: str
    settings: dict[str, Any] = field(default_factory=dict)
    failures: tuple[str, ...] = ()
    simplified: tuple[int, int] | None = None


class DecomposeFailure(Exception):
    """One library's run ended without pieces: ``crashed`` when the child process died (a signal or a time-out)."""

    def __init__(self, reason: str, crashed: bool) -> None:
        super().__init__(reason)
        self.crashed = crashed


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def _coacd(vertices: NDArray[np.float64], faces: NDArray[np.int64], threshold: float, max_pieces: int) -> Decomposition:
    coacd.set_log_level("error")
    settings = {"threshold": threshold, "max_convex_hull": max_pieces, "seed": COACD_SEED,
                "preprocess_mode": COACD_PREPROCESS, **COACD_SEARCH}
    pieces = coacd.run_coacd(coacd.Mesh(np.asarray(vertices, dtype=np.float64), np.asarray(faces, dtype=np.int32)), **settings)
    return Decomposition([np.asarray(v, dtype=np.float64) for v, _ in pieces], f"coacd {_version('coacd')}", settings)


def _vhacd(vertices: NDArray[np.float64], faces: NDArray[np.int64], threshold: float, max_pieces: int) -> Decomposition:
    # vhacdx reads faces as a flat [3, a, b, c, 3, …] list (an (M, 3) array is read as that too, and decomposes
    # garbage: 32 slivers holding 1 % of a box's volume).
    tri = np.asarray(faces, dtype=np.uint32).reshape(-1, 3)
    flat = np.hstack([np.full((len(tri), 1), 3, dtype=np.uint32), tri]).ravel()
    settings = {**VHACD_SETTINGS, "maxConvexHulls": max_pieces}
    pieces = vhacdx.compute_vhacd(np.asarray(vertices, dtype=np.float64), flat, **settings)
    settings = {"threshold": threshold, **settings}
    return Decomposition([np.asarray(v, dtype=np.float64) for v, _ in pieces], f"vhacdx {_version('vhacdx')}", settings)


#: (vertices, faces, threshold, max_pieces) → pieces.
Runner = Callable[[NDArray[np.float64], NDArray[np.int64], float, int], Decomposition]
#: The libraries tried, in order (a test replaces one with a run that crashes its process).
RUNNERS: tuple[Runner, ...] = (_coacd, _vhacd)


def _name(run: Runner) -> str:
    return run.__name__.lstrip("_")


def _in_child(run: Runner, vertices: NDArray[np.float64], faces: NDArray[np.int64], threshold: float,
              max_pieces: int, timeout_s: float) -> Decomposition:
    """``run`` in a forked child; its result comes back pickled through a pipe. DecomposeFailure when it raises
    (RuntimeError/ValueError, the libraries' own refusals), dies by a signal or runs past ``timeout_s``."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        status = 0
        try:
            faulthandler.disable()  # a crash is reported by the parent, in one line
            os.close(read_fd)
            try:
                payload: tuple[str, Any] = ("ok", run(vertices, faces, threshold, max_pieces))
            except (RuntimeError, ValueError) as exc:
                payload = ("error", str(exc) or type(exc).__name__)
            data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_fd, "wb") as out:
                out.write(data)
        except BaseException:  # noqa: BLE001 - anything else is reported by the exit status
            status = 70
        finally:
            os._exit(status)
    os.close(write_fd)
    chunks, deadline, timed_out = [], time.monotonic() + timeout_s, False
    try:
        with os.fdopen(read_fd, "rb", buffering=0) as pipe:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([pipe], [], [], left)[0]:
                    timed_out = True
                    os.kill(pid, signal.SIGKILL)
                    break
                chunk = pipe.read(1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
    except BaseException:  # interrupted (Ctrl-C, SIGTERM): the child goes with the parent
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    _, status = os.waitpid(pid, 0)
    if timed_out:
        raise DecomposeFailure(f"ran past {timeout_s:g} s and was stopped", crashed=True)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        raise DecomposeFailure(f"crashed its process ({signal.Signals(sig).name})", crashed=True)
    if not chunks:
        raise DecomposeFailure(f"its process exited with status {os.WEXITSTATUS(status)} and no result", crashed=True)
    kind, value = pickle.loads(b"".join(chunks))
    if kind == "error":
        raise DecomposeFailure(value, crashed=False)
    return cast(Decomposition, value)


#: A library's pieces of a solid it already decomposed in this process, by (library, solid, threshold, pieces): a scene
#: of repeated objects (or an asset imported again) decomposes each distinct solid once. Only results are kept (a
#: failure runs again); each hit is handed out as copies. Bounded: the oldest go first.
_DONE: OrderedDict[tuple[Any, ...], Decomposition] = OrderedDict()
_DONE_MAX = 256


def _decomposed(run: Runner, vertices: NDArray[np.float64], faces: NDArray[np.int64], threshold: float,
                max_pieces: int, timeout_s: float) -> Decomposition:
    """:func:`_in_child`, once per distinct (library, solid, threshold, max_pieces) in this process (``_DONE``)."""
    v, f = np.ascontiguousarray(vertices, dtype=np.float64), np.ascontiguousarray(faces, dtype=np.int64)
    solid = hashlib.sha256(repr((v.shape, f.shape)).encode() + v.tobytes() + f.tobytes()).digest()
    key = (run, solid, float(threshold), int(max_pieces))
    done = _DONE.get(key)
    if done is None:
        done = _in_child(run, vertices, faces, threshold, max_pieces, timeout_s)
        _DONE[key] = done
        while len(_DONE) > _DONE_MAX:
            _DONE.popitem(last=False)
    else:
        _DONE.move_to_end(key)
    return Decomposition([p.copy() for p in done.pieces], done.method, dict(done.settings), done.failures,
                         done.simplified)


def simplified(vertices: NDArray[np.float64], faces: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """The solid with fewer triangles, closed and 2-manifold: manifold3d ``simplify`` from
    :data:`SIMPLIFY_TOLERANCE_REL` of the bounding-box diagonal, the tolerance doubled while more than
    :data:`MAX_DECOMPOSE_FACES` triangles remain and the volume stays within :data:`SIMPLIFY_VOLUME_REL` (a thin
    frame loses its tubes first: the bicycle's at 0.4 % of its diagonal kept 10 % of its volume)."""
    v = np.asarray(vertices, dtype=np.float64)
    solid = manifold3d.Manifold(manifold3d.Mesh(vert_properties=v.astype(np.float32),
                                                tri_verts=np.asarray(faces, dtype=np.uint32)))
    tol = SIMPLIFY_TOLERANCE_REL * float(np.linalg.norm(v.max(axis=0) - v.min(axis=0)))
    volume, best = solid.volume(), solid
    for _ in range(8):
        out = solid.simplify(tol)
        if abs(out.volume() - volume) > SIMPLIFY_VOLUME_REL * volume:
            break
        best = out
        if out.num_tri() <= MAX_DECOMPOSE_FACES:
            break
        tol *= 2
    mesh = best.to_mesh()
    return np.asarray(mesh.vert_properties[:, :3], dtype=np.float64), np.asarray(mesh.tri_verts, dtype=np.int64)


def decompose(vertices: NDArray[np.float64], faces: NDArray[np.int64], threshold: float, source: str | Path,
              max_pieces: int = MAX_PIECES, timeout_s: float = DECOMPOSE_TIMEOUT_S) -> Decomposition:
    """Convex pieces of a closed 2-manifold; CatalogError (one line naming every library and why) when none can
    decompose it. Each library runs in its own child process (:func:`_in_child`), once per distinct solid in this
    process (:func:`_decomposed`)."""
    if not 0.0 < threshold <= 1.0:
        raise CatalogError(source, "--threshold", f"{threshold:g} is not in (0, 1]")
    shrunk = None
    if len(faces) > MAX_DECOMPOSE_FACES:
        before = len(faces)
        vertices, faces = simplified(vertices, faces)
        shrunk = (before, len(faces))
    problems: list[str] = []
    for run in RUNNERS:
        if _name(run) == "coacd" and len(faces) > COACD_MAX_FACES:
            problems.append(f"coacd: {len(faces)} triangles, over its budget of {COACD_MAX_FACES}")
            continue
        try:
            result = _decomposed(run, vertices, faces, threshold, max_pieces, timeout_s)
        except DecomposeFailure as exc:
            problems.append(f"{_name(run)}: {exc}")
            continue
        pieces = [p for p in result.pieces if len(p) >= 4]
        if pieces:
            return Decomposition(pieces, result.method, result.settings, tuple(problems), shrunk)
        problems.append(f"{_name(run)}: no piece with a volume")
    raise CatalogError(source, "collider", "the mesh cannot be decomposed into convex pieces (" + "; ".join(problems) + ")")
