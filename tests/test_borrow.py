"""Borrowed array views (:mod:`simready.sim.core.borrow`): the same memory, shape and strides as the array, no owner."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest

from simready.sim.core.borrow import borrowed


@numba.njit(cache=False)
def _scale_borrowed(a: np.ndarray, b: np.ndarray, k: float) -> float:
    """Writes ``k`` times each element of ``a`` into ``b`` through borrowed views; the sum of the views' ``a``."""
    va, vb = borrowed((a, b))
    total = 0.0
    for i in range(va.shape[0]):
        for j in range(va.shape[1]):
            vb[i, j] = k * va[i, j]
            total += va[i, j]
    return total


@numba.njit(cache=False)
def _view_facts(a: np.ndarray) -> tuple[int, int, int, int]:
    (v,) = borrowed((a,))
    return v.shape[0], v.shape[1], v.strides[0], v.strides[1]


def test_borrowed_views_read_and_write_the_arrays_memory() -> None:
    a = np.arange(12.0).reshape(3, 4)
    b = np.zeros((3, 4))
    assert _scale_borrowed(a, b, 2.0) == a.sum()
    np.testing.assert_array_equal(b, 2.0 * a)


def test_borrowed_views_keep_shape_and_strides() -> None:
    a = np.arange(24.0).reshape(4, 6)[::2, 1::2]
    assert _view_facts(a) == (a.shape[0], a.shape[1], a.strides[0], a.strides[1])


#: A child that sums scratch it allocates, read through a borrowed view; ``{keep}``: :func:`alive` after the view's
#: last use, or nothing.
_CHILD = textwrap.dedent("""
    import numba
    import numpy as np
    from simready.sim.core.borrow import alive, borrowed

    @numba.njit(cache=False)
    def scratch_sum(n):
        own = np.empty(n)
        held = (own,)
        (view,) = borrowed(held)
        for i in range(n):
            view[i] = i
        total = 0.0
        for i in range(n):
            total += view[i]
        {keep}
        return total

    print(scratch_sum(1000) == sum(range(1000)))
""")


def _child(variant: str) -> subprocess.CompletedProcess[str]:
    """The child under glibc's every-allocation-its-own-mapping setting: memory used after numba frees it is unmapped,
    so the read faults instead of finding the old values still there."""
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "0"}
    source = _CHILD.replace("{keep}", "alive(held)" if variant == "alive" else "pass")
    return subprocess.run([sys.executable, "-c", source], env=env, capture_output=True, text=True, timeout=300)


def test_alive_is_what_keeps_the_scratch_mapped() -> None:
    """Without :func:`alive` numba frees the scratch after its last use as an owner, before the views' reads: under
    the unmapping allocator that read faults. With it, the same function reads its own values."""
    held = _child("alive")
    assert held.returncode == 0 and held.stdout.strip() == "True", held.stderr[-2000:]
    dropped = _child("dropped")
    assert dropped.returncode != 0, "reading freed scratch did not fault: the test cannot tell alive() is needed"


@pytest.mark.slow
def test_compiled_ticks_under_the_unmapping_allocator(tmp_path: Path) -> None:
    """dynamic-v1's and kinematic-v1's compiled ticks borrow ~100 arrays a tick: their bit-for-bit tests against the
    Python path, again in a child where every allocation is its own mapping, so a view read after its owner was freed
    faults instead of passing on stale values."""
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "0"}
    test = Path(__file__).with_name("test_sim_quiet_ticks.py")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           f"--basetemp={tmp_path / 'child'}", str(test)], env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
