"""Compiled kernels of the perception truth (numba), one module per pass.

Why compiled: each runs once per frame or correspondence over every visible sample of a full-resolution frame
(~10⁶ points); as numpy each step is a full-array pass and a gather, and the passes, not the arithmetic, were the
cost. Each keeps its numpy reference's operations in order, bit for bit (:mod:`.compile`: the shared options,
``cache=True``: compiled code cached beside each module).

- :mod:`.samples`: a frame's visible samples from its hits, with the surface table's columns (:func:`surface_samples`).
- :mod:`.projection`: the rolling-shutter row iteration (:func:`settle_rows`) and pinhole pixels and flags
  (:func:`pixels_and_flags`).
- :mod:`.visibility`: visibility from the target frame's buffers (:func:`buffer_visibility`, its states).
- :mod:`.flow`: a correspondence's flow-table columns in one fused call (:func:`flow_of_samples`).
- :mod:`.motion_field`: the motion field's per-sample step (:func:`image_velocity`).
- :mod:`.tables`: the tables' columns pass by pass (:func:`quantized32`, :func:`surface_columns`,
  :func:`flow_columns`).
- :mod:`.tracks`: per-body pixel counts and boxes (:func:`body_pixel_boxes`).

The truth's modules import each kernel from its module; every name is also imported from this package.
"""

from __future__ import annotations

from simready.truth.kernels.flow import flow_of_samples
from simready.truth.kernels.motion_field import image_velocity
from simready.truth.kernels.projection import pixels_and_flags, settle_rows
from simready.truth.kernels.samples import surface_samples
from simready.truth.kernels.tables import flow_columns, quantized32, surface_columns
from simready.truth.kernels.tracks import body_pixel_boxes
from simready.truth.kernels.visibility import HIDDEN, OUT_OF_VIEW, UNDECIDED, VISIBLE, buffer_visibility

__all__ = [
    "HIDDEN", "OUT_OF_VIEW", "UNDECIDED", "VISIBLE", "body_pixel_boxes", "buffer_visibility", "flow_columns",
    "flow_of_samples", "image_velocity", "pixels_and_flags", "quantized32", "settle_rows", "surface_columns",
    "surface_samples",
]
