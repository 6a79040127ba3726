"""The compile options every truth kernel shares (numba).

Bits: ``fastmath`` off and numpy's error model, as :mod:`simready.sim.core.kernels`, so each kernel repeats its
numpy reference's operations bit for bit. The compiled code is cached beside each kernel's module (``cache=True``).
"""

from __future__ import annotations

JIT = dict(cache=True, nogil=True, error_model="numpy", fastmath=False)
