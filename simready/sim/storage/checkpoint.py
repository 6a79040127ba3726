"""Complete, content-addressed checkpoints (SPEC §9).

A checkpoint holds everything a fresh engine needs to continue a rollout as
if it had never stopped: body states (poses, twists, presence — the
engine's own authoritative copy; a PyBullet world is rebuilt from them),
path coordinates, controller and integrator memory (goals, the ego's
actuation delay line, steering, standstill timers, pedestrian kerb
memories), the tick index (the clock is a function of it), trigger status,
axis owners and firing ticks (the pending event queue), verb-set world
state and friction, current contacts, every RNG stream's state, the events
and recorded rows so far, and the scene's identity hashes (input, template,
physics config, backend, engine version), which a restore checks.

Serialization is one byte string: ``MAGIC``, an 8-byte length, canonical
JSON (sorted keys), then the raw little-endian array payloads the JSON
indexes. Its sha256 is the checkpoint's id, so equal states have equal ids.

Reading trusts nothing in the file: arrays are viewed only with the numeric
dtypes :func:`capture` writes (:data:`ARRAY_DTYPES`; never ``|O``, which would
make raw bytes be read as object pointers), each declared shape × itemsize must
equal its ``nbytes`` and lie inside the payload, and a file named
``<hex>.ckpt`` must hash to its name. Anything else is a one-line
:class:`CheckpointError`.

Restoring is exact for ``kinematic-v1``. ``dynamic-v1`` creates its
PyBullet bodies anew from the copy (the statics of a world kept for the
same scene are reused, :mod:`simready.sim.backends.dynamic.pool`: the same
bits as a new world); PyBullet keeps solver warm-start and contact-manifold
state a snapshot cannot carry, so a restored continuation matches the
uninterrupted one within :data:`DYNAMIC_REPLAY_TOLERANCE` (ids and event
order exact) rather than bit for bit.
"""

from __future__ import annotations

import json
import math
import re
import struct
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from simready.common.atomic import write_bytes_atomic
from simready.common.errors import SimreadyError
from simready.common.hashing import HASH_PREFIX, sha256_bytes
from simready.artifacts.layout import CHECKPOINT_SUFFIX
from simready.sim.core import constants as C
from simready.sim.core.profiles import Profile
from simready.sim.core.state import (
    Bodies,
    ControlState,
    GapGoal,
    InteractionState,
    LateralGoal,
    PathCoords,
    PedMemory,
    SimState,
    SpeedGoal,
    WorldState,
    frozen,
)

if TYPE_CHECKING:
    from simready.sim.core.scene import Scene

MAGIC = b"SRCKPT1\n"
#: The only dtypes an array of a checkpoint may declare: little-endian numbers and booleans (what capture writes).
ARRAY_DTYPES = frozenset({"<f8", "<f4", "<i8", "<i4", "<u8", "<u4", "|u1", "|i1", "|b1"})
FORMAT_VERSION = 2
#: Declared replay tolerance of a restored dynamic-v1 rollout vs the uninterrupted one. Quaternion components
#: 5e-4 (≈ 1e-3 rad, a millimetre at a metre, in line with the position bound): since every vehicle is a rigid
#: body on its ground contacts, the solver's warm start shows in the agents' roll and pitch (1.03e-4 measured on a
#: cut-in sample of the default suite), where with only the ego dynamic it stayed below 1e-4.
DYNAMIC_REPLAY_TOLERANCE = {"position_m": 1e-3, "velocity_mps": 1e-2, "quaternion": 5e-4}


class CheckpointError(SimreadyError):
    kind = "checkpoint"


def _goal_to_json(g: object) -> Any:
    if g is None:
        return None
    if isinstance(g, SpeedGoal):
        return {"type": "speed", "kind": g.kind, "owner": g.owner, "profile": g.profile.to_json() if g.profile else None,
                "target": g.target, "v0": g.v0}
    if isinstance(g, GapGoal):
        return {"type": "gap", "owner": g.owner, "target": g.target, "unit": g.unit, "value": g.value, "profile": g.profile.to_json()}
    if isinstance(g, LateralGoal):
        return {"type": "lateral", "kind": g.kind, "owner": g.owner, "profile": g.profile.to_json()}
    raise TypeError(type(g).__name__)


def _goal_from_json(d: Any) -> Any:
    if d is None:
        return None
    if d["type"] == "speed":
        prof = Profile.from_json(d["profile"]) if d["profile"] is not None else None
        return SpeedGoal(d["kind"], d["owner"], prof, d["target"], float(d["v0"]))
    if d["type"] == "gap":
        return GapGoal(d["owner"], int(d["target"]), d["unit"], float(d["value"]), Profile.from_json(d["profile"]))
    return LateralGoal(d["kind"], d["owner"], Profile.from_json(d["profile"]))


def _num(x: float) -> Any:
    return x if math.isfinite(x) else repr(x)


def _unnum(x: Any) -> float:
    return float(x)


class _Packer:
    """The array payload of a checkpoint: an index entry per array and the arrays themselves, in order.

    ``prefix`` (``state.``, ``history.``) is prepended to the names added.
    The chunks are the contiguous arrays, not copies of their bytes: the
    one ``bytes.join`` in :func:`capture` copies each once (a history is
    ~0.3 MB at t = 3 s; ``tobytes`` then joining copied it twice).
    """

    def __init__(self) -> None:
        self.index: list[dict[str, Any]] = []
        self.chunks: list[np.ndarray] = []
        self.offset = 0
        self.prefix = ""

    def add(self, name: str, arr: np.ndarray) -> None:
        a = np.ascontiguousarray(arr)
        if a.dtype.byteorder == ">":
            a = a.astype(a.dtype.newbyteorder("<"))
        n = a.nbytes
        self.index.append({"name": self.prefix + name, "dtype": a.dtype.str, "shape": list(a.shape), "offset": self.offset,
                           "nbytes": n})
        self.chunks.append(a)
        self.offset += n


def state_record(state: SimState, packer: _Packer) -> dict[str, Any]:
    """JSON part of a state; its arrays go into ``packer``."""
    b, c, ctl = state.bodies, state.coords, state.control
    for name in ("pos", "quat", "vel", "omega", "present"):
        packer.add(f"bodies.{name}", getattr(b, name))
    for name in ("u", "d", "d_rate", "v", "a", "yaw"):
        packer.add(f"coords.{name}", getattr(c, name))
    packer.add("control.actuation", np.array(ctl.actuation, dtype=np.float64))
    for name, arr in sorted(state.extras.items()):
        packer.add(f"extras.{name}", np.asarray(arr))
    world = {"discrete": dict(sorted(state.world.discrete.items())), "friction": state.world.friction,
             "contacts": sorted([list(p) for p in state.world.contacts]), "woken": sorted(state.world.woken)}
    if state.world.spawned:
        # Only when there are any: a checkpoint without background reserves keeps its bytes.
        world["spawned"] = sorted(state.world.spawned)
    if state.world.recycled:
        world["recycled"] = state.world.recycled
    return {
        "tick": state.tick,
        "termination": list(state.termination) if state.termination else None,
        "path_keys": [list(k) for k in c.path_keys],
        "control": {
            "longitudinal": [_goal_to_json(g) for g in ctl.longitudinal],
            "lateral": [_goal_to_json(g) for g in ctl.lateral],
            "steer_rad": ctl.steer_rad,
            "standstill": list(ctl.standstill),
            "peds": [None if p is None else _ped_to_json(p) for p in ctl.peds],
            "leaders": list(ctl.leaders),
            "percepts": [list(x) for x in ctl.percepts],
            "yields": [list(x) for x in ctl.yields],
            "struck": [list(x) for x in ctl.struck],
        },
        "interactions": {"status": {k: list(v) for k, v in sorted(state.interactions.status.items())},
                         "owners": dict(sorted(state.interactions.owners.items())),
                         "fired": dict(sorted(state.interactions.fired.items()))},
        "world": world,
        "rng": state.rng,
    }


def _ped_to_json(p: PedMemory) -> dict[str, Any]:
    out = {"mode": p.mode, "hazard_since": p.hazard_since, "clear_since": p.clear_since, "kerb_u": _num(p.kerb_u),
           "stop_draw": p.stop_draw, "reaction_delay_s": p.reaction_delay_s, "seen": p.seen}
    if p.turns:  # only a background pedestrian that has turned at a route's end (older checkpoints keep their bytes)
        out["turns"] = p.turns
    return out


def state_from_record(rec: dict[str, Any], arrays: dict[str, np.ndarray]) -> SimState:
    bodies = Bodies(*(frozen(arrays[f"bodies.{n}"], bool if n == "present" else np.float64)
                      for n in ("pos", "quat", "vel", "omega", "present")))
    coords = PathCoords(tuple(tuple(k) for k in rec["path_keys"]),
                        *(frozen(arrays[f"coords.{n}"]) for n in ("u", "d", "d_rate", "v", "a", "yaw")))
    c = rec["control"]
    peds = tuple(None if p is None else PedMemory(p["mode"], p["hazard_since"], p["clear_since"], _unnum(p["kerb_u"]),
                                                  float(p["stop_draw"]), float(p["reaction_delay_s"]), bool(p["seen"]),
                                                  int(p.get("turns", 0)))
                 for p in c["peds"])
    control = ControlState(tuple(_goal_from_json(g) for g in c["longitudinal"]), tuple(_goal_from_json(g) for g in c["lateral"]),
                           tuple(float(x) for x in arrays["control.actuation"]), float(c["steer_rad"]),
                           tuple(int(x) for x in c["standstill"]), peds, tuple(int(x) for x in c["leaders"]),
                           tuple((int(a), int(b)) for a, b in c["percepts"]), tuple((int(a), float(b)) for a, b in c["yields"]),
                           tuple((int(s[0]), int(s[1]), float(s[2]), float(s[3]), float(s[4]), float(s[5]))
                                 for s in c["struck"]))
    i = rec["interactions"]
    inter = InteractionState({k: (v[0], int(v[1])) for k, v in i["status"].items()}, dict(i["owners"]),
                             {k: int(v) for k, v in i["fired"].items()})
    w = rec["world"]
    world = WorldState(dict(w["discrete"]), float(w["friction"]), frozenset(tuple(p) for p in w["contacts"]),
                       frozenset(int(i) for i in w["woken"]), frozenset(int(i) for i in w.get("spawned", ())),
                       int(w.get("recycled", 0)))
    extras = {k.removeprefix("extras."): v for k, v in arrays.items() if k.startswith("extras.")}
    term = tuple(rec["termination"]) if rec["termination"] else None
    return SimState(int(rec["tick"]), bodies, coords, control, inter, world, rec["rng"], term, extras)


@dataclass(frozen=True, eq=False)
class Checkpoint:
    """A serialized engine snapshot; ``data`` is the canonical bytes, ``id`` their sha256; ``source`` names it in errors."""

    data: bytes
    source: str = field(default="<checkpoint>", compare=False)

    @cached_property
    def id(self) -> str:
        return sha256_bytes(self.data)

    @cached_property
    def _parts(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        data, start = self.data, len(MAGIC) + 8
        if not data.startswith(MAGIC) or len(data) < start:
            raise CheckpointError(self.source, "", "not a simready checkpoint")
        (n,) = struct.unpack_from("<Q", data, len(MAGIC))
        if n > len(data) - start:
            raise CheckpointError(self.source, "", f"index of {n} bytes runs past the end of the file ({len(data)} bytes)")
        try:
            meta = json.loads(data[start: start + n])
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise CheckpointError(self.source, "", "index is not valid JSON") from None
        if not isinstance(meta, dict) or not isinstance(meta.get("arrays"), list) or not isinstance(meta.get("state"), dict):
            raise CheckpointError(self.source, "", "index lacks arrays or state")
        # Read-only views into the payload, no copies; the ndarray constructor costs a third of
        # frombuffer + reshape (~0.4 µs an array, ~35 arrays a checkpoint).
        payload = start + n
        arrays = {}
        for i, e in enumerate(meta["arrays"]):
            name, dtype, shape = _array_entry(self.source, i, e, len(data) - payload)
            arrays[name] = np.ndarray(shape, dtype, data, payload + e["offset"])
        return meta, arrays

    @property
    def meta(self) -> dict[str, Any]:
        return self._parts[0]

    @property
    def tick(self) -> int:
        return int(self.meta["state"]["tick"])

    def state(self) -> SimState:
        meta, arrays = self._parts
        try:
            return state_from_record(meta["state"], {k[len("state."):]: v for k, v in arrays.items() if k.startswith("state.")})
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            # The index passed its checks but its state record is not one capture writes (a crafted file).
            raise CheckpointError(self.source, "state", f"malformed state record ({type(exc).__name__}: {exc})") from None

    def history(self) -> dict[str, np.ndarray]:
        _, arrays = self._parts
        return {k[len("history."):]: v for k, v in arrays.items() if k.startswith("history.")}

    def write(self, path: str | Path) -> Path:
        return write_bytes_atomic(path, self.data)

    @classmethod
    def read(cls, path: str | Path) -> Checkpoint:
        """The checkpoint in ``path``; a content-addressed name (``<hex>.ckpt``) must be the sha256 of the bytes."""
        path = Path(path)
        try:
            ckpt = cls(path.read_bytes(), str(path))
        except OSError as exc:
            raise CheckpointError(path, "", f"cannot read: {exc.strerror or exc}") from None
        stem = path.name.removesuffix(CHECKPOINT_SUFFIX)
        if path.name.endswith(CHECKPOINT_SUFFIX) and _HEX64.fullmatch(stem) and ckpt.id != HASH_PREFIX + stem:
            raise CheckpointError(path, "sha256", f"expected {HASH_PREFIX + stem} (the file name), got {ckpt.id}")
        return ckpt


_HEX64 = re.compile(r"[0-9a-f]{64}")
#: Each allowed dtype's item size (bytes).
_ITEMSIZE = {d: np.dtype(d).itemsize for d in ARRAY_DTYPES}


def _array_entry(source: str, i: int, e: Any, payload_nbytes: int) -> tuple[str, str, tuple[int, ...]]:
    """``(name, dtype, shape)`` of index entry ``i``, once it is known to view only numbers inside the payload."""
    where = f"arrays[{i}]"
    if not isinstance(e, dict):
        raise CheckpointError(source, where, "not an object")
    get = e.get
    name, dtype, shape, offset, nbytes = get("name"), get("dtype"), get("shape"), get("offset"), get("nbytes")
    if not isinstance(name, str):
        raise CheckpointError(source, f"{where}.name", "not a string")
    itemsize = _ITEMSIZE.get(dtype, 0) if isinstance(dtype, str) else 0
    if not itemsize or not isinstance(dtype, str):
        raise CheckpointError(source, f"{where}.dtype", f"{dtype!r} is not one of {', '.join(sorted(ARRAY_DTYPES))}")
    if type(shape) is not list or not all(type(d) is int and d >= 0 for d in shape):
        raise CheckpointError(source, f"{where}.shape", f"{shape!r} is not a list of non-negative integers")
    if type(offset) is not int or offset < 0 or type(nbytes) is not int or nbytes < 0:
        key, value = ("offset", offset) if type(offset) is not int or offset < 0 else ("nbytes", nbytes)
        raise CheckpointError(source, f"{where}.{key}", f"{value!r} is not a non-negative integer")
    declared = math.prod(shape) * itemsize
    if declared != nbytes:
        raise CheckpointError(source, f"{where}.shape", f"{shape} of {dtype} is {declared} bytes, nbytes says {nbytes}")
    if offset + nbytes > payload_nbytes:
        raise CheckpointError(source, f"{where}.offset", f"bytes {offset}..{offset + nbytes} run past the payload ({payload_nbytes} bytes)")
    return name, dtype, tuple(shape)


def capture(engine: Any) -> Checkpoint:
    """Serialize an engine (state, recorded history, events, identity)."""
    scene = engine.scene
    packer = _Packer()
    packer.prefix = "state."
    state_json = state_record(engine.state, packer)
    packer.prefix = "history."
    for name, arr in engine.recorder.arrays().items():
        packer.add(name, arr)
    meta = {
        "format": FORMAT_VERSION,
        "engine_version": C.ENGINE_VERSION,
        "backend": scene.backend,
        "input_hash": scene.input_hash,
        "template_hash": scene.template_hash,
        "config_hash": scene.config_hash,
        "sample_id": scene.manifest.sample_id,
        "ticks_simulated": engine.ticks_simulated,
        "events": engine.events,
        "state": state_json,
        "arrays": packer.index,
    }
    text = json.dumps(meta, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("utf-8")
    # An ndarray is a buffer; numpy's stubs say so only for Python 3.12 on.
    return Checkpoint(b"".join([MAGIC, struct.pack("<Q", len(text)), text, *packer.chunks]))  # type: ignore[list-item]


def check_identity(ckpt: Checkpoint, scene: Scene) -> None:
    """A checkpoint restores only into the scene (input, template, config, backend) it came from."""
    meta = ckpt.meta
    for key, want in (("input_hash", scene.input_hash), ("template_hash", scene.template_hash),
                      ("config_hash", scene.config_hash), ("backend", scene.backend)):
        if meta.get(key) != want:
            raise CheckpointError(meta.get("sample_id", "<checkpoint>"), key, f"checkpoint has {meta.get(key)}, this scene has {want}")
