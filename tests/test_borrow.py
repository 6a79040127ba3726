"""Borrowed array views (:mod:`simready.sim.core.borrow`): the same memory, shape and strides as the array, no owner."""

from __future__ import annotations

import numba
import numpy as np

from simready.sim.core.borrow import alive, borrowed


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
def _scratch_sum(n: int) -> float:
    """Fills scratch the function allocates through a borrowed view held by :func:`alive`; their sum."""
    own = np.empty(n)
    held = (own,)
    (view,) = borrowed(held)
    for i in range(n):
        view[i] = i
    total = 0.0
    for i in range(n):
        total += view[i]
    alive(held)
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


def test_alive_holds_allocated_scratch() -> None:
    assert _scratch_sum(1000) == sum(range(1000))
