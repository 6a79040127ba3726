"""A pedestrian stepping off and onto a kerb moves its height with a velocity (simready.sim.core.kinematics, "Height")."""

from __future__ import annotations

import numpy as np

from simready.sim.core import constants as C
from simready.sim.run import run_simulation
from simready.sim.core.scene import build_scene
from tests.fixtures.sim import catalog, crossing, template

#: |Δz − ½(vz₀ + vz₁)·dt| per tick (m) at dt = 0.02 s: the smoothstep ramp's trapezoid error at walking speed
#: (measured 4.1e-4 m; before the ramp the kerb was one 0.15 m jump at vz = 0).
TRAPEZOID_TOL_M = 1e-3


def test_kerb_step_height_and_vertical_velocity_agree() -> None:
    m = crossing(clip_s=10.0)
    df = run_simulation(m, template(), backend="kinematic-v1", catalog=catalog()).trace.df
    ped = df[df.actor_id == "ped"].sort_values("tick")
    z, vz, t = ped.z.to_numpy(), ped.vz.to_numpy(), ped.t.to_numpy()
    # The walk goes down the south kerb (0.15 m), over the zebra and up the north kerb.
    assert z[0] == 0.15 and z[-1] == 0.15 and z.min() == 0.0
    err = np.diff(z) - 0.5 * (vz[1:] + vz[:-1]) * np.diff(t)
    assert np.abs(err).max() < TRAPEZOID_TOL_M
    # The descent takes the ramp's length at walking speed, not one tick.
    down = t[(vz < -1e-9)]
    assert down.max() - down.min() >= C.PED_STEP_RAMP_M / 1.5 - 0.05
    # Vehicles are unchanged: the raster's height, no vertical velocity.
    scene = build_scene(m, template(), backend="kinematic-v1", catalog=catalog())
    cars = df[df.actor_id.isin(["ego", "van"])]
    assert (cars.vz == 0.0).all()
    assert np.array_equal(cars.z.to_numpy(), scene.ground.at(cars[["x", "y"]].to_numpy()))
