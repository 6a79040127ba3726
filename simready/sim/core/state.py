"""The authoritative world state of a rollout at one tick (SPEC §0.1, §9): immutable, sorted by actor id.

A :class:`SimState` is everything needed to continue a rollout: body poses
and twists (:class:`Bodies`, the one authority every label derives from),
each actor's place on its reference path (:class:`PathCoords`), controller
and integrator memory (:class:`ControlState`), trigger and ownership state
(:class:`InteractionState`), world state that verbs set (signals are a pure
function of the tick; lights, doors and the environment are not), the RNG
streams' states, and the termination reason if the rollout stopped. Every
array is read-only; a step builds a new state instead of editing one.

Frames and units: world frame (x east, y north, z up), metres, seconds,
radians; quaternions ``[x, y, z, w]``. Row i of every (N, …) array is actor
``scene.actors.ids[i]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from simready.sim.core.profiles import Profile

if TYPE_CHECKING:
    from simready.sim.core.reference_paths import PathKey

F = NDArray[np.float64]
_T = TypeVar("_T")
_A = TypeVar("_A", bound=NDArray[Any])


def with_changes(obj: _T, **changes: Any) -> _T:
    """A copy of a frozen dataclass with some fields replaced (``dataclasses.replace`` without re-running ``__init__``).

    The state types have no ``__post_init__`` and no derived fields, so a
    field-level copy is the same object ``replace`` would build, an order of
    magnitude cheaper on the per-tick path.
    """
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    new.__dict__.update(changes)
    return new


def ro(a: _A) -> _A:
    """Mark a freshly computed array read-only (no copy; ``setflags``: no flags object built)."""
    a.setflags(write=False)
    return a


def frozen(a: ArrayLike, dtype: DTypeLike = np.float64) -> NDArray[Any]:
    """``a`` as a read-only array: a fresh array the caller owns is frozen in place, anything else is copied first."""
    if isinstance(a, np.ndarray) and a.dtype == dtype:
        flags = a.flags  # (one flags object for both tests)
        if not flags.writeable:
            return a
        if flags.owndata:
            a.setflags(write=False)
            return a
    out = np.array(a, dtype=dtype)
    out.setflags(write=False)
    return out


_SET: dict[int, tuple[tuple[object, ...], list[int]]] = {}


def set_indices(goals: tuple[object, ...]) -> list[int]:
    """Indices of the entries of ``goals`` that are not None (ascending), kept per tuple.

    Why: the goal tuples of :class:`ControlState` live for many ticks and
    hold a goal for one or two actors out of ten; the per-tick loops visit
    those only. Read-only: the list is shared.
    """
    hit = _SET.get(id(goals))
    if hit is None or hit[0] is not goals:
        if len(_SET) > 64:
            _SET.clear()
        hit = _SET[id(goals)] = (goals, [i for i, g in enumerate(goals) if g is not None])
    return hit[1]


@dataclass(frozen=True, eq=False)
class Bodies:
    """Body state of every actor (the SPEC §7 pose and twist columns).

    Attributes:
        pos: (N, 3) body origin — the footprint centre on the ground — in world metres.
        quat: (N, 4) world-from-body rotation ``[x, y, z, w]``.
        vel: (N, 3) world velocity of the body origin, m/s.
        omega: (N, 3) world angular velocity, rad/s.
        present: (N,) the body exists (spawned and not despawned).
    """

    pos: F
    quat: F
    vel: F
    omega: F
    present: NDArray[np.bool_]


@dataclass(frozen=True, eq=False)
class PathCoords:
    """Each actor's place on its reference path (what controllers and lane metrics use).

    Attributes:
        path_keys: the path each actor follows (see :class:`simready.sim.core.reference_paths.ReferencePath`).
        u: (N,) arc length along the path, m. For the dynamic ego it is the
            projection of the body onto the path, never integrated separately.
        d: (N,) lateral offset, m, + left of travel.
        d_rate: (N,) lateral offset rate, m/s.
        v: (N,) speed along the path, m/s (≥ 0).
        a: (N,) acceleration applied in the last step, m/s².
        yaw: (N,) body heading, rad.
    """

    path_keys: tuple[PathKey, ...]
    u: F
    d: F
    d_rate: F
    v: F
    a: F
    yaw: F


@dataclass(frozen=True)
class SpeedGoal:
    """A longitudinal goal that owns the actor's speed.

    ``kind``: ``profile`` (track ``profile``), ``match`` (``profile`` blends
    from the speed at firing to actor ``target``'s speed), ``brake`` (a
    branch's commanded deceleration), ``stop`` (post-crash full braking to a
    standstill, :mod:`simready.sim.behavior.impact`), ``coast`` (no throttle, no brake),
    ``maintain`` (hold ``profile.q1``). For ``match`` the profile is a
    blending weight from 0 to 1 and ``v0`` the speed at firing. ``owner``:
    the interaction (or ``branch:<action>``) that set it.
    """

    kind: str
    owner: str
    profile: Profile | None = None
    target: int | None = None
    v0: float = 0.0


@dataclass(frozen=True)
class GapGoal:
    """Hold a bumper-to-bumper gap behind actor ``target``: ``gap_ref`` blends from the gap at firing to the goal."""

    owner: str
    target: int
    unit: str
    value: float
    profile: Profile


@dataclass(frozen=True)
class LateralGoal:
    """A lateral-offset transition: ``change_lane`` (to 0 on the new lane), ``offset`` (held) or ``return`` (to 0)."""

    kind: str
    owner: str | None
    profile: Profile


@dataclass(frozen=True)
class PedMemory:
    """Pedestrian navigation memory (the kerb decision and its reaction delay).

    ``mode``: ``walk`` → ``wait`` (stopped at the kerb for a hazard) →
    ``walk`` again, or ``committed`` once past the kerb. ``hazard_since`` /
    ``clear_since``: tick a hazard was first seen / last seen gone, None if
    not. ``kerb_u``: arc length of the kerb on the walk path (inf: none).
    ``stop_draw``: the uniform draw that decides, against ``stop_tendency``,
    whether this pedestrian stops for a hazard. ``reaction_delay_s``: the
    delay between a stimulus and the response (redrawn in
    independent-disturbance repeats). ``seen``: whether the last perception
    update saw a hazard. ``turns``: how many times a background pedestrian
    has turned onto a new route at its route's end (:mod:`simready.sim.behavior.walkers`).
    """

    mode: str
    hazard_since: int | None
    clear_since: int | None
    kerb_u: float
    stop_draw: float
    reaction_delay_s: float
    seen: bool = False
    turns: int = 0


@dataclass(frozen=True)
class ControlState:
    """Controller and integrator memory; tuples are indexed like the actor table.

    ``longitudinal`` / ``lateral``: the goal owning each axis (None: the
    actor's own behaviour). ``actuation``: the ego's delayed desired
    accelerations, oldest first (NaN means coast). ``steer_rad``: the ego's
    steering angle (dynamic backend). ``standstill``: ticks each actor has
    been at rest. ``peds``: pedestrian memories (None for others).
    ``leaders`` / ``percepts``: what the last perception update (every
    :data:`~simready.sim.core.constants.PERCEPTION_PERIOD_S`) found — each actor's
    leader on its lane chain (−1: none) and the (vehicle, pedestrian) pairs
    where a vehicle sees a pedestrian in or entering its corridor, and the
    yielding vehicles' junction waiting points ``(actor, u)``; gaps to them
    are recomputed every tick. ``struck``: pedestrians and cyclists a vehicle
    struck, ``(actor, carrier or −1, x, y, z, yaw)`` with the pose in the
    carrier's body frame (m, rad), sorted (:mod:`simready.sim.behavior.impact`).
    """

    longitudinal: tuple[SpeedGoal | GapGoal | None, ...]
    lateral: tuple[LateralGoal | None, ...]
    actuation: tuple[float, ...]
    steer_rad: float
    standstill: tuple[int, ...]
    peds: tuple[PedMemory | None, ...]
    leaders: tuple[int, ...] = ()
    percepts: tuple[tuple[int, int], ...] = ()
    yields: tuple[tuple[int, float], ...] = ()
    struck: tuple[tuple[int, int, float, float, float, float], ...] = ()


@dataclass(frozen=True)
class InteractionState:
    """Trigger and axis-ownership state.

    ``status``: interaction id → ``(status, tick)`` with status ``pending``,
    ``fired``, ``skipped``, ``released`` or ``rejected`` and the tick it got
    there (−1 while pending). ``owners``: ``"<actor>|<axis>"`` (``"world|<axis>"``
    for env keys) → owning interaction id (or ``branch:<action>``). ``fired``:
    interaction id → the tick it fired (what ``after`` triggers count from).
    """

    status: dict[str, tuple[str, int]]
    owners: dict[str, str]
    fired: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class WorldState:
    """What verbs set and physics reports besides bodies.

    ``discrete``: ``"<actor>.<key>"`` or ``"<env key>"`` → value (lights,
    doors, env.*). ``friction``: current tyre-road coefficient μ.
    ``contacts``: actor-index pairs (i < j, or (i, −1) for a static
    collider) touching after the last step. ``woken``: parked vehicles that
    have become dynamic bodies (dynamic-v1, once something came near).
    ``spawned``: background reserves the simulator has spawned to keep the
    density (:mod:`simready.sim.behavior.respawn`); ``recycled``: how many background
    vehicles it has re-entered since the reserves ran out (the next one takes
    the entry of the reserve after this count, cyclically).
    """

    discrete: dict[str, Any]
    friction: float
    contacts: frozenset[tuple[int, int]] = frozenset()
    woken: frozenset[int] = frozenset()
    spawned: frozenset[int] = frozenset()
    recycled: int = 0


@dataclass(frozen=True, eq=False)
class SimState:
    """One tick of a rollout. ``tick`` counts from the start of the warm-up (tick 0 = t −warmup_s)."""

    tick: int
    bodies: Bodies
    coords: PathCoords
    control: ControlState
    interactions: InteractionState
    world: WorldState
    rng: dict[str, Any]
    termination: tuple[int, str] | None = None
    extras: dict[str, F] = field(default_factory=dict)

    def evolve(self, **changes: Any) -> SimState:
        return with_changes(self, **changes)
