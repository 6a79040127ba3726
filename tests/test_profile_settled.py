"""Profile.at keeps a profile's value once it has settled (issue 29): the same bits as evaluating every tick."""

from __future__ import annotations

import math
import struct

import pytest

from simready.sim.core.profiles import Profile


def _bits(values: tuple[float, float, float]) -> tuple[bytes, ...]:
    return tuple(struct.pack("<d", v) for v in values)


@pytest.mark.parametrize("profile", [
    Profile("linear", 6.5, 3.25, 40, 2.0),
    Profile("sinusoidal", 0.0, -0.875, 10, 1.5),
    Profile("cubic", -0.3, 0.4, 0, 0.7, rate0_per_s=0.8, carry_s=1.9),
    Profile("linear", 1.0, 0.0, 5, 1.0, blend_s=0.25),
    Profile("linear", 1.0, 2.0, 20, 0.0, rate0_per_s=-0.5, carry_s=0.6),
    Profile("linear", 1.0, 2.0, 20, 0.0),
    Profile("step", 1.0, 2.0, 20, 0.0),
])
@pytest.mark.parametrize("dt", [0.02, 0.05])
def test_settled_value_is_the_evaluated_one(profile: Profile, dt: float) -> None:
    # Forwards, then backwards over the same ticks (a restored checkpoint asks for earlier ticks), then forwards again.
    ticks = list(range(0, 400)) + list(range(399, -1, -7)) + list(range(0, 400, 3))
    for tick in ticks:
        assert _bits(profile.at(tick, dt)) == _bits(profile._at(tick, dt)), (profile, dt, tick)


def test_held_offsets_give_the_evaluated_references() -> None:
    """lateral_refs' held-offset shortcut (settled ``offset`` goals, offsets already there) returns the bits of
    evaluating every goal, and evaluates again when an offset is not the settled one."""
    import numpy as np

    from simready.sim.controllers.lateral import lateral_refs
    from simready.sim.core.state import LateralGoal

    dt = 0.02
    goals = (LateralGoal("offset", "a", Profile("cubic", 0.0, -0.875, 10, 0.5)), None,
             LateralGoal("offset", "b", Profile("linear", 0.3, -0.0, 5, 0.2)))

    def evaluated(d, tick):  # type: ignore[no-untyped-def]
        ref, rate, acc = np.array(d), np.zeros(3), np.zeros(3)
        for i, g in enumerate(goals):
            if g is not None:
                ref[i], rate[i], acc[i] = g.profile._at(tick + 1, dt)
        return ref, rate, acc

    d = np.array([0.0, 1.0, 0.3])
    d.flags.writeable = False
    for tick in range(0, 120):
        if tick == 80:  # something else moved actor 0 (the shortcut must not apply)
            d = np.array(d)
            d[0] = 0.25
            d.flags.writeable = False
        got = lateral_refs(goals, d, tick, dt)
        want = evaluated(d, tick)
        for x, y in zip(got[:3], want):
            assert np.asarray(x).tobytes() == y.tobytes(), tick
        assert got[3] == []
        d = np.array(got[0])
        d.flags.writeable = False
