"""The declared precision of the truth tables' float columns (SPEC §11): one place that says it.

Truth is computed in float64; the tables store float32. For the columns
below, float32's last mantissa bits are noise that no consumer needs and
that no compressor can shrink (they were most of the bytes), so each is
stored rounded to a multiple of a declared absolute step: the value a
reader gets is within ``step / 2`` of the computed one (round half to
even), still float32, still the same column. Steps are powers of two, so
the multiples are exact in float32 for every value the tables hold (below
2²⁴·step). The files store these columns as int32 differences of their
multiples of the step (:func:`simready.measurement.writers.differenced`), which
the reader sums back to the same float32 values.

============================  ===========  ======================================================
column                        step          error bound as stored
============================  ===========  ======================================================
surface ``bary_u, bary_v``    2⁻²⁰          ≤ 4.8e-7 per weight: the point moves ≤ 4.8e-7·(|e1|+|e2|)
                                            (≤ 4.8 µm on a triangle with 5 m edges)
flow ``flow_du_px, _dv_px``   2⁻¹⁰ px       ≤ 4.9e-4 px
motion ``du_dt_pxps, dv_…``   2⁻⁸ px/s      ≤ 2.0e-3 px/s (≤ 1e-4 px over a 20 Hz frame interval)
============================  ===========  ======================================================

Other float columns (depths, scene displacement, depth rate) are plain
float32: they compress well as they are (relative precision 6e-8).

Each table's Parquet metadata (key ``simready.truth``) repeats its declared
columns' ``step`` and ``max_abs_error`` under ``precision``
(:data:`DECLARED_STEPS`), and names under ``derived`` the columns no longer
stored because :class:`simready.truth.reader.TruthReader` computes them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

BARYCENTRIC_STEP = 2.0 ** -20
FLOW_STEP_PX = 2.0 ** -10
MOTION_STEP_PXPS = 2.0 ** -8


#: Each truth table's columns stored at a declared step, by the pass's file kind (``surface``, ``motion``,
#: ``forward``, ``backward``): column -> step. A value as stored is within ``step / 2`` of the computed one.
DECLARED_STEPS: dict[str, dict[str, float]] = {
    "surface": {"bary_u": BARYCENTRIC_STEP, "bary_v": BARYCENTRIC_STEP},
    "motion": {"du_dt_pxps": MOTION_STEP_PXPS, "dv_dt_pxps": MOTION_STEP_PXPS},
    "forward": {"flow_du_px": FLOW_STEP_PX, "flow_dv_px": FLOW_STEP_PX},
    "backward": {"flow_du_px": FLOW_STEP_PX, "flow_dv_px": FLOW_STEP_PX},
}


def declared_precision(kind: str, columns: Iterable[str]) -> dict[str, dict[str, Any]]:
    """What a table of ``kind`` states in its Parquet metadata (``precision``) about those of ``columns`` stored at
    a declared step: ``step`` and ``max_abs_error`` (``step / 2``) of each. Empty for a kind without any."""
    steps = DECLARED_STEPS.get(kind)
    if steps is None:
        return {}
    return {c: {"step": steps[c], "max_abs_error": steps[c] / 2} for c in columns if c in steps}


def quantized(values: ArrayLike, step: float) -> NDArray[np.float32]:
    """``values`` rounded to the nearest multiple of ``step`` (a power of two), as float32; NaN stays NaN."""
    x = np.asarray(values, np.float64)
    return (np.rint(x / step) * step).astype(np.float32)
