"""The numba kernels' on-disk cache, filled once before a run forks its workers: :func:`warm_kernels`.

Why: every kernel is compiled with ``cache=True`` (its machine code kept beside its module, in
``__pycache__``), but numba writes a kernel's cache only after compiling it, and a run's process compiled
nothing before forking its stage workers: on a fresh clone each worker compiled the kernels it called,
side by side with its siblings compiling the same ones, and every later fork loaded them from disk again.
Here :data:`KERNELS` names every kernel a run calls from Python, with the argument types it is called with;
:func:`warm_kernels` compiles those not on disk yet (each group of modules in one process, the groups on
every core; the whole table is ~40 CPU-s, the kinematic tick loop's group over half of it) and then loads
them all into this process (~0.5 s), so the workers it forks find them compiled.

Bits: a signature here compiles exactly what a call with such arguments compiles (numba's own path:
``dispatcher.compile`` with the argument types' tuple, the key the cache is indexed by), so results are the
same bytes. A call with types not listed still compiles lazily, as before, just not ahead of time.

Safety: two processes warming at once take turns per group (an ``flock`` beside the group's cache), because
numba's cache index is not safe against two processes adding different signatures of one kernel at the
same time; a group is one module and the kernel modules its kernels call into (whose caches compiling
them writes too).

Keeping the table: ``python -m simready.kernel_cache --missing`` prints the signatures numba has cached
for the current sources that the table lacks (after a ``make run`` on a fresh clone: those its workers still
compiled), in the table's notation (``--missing --tests`` after a test run: what the tests compiled that
:data:`TEST_KERNELS` lacks too); ``tests/test_kernel_cache.py`` fails when a ``cache=True`` kernel is
neither listed nor called by a listed one.

The tests: they call the kernels with argument types a run never does (read-only and non-contiguous arrays, the
kernels of :data:`NOT_IN_RUN`), listed apart in :data:`TEST_KERNELS`; ``--tests`` (``make install``) compiles
those too, so that a fresh clone's test workers load them instead of each compiling the ones it meets first.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import importlib
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numba
import numpy as np
from numba.core import caching, types
from numba.core.dispatcher import Dispatcher

from simready.common.parallel import map_samples
from simready.kernel_signatures import KERNELS, NOT_IN_RUN, TEST_KERNELS

#: An argument's type: a dtype code (numpy's: ``b1`` bool, ``i8``, ``u2``, ``f4``, ``f8`` …) for a scalar, or
#: ``code[N]`` for an N-dimensional C-contiguous array, ``code[NA]`` for any layout, a trailing ``r`` for a
#: read-only array (numba compiles each of those separately).
_TOKEN = re.compile(r"(?P<code>[a-z]\d+)(?:\[(?P<ndim>\d)(?P<layout>[CFA]?)\](?P<ro>r?))?")



@dataclass(frozen=True)
class Kernel:
    """One listed kernel: its group, module and name, the dispatcher and the argument types to compile."""

    group: str
    module: str
    name: str
    dispatcher: Dispatcher
    signatures: tuple[tuple[types.Type, ...], ...]


def arg_type(token: str) -> types.Type:
    """The numba type of one argument in :data:`_TOKEN`'s notation (``"f4[2A]r"``: a read-only float32 2-D array
    of any layout)."""
    m = _TOKEN.fullmatch(token)
    if m is None:
        raise ValueError(f"{token!r} is not an argument type (e.g. 'f8', 'i8[1]', 'f4[2A]r')")
    dtype = numba.from_dtype(np.dtype(m["code"]))
    if m["ndim"] is None:
        return dtype
    return types.Array(dtype, int(m["ndim"]), m["layout"] or "C", readonly=bool(m["ro"]))


def token(t: types.Type) -> str:
    """:func:`arg_type`'s inverse, for the types it covers (``ValueError`` for others)."""
    if isinstance(t, types.Array):
        if not t.aligned:
            raise ValueError(f"{t!r}: an unaligned array has no token")
        layout = "" if t.layout == "C" else t.layout
        return f"{token(t.dtype)}[{t.ndim}{layout}]{'r' if not t.mutable else ''}"
    try:
        code = np.dtype(numba.np.numpy_support.as_dtype(t)).str[1:]
    except Exception:
        raise ValueError(f"{t!r} has no token") from None
    if arg_type(code) != t:
        raise ValueError(f"{t!r} has no token")
    return code


def signature(text: str) -> tuple[types.Type, ...]:
    """The argument types of one listed signature."""
    return tuple(arg_type(tok) for tok in text.split())


def _table(tests: bool) -> dict[str, dict[str, dict[str, tuple[str, ...]]]]:
    """:data:`KERNELS`, with :data:`TEST_KERNELS`' signatures added to the same kernels where ``tests``."""
    if not tests:
        return KERNELS
    out = {g: {m: dict(names) for m, names in modules.items()} for g, modules in KERNELS.items()}
    for group, modules in TEST_KERNELS.items():
        for module_name, names in modules.items():
            listed = out.setdefault(group, {}).setdefault(module_name, {})
            for name, sigs in names.items():
                listed[name] = (*listed.get(name, ()), *sigs)
    return out


def kernels(groups: Sequence[str] | None = None, tests: bool = False) -> list[Kernel]:
    """The listed kernels (of ``groups``, default all), their modules imported; with the argument types only the
    test suite calls them with (:data:`TEST_KERNELS`) where ``tests``."""
    out = []
    for group, modules in _table(tests).items():
        if groups is not None and group not in groups:
            continue
        for module_name, names in modules.items():
            module = importlib.import_module(module_name)
            for name, sigs in names.items():
                out.append(Kernel(group, module_name, name, getattr(module, name), tuple(signature(s) for s in sigs)))
    return out


def _on_disk(dispatcher: Dispatcher, sig: tuple[types.Type, ...]) -> bool:
    """Whether numba's cache holds ``sig`` of ``dispatcher`` for its current source (no compile, no load)."""
    cache = dispatcher._cache
    if not isinstance(cache, caching.Cache):
        return False
    index = cache._cache_file._load_index()
    return cache._index_key(sig, dispatcher.targetctx.codegen()) in index


def missing(kernel: Kernel) -> list[tuple[types.Type, ...]]:
    """``kernel``'s listed signatures neither compiled in this process nor on disk."""
    return [s for s in kernel.signatures if s not in kernel.dispatcher.overloads and not _on_disk(kernel.dispatcher, s)]


@contextlib.contextmanager
def _group_lock(group: list[Kernel]) -> Iterator[None]:
    """An exclusive ``flock`` on the group's lock file in its first kernel's cache folder (none where numba keeps
    no cache folder or it cannot be written: then nobody else can write that cache either)."""
    cache = group[0].dispatcher._cache
    folder = getattr(cache, "_cache_path", None)
    fd = None
    if folder is not None:
        with contextlib.suppress(OSError):
            os.makedirs(folder, exist_ok=True)
            fd = os.open(os.path.join(folder, f"simready-kernels-{group[0].group}.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        if fd is not None:
            os.close(fd)


def _compile(group: list[Kernel]) -> int:
    """Compile (or load) every signature of ``group``'s kernels in this process, holding the group's lock; the
    number compiled rather than loaded."""
    compiled = 0
    with _group_lock(group):
        for kernel in group:
            for sig in kernel.signatures:
                if sig in kernel.dispatcher.overloads:
                    continue
                hits = sum(kernel.dispatcher.stats.cache_hits.values())
                kernel.dispatcher.compile(sig)
                compiled += sum(kernel.dispatcher.stats.cache_hits.values()) == hits
    return compiled


@dataclass(frozen=True)
class Warmed:
    """What :func:`warm_kernels` did: signatures listed, compiled (not on disk before), seconds."""

    signatures: int
    compiled: int
    seconds: float


def warm_kernels(groups: Sequence[str] | None = None, say: Callable[[str], None] | None = print,
                 workers: int | None = None, tests: bool = False) -> Warmed:
    """Have every listed kernel (of ``groups``, default all) compiled in this process, compiling what the on-disk
    cache lacks first: the groups with something missing side by side on ``workers`` forked processes (default:
    one per core, :func:`simready.common.parallel.map_samples`), which write the cache; then this process loads
    them all from it. ``say`` gets one progress line when something is compiled (none when all was on disk).
    ``tests``: the argument types only the test suite calls the kernels with too (:data:`TEST_KERNELS`)."""
    t0 = time.perf_counter()
    listed = kernels(groups, tests)
    by_group: dict[str, list[Kernel]] = {}
    for kernel in listed:
        by_group.setdefault(kernel.group, []).append(kernel)
    todo = [name for name, group in by_group.items() if any(missing(k) for k in group)]
    n_missing = sum(len(missing(k)) for k in listed)
    if todo and say is not None:
        say(f"compiling numba kernels (first run only): {n_missing} signatures in {len(todo)} groups …")
    compiled = 0
    if len(todo) > 1:
        compiled = sum(map_samples(lambda name: _compile(by_group[name]), todo, workers))
    for group in by_group.values():
        compiled += _compile(group)
    warmed = Warmed(sum(len(k.signatures) for k in listed), compiled, time.perf_counter() - t0)
    if todo and say is not None:
        say(f"compiled {warmed.compiled} numba kernel signatures in {warmed.seconds:.1f} s; later runs load them")
    return warmed


def unlisted_on_disk(tests: bool = False) -> dict[tuple[str, str], list[tuple[types.Type, ...]]]:
    """Per listed (module, kernel), the argument types numba's cache holds for its current source that
    :data:`KERNELS` (and :data:`TEST_KERNELS` where ``tests``) does not list."""
    out: dict[tuple[str, str], list[tuple[types.Type, ...]]] = {}
    for kernel in kernels(tests=tests):
        cache = kernel.dispatcher._cache
        if not isinstance(cache, caching.Cache):
            continue
        for key in cache._cache_file._load_index():
            sig = key[0]
            # A literal argument type comes from a call inside another kernel (a constant), never from Python.
            if (isinstance(sig, tuple) and sig not in kernel.signatures
                    and not any(isinstance(t, types.Literal) for t in sig)):
                out.setdefault((kernel.module, kernel.name), []).append(sig)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m simready.kernel_cache", description=__doc__.split("\n")[0])
    parser.add_argument("--missing", action="store_true",
                        help="print the cached signatures of listed kernels that the table lacks, then exit")
    parser.add_argument("--tests", action="store_true",
                        help="the argument types only the test suite calls the kernels with too (TEST_KERNELS)")
    args = parser.parse_args(argv)
    if args.missing:
        for (module, name), sigs in sorted(unlisted_on_disk(args.tests).items()):
            for sig in sigs:
                try:
                    text = " ".join(token(t) for t in sig)
                except ValueError as exc:
                    text = f"<{exc}>"
                print(f"{module}.{name}: {text!r}")
        return 0
    warm_kernels(tests=args.tests)
    return 0


if __name__ == "__main__":
    sys.exit(main())
