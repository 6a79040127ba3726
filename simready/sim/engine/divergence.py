"""Whether a stepped state can be continued: finite, not exploding, on the map (the reason worded when not)."""

from __future__ import annotations

import numpy as np

from simready.sim.core import constants as C
from simready.sim.core import kernels
from simready.sim.core.scene import Scene
from simready.sim.core.state import SimState


def divergence(scene: Scene, state: SimState, check_bounds: bool) -> str | None:
    """Why the state cannot be continued (non-finite, exploding, far off the map), or None.

    Finiteness and speed are checked every tick; bounds on perception ticks
    (a body cannot cover the out-of-bounds margin between two of them). The
    compiled predicate (:func:`simready.sim.core.kernels.state_ok`) clears a good
    state; only a bad one is worded, by :func:`divergence_reason`.
    """
    b = state.bodies
    xmin, ymin, xmax, ymax = scene.bounds
    mgn = C.OUT_OF_BOUNDS_MARGIN_M
    if kernels.state_ok(b.pos, b.quat, b.vel, b.omega, b.present, C.EXPLOSION_SPEED_MPS, check_bounds,
                        xmin - mgn, xmax + mgn, ymin - mgn, ymax + mgn, mgn):
        return None
    return divergence_reason(scene, state)


def divergence_reason(scene: Scene, state: SimState) -> str | None:
    b = state.bodies
    for name in ("pos", "quat", "vel", "omega"):
        arr = getattr(b, name)
        if not np.isfinite(arr).all():
            who = scene.actors.ids[int(np.flatnonzero(~np.isfinite(arr).all(axis=1))[0])]
            return f"non-finite {name} of {who}"
    speed = np.hypot(b.vel[:, 0], b.vel[:, 1])
    if (speed > C.EXPLOSION_SPEED_MPS).any():
        bad = int(np.argmax(speed))
        return f"explosion: {scene.actors.ids[bad]} at {speed[bad]:.1f} m/s"
    xmin, ymin, xmax, ymax = scene.bounds
    mgn = C.OUT_OF_BOUNDS_MARGIN_M
    x, y, z = b.pos[:, 0], b.pos[:, 1], b.pos[:, 2]
    out = b.present & ((x < xmin - mgn) | (x > xmax + mgn) | (y < ymin - mgn) | (y > ymax + mgn) | (np.abs(z) > mgn))
    if out.any():
        bad = int(np.flatnonzero(out)[0])
        return f"out of bounds: {scene.actors.ids[bad]} at ({x[bad]:.1f}, {y[bad]:.1f}, {z[bad]:.1f})"
    return None
