"""The ego's actuation (SPEC §8): desired acceleration → transport delay → throttle / brake.

The planner's desired net acceleration enters a FIFO of
``D = round(EGO_ACTUATION_DELAY_S / dt)`` ticks and leaves it D ticks later;
NaN in the FIFO means *coast* (no throttle, no brake). At the output the
command is mapped to throttle and brake fractions against the forces the
drivetrain must beat — rolling resistance ``c_rr·m·g`` and drag
``½·ρ·C_dA·v²`` — so that the *net* acceleration equals the delayed
command whenever neither saturates; coasting decelerates by exactly that
resistance. Braking saturates at μ·g (the tyre limit on this road).

Worked consequence (tested): with the ego cruising at v0 and a constant
brake command b issued at t0, the ego travels ``v0·τ + v0²/(2b)`` before
standstill, τ the actuation delay.
"""

from __future__ import annotations

import math

from simready.sim.core import constants as C


def delay_ticks(dt: float) -> int:
    return max(0, round(C.EGO_ACTUATION_DELAY_S / dt))


def resistance_decel(v_mps: float, mass_kg: float) -> float:
    """Deceleration (≥ 0) from rolling resistance and drag at speed v; 0 at rest."""
    if v_mps <= C.STANDSTILL_MPS:
        return 0.0
    drag = 0.5 * C.AIR_DENSITY_KG_M3 * C.DRAG_AREA_M2 * v_mps * v_mps / mass_kg
    return C.ROLLING_RESISTANCE * C.GRAVITY_MPS2 + drag


def push(buffer: tuple[float, ...], a_des: float) -> tuple[float, tuple[float, ...]]:
    """Enter ``a_des`` into the delay line; return the command leaving it and the new line."""
    if not buffer:
        return a_des, buffer
    return buffer[0], buffer[1:] + (a_des,)


def net_command(cmd: float, v_mps: float, mass_kg: float, friction: float, decel_max: float, accel_max: float) -> tuple[float, float, float]:
    """``(net acceleration, throttle, brake)`` for a delayed command (NaN = coast)."""
    resist = resistance_decel(v_mps, mass_kg)
    brake_limit = min(decel_max, friction * C.GRAVITY_MPS2)
    if math.isnan(cmd):
        return -resist, 0.0, 0.0
    a = min(max(cmd, -brake_limit), accel_max)
    need = a + resist  # what the drivetrain must supply, per unit mass
    throttle = max(need, 0.0) / (accel_max + resist) if need > 0 else 0.0
    brake = max(-need, 0.0) / (brake_limit + resist) if need < 0 else 0.0
    if v_mps <= C.STANDSTILL_MPS and a < 0.0:
        return a, 0.0, min(brake, 1.0)
    return a, min(throttle, 1.0), min(brake, 1.0)
