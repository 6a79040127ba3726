"""The kernels compiled once before a run (simready.kernel_cache): the table covers every cached kernel, its
signatures fit the kernels, and warming compiles (and caches) each signature it lists."""

from __future__ import annotations

import importlib
import inspect
import pathlib
import types as pytypes

import numpy as np
import pytest
from numba.core import caching, types
from numba.core.dispatcher import Dispatcher

import simready
from simready import kernel_cache as kc

ROOT = pathlib.Path(simready.__file__).parent


def _cached_dispatchers() -> dict[int, tuple[str, Dispatcher]]:
    """Every ``cache=True`` numba kernel defined in the package, by id: (qualified name, dispatcher)."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        text = path.read_text()
        if "import numba" not in text:
            continue
        name = ".".join(("simready", *path.relative_to(ROOT).with_suffix("").parts))
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if (isinstance(value, Dispatcher) and value.py_func.__module__ == name
                    and isinstance(value._cache, caching.Cache)):
                out[id(value)] = (f"{name}.{attr}", value)
    return out


def _codes(code: pytypes.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            yield from _codes(const)


def _callees(dispatcher: Dispatcher) -> list[Dispatcher]:
    """The kernels ``dispatcher``'s Python source names (``f(...)`` or ``module.f(...)``)."""
    glob = dispatcher.py_func.__globals__
    out = []
    for code in _codes(dispatcher.py_func.__code__):
        for name in code.co_names:
            value = glob.get(name)
            if isinstance(value, Dispatcher):
                out.append(value)
            elif isinstance(value, pytypes.ModuleType):
                out.extend(v for n in code.co_names if isinstance(v := getattr(value, n, None), Dispatcher))
    return out


def test_every_cached_kernel_is_listed_or_called_by_a_listed_one() -> None:
    cached = _cached_dispatchers()
    assert len(cached) > 50  # the scan found the kernel modules
    reached: dict[int, Dispatcher] = {}
    todo = [k.dispatcher for k in kc.kernels()]
    while todo:
        d = todo.pop()
        if id(d) not in reached:
            reached[id(d)] = d
            todo.extend(_callees(d))
    forgotten = sorted(name for key, (name, _) in cached.items() if key not in reached and name not in kc.NOT_IN_RUN)
    assert set(kc.NOT_IN_RUN) <= {name for name, _ in cached.values()}
    assert not forgotten, f"add these to simready.kernel_cache.KERNELS (with the types a run calls them with) or NOT_IN_RUN: {forgotten}"


def test_listed_signatures_fit_their_kernels() -> None:
    listed = kc.kernels(tests=True)  # the run's table and the tests' variants, merged per kernel
    assert len({(k.module, k.name) for k in listed}) == len(listed)
    for kernel in listed:
        params = inspect.signature(kernel.dispatcher.py_func).parameters
        assert kernel.signatures, f"{kernel.module}.{kernel.name}: no signature"
        assert len(set(kernel.signatures)) == len(kernel.signatures), f"{kernel.module}.{kernel.name}: a repeat"
        for sig in kernel.signatures:
            assert len(sig) == len(params), f"{kernel.module}.{kernel.name}: {len(sig)} types for {len(params)} parameters"
    # A group's modules call into no other group's (one process writes each module's cache).
    group_of = {k.module: k.group for k in listed}
    for kernel in listed:
        for callee in _callees(kernel.dispatcher):
            assert group_of.get(callee.py_func.__module__, kernel.group) == kernel.group, (kernel.name, callee)


def test_argument_tokens_are_numbas_types() -> None:
    assert kc.arg_type("f8") is types.float64
    assert kc.arg_type("b1") == types.boolean
    assert kc.arg_type("i8[1]") == types.Array(types.int64, 1, "C")
    assert kc.arg_type("f4[2A]r") == types.Array(types.float32, 2, "A", readonly=True)
    ro = np.zeros((3, 2), np.float32)[:, :1]
    ro.flags.writeable = False
    from numba import typeof

    assert kc.arg_type("f4[2A]r") == typeof(ro)
    assert kc.arg_type("u2[1]") == typeof(np.zeros(3, np.uint16))
    for t in ("f8", "b1", "i8[1]", "f4[2A]r", "u1[3F]"):
        assert kc.token(kc.arg_type(t)) == t
    for bad in ("float", "f8[]", "f8[1X]", "f8 "):
        with pytest.raises(ValueError):
            kc.arg_type(bad)


def test_warming_compiles_and_caches_each_listed_signature() -> None:
    group = "motion"
    warmed = kc.warm_kernels([group], say=None, workers=1)
    listed = kc.kernels([group])
    assert warmed.signatures == sum(len(k.signatures) for k in listed) > 0
    for kernel in listed:
        for sig in kernel.signatures:
            assert sig in kernel.dispatcher.overloads, (kernel.name, sig)
            assert kc._on_disk(kernel.dispatcher, sig), (kernel.name, sig)
        assert kc.missing(kernel) == []
    assert kc.warm_kernels([group], say=None, workers=1).compiled == 0


@pytest.mark.slow
def test_warming_every_group_compiles_every_cached_kernel() -> None:
    """The whole table, the tests' variants too, compiles (a stale signature would raise) and is in this process
    afterwards."""
    lines: list[str] = []
    kc.warm_kernels(say=lines.append, tests=True)
    for kernel in kc.kernels(tests=True):
        assert all(sig in kernel.dispatcher.overloads for sig in kernel.signatures), kernel.name
        assert kc.missing(kernel) == []
    assert not lines or lines[0].startswith("compiling numba kernels (first run only)")


def test_two_processes_warming_at_once_compile_each_signature_once(tmp_path: pathlib.Path) -> None:
    """The group's lock: the second process finds the first one's cache (nothing compiled twice, nothing lost)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "PYTHONPATH": str(ROOT.parent)}
    code = ("from simready import kernel_cache as kc; "
            "print(kc.warm_kernels(['motion'], say=None, workers=1).compiled)")
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    compiled = [int(p.communicate(timeout=300)[0].split()[-1]) for p in procs]
    n = sum(len(k.signatures) for k in kc.kernels(["motion"]))
    assert sorted(compiled) == [0, n]
    again = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert int(again.stdout.split()[-1]) == 0


def test_a_cached_kernels_cache_is_keyed_to_every_module_whose_kernels_it_carries() -> None:
    """numba keys a cached kernel to its own file only: one that calls another module's kernels (directly or through
    others) carries compiled copies of them, so its module registers those modules' files
    (:func:`simready.sim.core.cache_stamp.stamp_callees`), else an edit there would leave its cache stale."""
    from simready.sim.core.cache_stamp import stamped

    unkeyed = set()
    for name, dispatcher in _cached_dispatchers().values():
        own = inspect.getfile(dispatcher.py_func)
        seen: dict[int, Dispatcher] = {}
        todo = list(_callees(dispatcher))
        while todo:
            d = todo.pop()
            if id(d) not in seen:
                seen[id(d)] = d
                todo.extend(_callees(d))
        files = {inspect.getfile(d.py_func) for d in seen.values()} - {own}
        keyed = {pathlib.Path(f).resolve() for f in stamped(own)}
        unkeyed |= {(name, str(pathlib.Path(f).resolve().relative_to(ROOT.resolve()))) for f in files
                    if pathlib.Path(f).resolve() not in keyed}
    assert not unkeyed, sorted(unkeyed)
