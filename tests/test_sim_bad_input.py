"""Bad input fails before any stepping with one line naming the field; a diverging rollout is a rejected trace, never a crash."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from simready.common.errors import ManifestError
from simready.sim import engine as engine_mod
from simready.sim.backends.kinematic import KinematicBackend
from simready.sim.evaluation.evaluate import evaluate_trace
from simready.sim.run import run_simulation
from simready.sim.core.scene import build_scene
from simready.sim.core.state import Bodies
from tests.fixtures.sim import catalog, crossing, edit, template

WHEN = {"kind": "when", "by_latest_s": 2.0, "if_never": "skip"}


def _ped_go(condition: dict[str, Any]) -> Any:
    def fn(d: dict[str, Any]) -> None:
        d["interactions"][0]["trigger"] = {**WHEN, "condition": condition}
    return fn


CASES = [
    ("unknown lane", lambda d: d["actors"][0]["initial"]["lane_ref"].update(lane="lane_nope"),
     "actors[0].initial.lane_ref.lane", "unknown lane 'lane_nope'"),
    ("route not connected", lambda d: d["actors"][0]["behavior"].update(route=["lane_eb", "lane_wb"]),
     "actors[0].behavior.route[1]", "does not follow"),
    ("unknown walk node", lambda d: d["actors"][2]["walk"].update(route=["ss_60", "nowhere"]),
     "actors[2].walk.route[1]", "unknown walkable node"),
    ("unknown asset", lambda d: (d["actors"][1].update(asset_id="asset:delivery_van/gold"),
                                 d["asset_versions"].update({"asset:delivery_van/gold": d["asset_versions"]["asset:delivery_van/white"]})),
     "actors[1].asset_id", "not in the catalog"),
    ("unknown conflict point", lambda d: d["interactions"][0].update(trigger={
        "kind": "arrival", "of": "ped", "conflict_point": "nowhere", "sync_with": "ego", "ttc_s": 1.0}),
     "interactions[0].trigger.conflict_point", "unknown conflict point"),
    ("along-lane distance of a pedestrian", _ped_go({"kind": "distance", "a": "ego", "b": "ped", "metric": "along_lane", "op": "lt", "value_m": 5.0}),
     "interactions[0].trigger.condition.b", "can never be evaluated"),
    ("headway of a pedestrian", _ped_go({"kind": "headway", "a": "ped", "b": "ego", "op": "lt", "value_s": 1.0}),
     "interactions[0].trigger.condition.a", "can never be evaluated"),
    ("lane window on a missing lane", _ped_go({"kind": "reaches", "actor": "ego", "region": {"shape": "lane_window", "lane": "ghost", "s_from": 1.0, "s_to": 2.0}}),
     "interactions[0].trigger.condition.region.lane", "unknown lane 'ghost'"),
    ("parked actor told to move", lambda d: d["interactions"].append({"id": "zz", "actor_id": "van", "trigger": {"kind": "at", "t_s": 1.0},
                                                                     "speed": {"mode": "absolute", "value": 3.0}, "dynamics": {"shape": "step", "constraint": "time", "value": 0.0}}),
     "interactions[2].speed", "parked"),
    ("template hash", lambda d: d.update(template_hash="sha256:" + "0" * 64), "template_hash", "does not match"),
]


@pytest.mark.parametrize(("name", "change", "field", "reason"), CASES, ids=[c[0] for c in CASES])
def test_invalid_input_is_one_line_before_stepping(name: str, change: Any, field: str, reason: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    m = edit(crossing(clip_s=2.0), change)
    stepped = []
    monkeypatch.setattr(engine_mod.Engine, "step", lambda self: stepped.append(1))
    with pytest.raises(ManifestError) as info:
        run_simulation(m, template(), backend="kinematic-v1", catalog=catalog())
    err = info.value
    assert err.field == field and reason in err.reason
    assert "\n" not in err.one_line()
    assert not stepped


def test_non_finite_number_is_refused() -> None:
    m = crossing(clip_s=2.0)
    bad_pose = m.actors[0].initial.pose.model_construct(x=math.nan, y=-1.75, yaw=0.0)
    bad_initial = m.actors[0].initial.model_copy(update={"pose": bad_pose})
    bad = m.model_copy(update={"actors": [m.actors[0].model_copy(update={"initial": bad_initial}), *m.actors[1:]]})
    with pytest.raises(ManifestError, match="non-finite"):
        build_scene(bad, template(), backend="kinematic-v1", catalog=catalog())


def test_unknown_backend_is_refused() -> None:
    with pytest.raises(ManifestError, match="unknown backend"):
        build_scene(crossing(clip_s=2.0), template(), backend="warp-drive", catalog=catalog())


def test_diverging_rollout_stops_with_a_reason_and_is_rejected(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    real = KinematicBackend.advance

    def exploding(self, state, route, plan):  # type: ignore[no-untyped-def]
        out = real(self, state, route, plan)
        if state.tick >= 300:
            pos = np.array(out.bodies.pos)
            pos[0, 0] = np.nan
            out = type(out)(Bodies(pos, out.bodies.quat, out.bodies.vel, out.bodies.omega, out.bodies.present),
                            out.coords, out.contacts, out.extras)
        return out

    monkeypatch.setattr(KinematicBackend, "advance", exploding)
    result = run_simulation(crossing(clip_s=4.0), template(), backend="kinematic-v1", catalog=catalog())
    term = result.trace.header["termination"]
    assert term == {"tick": 301, "t": 1.02, "reason": "non-finite pos of ego"}
    assert result.issues == ["rollout stopped at t = 1.02 s: non-finite pos of ego"]
    assert result.trace.column("tick").max() == 300  # the bad state is never recorded
    assert np.isfinite(result.trace.column("x")).all()
    verdict = evaluate_trace(result.trace)
    assert verdict.verdict == "reject" and verdict.reasons()[0].startswith("completed: rollout stopped at tick 301")
    assert result.trace.events[-1]["type"] == "termination"


def test_explosion_is_a_reason_too(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    real = KinematicBackend.advance

    def flung(self, state, route, plan):  # type: ignore[no-untyped-def]
        out = real(self, state, route, plan)
        vel = np.array(out.bodies.vel)
        if state.tick >= 260:
            vel[1, 0] = 400.0
        return type(out)(Bodies(out.bodies.pos, out.bodies.quat, vel, out.bodies.omega, out.bodies.present),
                         out.coords, out.contacts, out.extras)

    monkeypatch.setattr(KinematicBackend, "advance", flung)
    result = run_simulation(crossing(clip_s=2.0), template(), backend="kinematic-v1", catalog=catalog())
    assert "explosion: ped" in result.trace.header["termination"]["reason"]
    assert evaluate_trace(result.trace).verdict == "reject"
