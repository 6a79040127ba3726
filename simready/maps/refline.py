"""OpenDRIVE reference lines: position and heading at arc length s, for every plan-view record.

Frames and units: the map's inertial frame (x, y metres; heading radians
counter-clockwise from +x), which the importer keeps as the world frame.
``s`` is arc length along the reference line, metres.

Why each method:

* line and arc are closed forms;
* spiral (clothoid, curvature linear in s): heading is a quadratic in s, and
  position the integral of (cos, sin) of it, by composite 8-point
  Gauss–Legendre on panels of at most :data:`PANEL_M` — exact to well below
  a micrometre, with no Fresnel cancellation when curvature barely changes;
* poly3 and paramPoly3 are parametric cubics whose parameter is not arc
  length: they are tabulated by arc length (the same quadrature) and inverted
  by interpolation and two Newton steps, so the importer samples them at true
  s like the other records.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from simready.maps.opendrive import Geometry

#: Largest quadrature panel (m).
PANEL_M = 1.0
_GL_X, _GL_W = np.polynomial.legendre.leggauss(8)

Array = NDArray[np.float64]


@dataclass(frozen=True)
class Pose:
    """Sampled reference line: (N,) arrays of x, y (m) and heading (rad)."""

    x: Array
    y: Array
    hdg: Array


def _integrate(f: Callable[[Array], Array], a: Array, b: Array) -> Array:
    """∫_a^b f for arrays of bounds (8-point Gauss–Legendre on each [a, b]); ``f`` maps an array to an array."""
    half = 0.5 * (b - a)
    mid = 0.5 * (b + a)
    nodes = mid[:, None] + half[:, None] * _GL_X[None, :]
    integral: Array = half * (f(nodes) @ _GL_W)
    return integral


def _cumulative(f: Callable[[Array], Array], length: float, s: Array) -> Array:
    """∫_0^s f for each s in [0, length], composite over panels of at most PANEL_M."""
    n = max(1, math.ceil(length / PANEL_M))
    edges = np.linspace(0.0, length, n + 1)
    at_edges = np.concatenate([[0.0], np.cumsum(_integrate(f, edges[:-1], edges[1:]))])
    k = np.clip(np.searchsorted(edges, s, side="right") - 1, 0, n - 1)
    return at_edges[k] + _integrate(f, edges[k], s)


def _spiral(g: Geometry, ds: Array) -> tuple[Array, Array, Array]:
    c0, c1 = g.param("curvStart"), g.param("curvEnd")
    rate = (c1 - c0) / g.length

    def theta(u: Array) -> Array:
        return g.hdg + u * (c0 + 0.5 * rate * u)

    x = g.x + _cumulative(lambda u: np.cos(theta(u)), g.length, ds)
    y = g.y + _cumulative(lambda u: np.sin(theta(u)), g.length, ds)
    return x, y, theta(ds)


def _cubic(p: Array, a: float, b: float, c: float, d: float) -> tuple[Array, Array]:
    return a + p * (b + p * (c + p * d)), b + p * (2.0 * c + 3.0 * p * d)


def _abcd(g: Geometry, suffix: str = "") -> tuple[float, float, float, float]:
    """A cubic's coefficients: the record's parameters ``a b c d`` (each followed by ``suffix``)."""
    a, b, c, d = (g.param(k + suffix) for k in "abcd")
    return a, b, c, d


def _parametric(g: Geometry, ds: Array) -> tuple[Array, Array, Array]:
    """poly3 (u = p, v = cubic) and paramPoly3 (u, v cubics in p), sampled at arc length ``ds``."""
    if g.kind == "poly3":
        cu = (0.0, 1.0, 0.0, 0.0)
        cv = _abcd(g)
        # s(u) >= u, so the curve's length is reached at some u <= length.
        p_end = g.length
    else:
        cu = _abcd(g, "U")
        cv = _abcd(g, "V")
        p_end = 1.0 if g.text("pRange", "normalized") == "normalized" else g.length

    def speed(p: Array) -> Array:
        return np.hypot(_cubic(p, *cu)[1], _cubic(p, *cv)[1])

    n = max(64, math.ceil(g.length / 0.05))
    grid = np.linspace(0.0, p_end, n + 1)
    s_grid = _cumulative(speed, p_end, grid)
    p = np.interp(ds, s_grid, grid)
    for _ in range(2):
        p = p - (_cumulative(speed, p_end, np.clip(p, 0.0, p_end)) - ds) / np.maximum(speed(p), 1e-12)
    u, du = _cubic(p, *cu)
    v, dv = _cubic(p, *cv)
    ch, sh = math.cos(g.hdg), math.sin(g.hdg)
    return g.x + ch * u - sh * v, g.y + sh * u + ch * v, g.hdg + np.arctan2(dv, du)


def evaluate(g: Geometry, s: Array) -> tuple[Array, Array, Array]:
    """``(x, y, hdg)`` of record ``g`` at road arc lengths ``s`` (within [g.s, g.s + g.length])."""
    ds = np.asarray(s, dtype=np.float64) - g.s
    if g.kind == "line" or (g.kind == "arc" and g.param("curvature") == 0.0):
        return g.x + ds * math.cos(g.hdg), g.y + ds * math.sin(g.hdg), np.full_like(ds, g.hdg)
    if g.kind == "arc":
        k = g.param("curvature")
        h = g.hdg + k * ds
        return g.x + (np.sin(h) - math.sin(g.hdg)) / k, g.y - (np.cos(h) - math.cos(g.hdg)) / k, h
    if g.kind == "spiral":
        return _spiral(g, ds)
    return _parametric(g, ds)


def max_curvature(g: Geometry) -> float:
    """Largest |curvature| on the record (1/m), for choosing the sampling step."""
    if g.kind == "line":
        return 0.0
    if g.kind == "arc":
        return abs(g.param("curvature"))
    if g.kind == "spiral":
        return max(abs(g.param("curvStart")), abs(g.param("curvEnd")))
    s = np.linspace(g.s, g.s + g.length, 65)
    _, _, h = evaluate(g, s)
    return float(np.max(np.abs(np.diff(np.unwrap(h)) / np.diff(s))))


def reference_poses(geometries: tuple[Geometry, ...], s: Array) -> Pose:
    """Reference-line poses at sorted road s values; each s is evaluated on the last record starting at or before it."""
    starts = np.array([g.s for g in geometries])
    which = np.clip(np.searchsorted(starts, s, side="right") - 1, 0, len(geometries) - 1)
    x = np.empty_like(s)
    y = np.empty_like(s)
    h = np.empty_like(s)
    for i, g in enumerate(geometries):
        mask = which == i
        if mask.any():
            x[mask], y[mask], h[mask] = evaluate(g, s[mask])
    return Pose(x, y, h)
