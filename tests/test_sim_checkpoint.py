"""Checkpoints (SPEC §9): complete, content-addressed, and a restored engine continues like the original."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from simready.artifacts.layout import SampleDir
from simready.sim.storage.checkpoint import DYNAMIC_REPLAY_TOLERANCE, MAGIC, Checkpoint, CheckpointError
from simready.sim.engine import Engine
from simready.sim.run import finish
from simready.sim.core.scene import build_scene
from tests.fixtures.sim import catalog, crossing, template


def _scene(backend: str, **kwargs):  # type: ignore[no-untyped-def]
    return build_scene(crossing(**kwargs), template(), backend=backend, catalog=catalog())


def _split_run(backend: str, t_star_tick: int, clip_s: float):  # type: ignore[no-untyped-def]
    """(uninterrupted trace, restored-and-continued trace, checkpoint)."""
    scene = _scene(backend, clip_s=clip_s)
    original = Engine(scene)
    original.run(until_tick=t_star_tick)
    ckpt = original.checkpoint()
    data = ckpt.data
    original.run()
    a = finish(original)
    original.close()
    fresh = Engine.restore(_scene(backend, clip_s=clip_s), Checkpoint(bytes(data)))
    fresh.run()
    b = finish(fresh)
    fresh.close()
    return a, b, ckpt


def test_kinematic_restore_continues_bit_identically(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # t* = 1.6 s into the clip: the pedestrian is walking, the ego is braking for it, goals and profiles are live.
    a, b, ckpt = _split_run("kinematic-v1", 250 + 80, clip_s=6.0)
    assert a.to_bytes() == b.to_bytes()
    assert [e for e in a.events if e["type"] == "checkpoint"] == [{"tick": 330, "t": 1.6, "type": "checkpoint", "id": ckpt.id}]
    path = ckpt.write(tmp_path / "c.ckpt")
    assert Checkpoint.read(path).id == ckpt.id == "sha256:" + __import__("hashlib").sha256(path.read_bytes()).hexdigest()


def test_checkpoint_is_complete_and_content_addressed() -> None:
    scene = _scene("kinematic-v1", clip_s=4.0)
    e1, e2 = Engine(scene), Engine(_scene("kinematic-v1", clip_s=4.0))
    e1.run(until_tick=300)
    e2.run(until_tick=300)
    c1, c2 = e1.checkpoint(), e2.checkpoint()
    assert c1.id == c2.id and c1.data == c2.data
    e1.step()
    assert e1.checkpoint().id != c1.id
    meta = c1.meta
    for key in ("engine_version", "backend", "input_hash", "template_hash", "config_hash", "events", "ticks_simulated"):
        assert key in meta
    st = c1.state()
    assert st.tick == 300 and st.rng["bit_generators"]  # every used RNG stream's state
    assert {"ped_go", "van_hazard"} <= set(st.interactions.fired)
    assert st.control.longitudinal[scene.actors.index["ped"]].owner == "ped_go"
    assert len(st.control.actuation) == 10  # 0.2 s of the ego's delayed commands
    assert c1.history()["pos"].shape == (51, 3, 3)


def test_restore_refuses_another_scene() -> None:
    scene = _scene("kinematic-v1", clip_s=4.0)
    engine = Engine(scene)
    engine.run(until_tick=260)
    ckpt = engine.checkpoint()
    other = build_scene(crossing(clip_s=4.0, ego_speed=5.0), template(), backend="kinematic-v1", catalog=catalog())
    with pytest.raises(CheckpointError, match="input_hash"):
        Engine.restore(other, ckpt)
    with pytest.raises(CheckpointError, match="not a simready checkpoint"):
        Checkpoint(b"nope").state()


@pytest.mark.slow
def test_dynamic_restore_within_declared_replay_tolerance() -> None:
    a, b, _ = _split_run("dynamic-v1", 250 + 50, clip_s=3.0)
    # Ids and event order are exact...
    assert [(e["type"], e["tick"]) for e in a.events] == [(e["type"], e["tick"]) for e in b.events]
    assert a.column("actor_id").tolist() == b.column("actor_id").tolist()
    # ... poses and velocities within the declared tolerance.
    pos = np.stack([a.column(c) - b.column(c) for c in ("x", "y", "z")], 1)
    vel = np.stack([a.column(c) - b.column(c) for c in ("vx", "vy", "vz")], 1)
    quat = np.stack([a.column(c) - b.column(c) for c in ("qx", "qy", "qz", "qw")], 1)
    assert np.abs(pos).max() <= DYNAMIC_REPLAY_TOLERANCE["position_m"]
    assert np.abs(vel).max() <= DYNAMIC_REPLAY_TOLERANCE["velocity_mps"]
    assert np.abs(quat).max() <= DYNAMIC_REPLAY_TOLERANCE["quaternion"]
    # Before the checkpoint the rows are the same rows.
    early = a.column("tick") < 300
    assert np.array_equal(a.column("x")[early], b.column("x")[early])


def test_verify_continuation_helper_and_plot(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from simready.sim.run import verify_continuation
    from simready.sim.evaluation.plot import plot_rollout

    scene = _scene("kinematic-v1", clip_s=3.0)
    engine = Engine(scene)
    engine.run(until_tick=280)
    ckpt = engine.checkpoint()
    engine.run()
    trace = finish(engine)
    ok, detail = verify_continuation(ckpt, _scene("kinematic-v1", clip_s=3.0), trace)
    assert ok, detail
    subject = trace.header["metric_subject"]
    dims = {a: (float(d[0]), float(d[1])) for a, d in trace.header.get("actor_dims", {}).items()}
    out = plot_rollout(template(), trace, tmp_path / "rollout.png", roles={subject: "ego"}, dims=dims,
                       branches={"brake": trace}, title="continuation")
    png = out.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def _small_checkpoint() -> Checkpoint:
    engine = Engine(_scene("kinematic-v1", clip_s=4.0))
    engine.run(until_tick=260)
    return engine.checkpoint()


def _with_index(ckpt: Checkpoint, edit) -> bytes:  # type: ignore[no-untyped-def]
    """The checkpoint's bytes with its JSON index edited by ``edit(meta)``, payload unchanged."""
    start = len(MAGIC) + 8
    (n,) = struct.unpack_from("<Q", ckpt.data, len(MAGIC))
    meta = json.loads(ckpt.data[start: start + n])
    edit(meta)
    text = json.dumps(meta, sort_keys=True, separators=(",", ":")).encode()
    return MAGIC + struct.pack("<Q", len(text)) + text + ckpt.data[start + n:]


def _set(entry: str, value):  # type: ignore[no-untyped-def]
    return lambda meta: meta["arrays"][0].__setitem__(entry, value)


CRAFTED = [
    (_set("dtype", "|O"), "arrays[0].dtype"),
    (_set("dtype", ">f8"), "arrays[0].dtype"),
    (_set("shape", [10**6, 3]), "arrays[0].shape"),
    (_set("shape", [-1]), "arrays[0].shape"),
    (_set("offset", 10**9), "arrays[0].offset"),
    (lambda meta: meta["arrays"][0].update(shape=[10**6, 3], nbytes=24 * 10**6), "arrays[0].offset"),
]


@pytest.fixture(scope="module")
def crafted_reads(tmp_path_factory) -> dict[Path, str]:  # type: ignore[no-untyped-def]
    """Every crafted checkpoint read in one subprocess (one interpreter start, not six): a reader that trusted the
    dtype would crash the interpreter, not raise. {file: the CheckpointError's line, "" when none was raised}."""
    root = tmp_path_factory.mktemp("crafted")
    ckpt = _small_checkpoint()
    files = []
    for i, (edit, _) in enumerate(CRAFTED):
        path = root / f"crafted{i}" / "crafted.ckpt"
        path.parent.mkdir()
        path.write_bytes(_with_index(ckpt, edit))
        files.append(str(path))
    code = ("import json, sys\nfrom simready.sim.storage.checkpoint import Checkpoint, CheckpointError\n"
            "out = {}\n"
            "for path in sys.argv[1:]:\n"
            "    out[path] = ''\n"
            "    try:\n"
            "        Checkpoint.read(path).state()\n"
            "    except CheckpointError as e:\n"
            "        out[path] = e.one_line() + '\\n'\n"
            "print(json.dumps(out))\n")
    # A crash (or any exception but CheckpointError) on any file fails every case, with the reason.
    proc = subprocess.run([sys.executable, "-c", code, *files], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return {Path(k): text for k, text in json.loads(proc.stdout).items()}


@pytest.mark.parametrize("case", range(len(CRAFTED)), ids=[f for _, f in CRAFTED])
def test_crafted_index_is_a_one_line_error(crafted_reads, case) -> None:  # type: ignore[no-untyped-def]
    field = CRAFTED[case][1]
    path = next(p for p in crafted_reads if p.parent.name == f"crafted{case}")
    stdout = crafted_reads[path]
    lines = stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{path}: {field}: "), stdout


@pytest.mark.parametrize("edit", [
    lambda meta: meta["state"].pop("control"),
    lambda meta: meta["state"].__setitem__("path_keys", 7),
    lambda meta: meta.__setitem__("arrays", [a for a in meta["arrays"] if a["name"] != "state.bodies.pos"]),
])
def test_malformed_state_record_is_a_one_line_error(edit) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CheckpointError, match=r"^<checkpoint>: state: malformed state record \(") as err:
        Checkpoint(_with_index(_small_checkpoint(), edit)).state()
    assert "\n" not in err.value.one_line()


@pytest.mark.parametrize("data", [b"", MAGIC, MAGIC + struct.pack("<Q", 10**12), MAGIC + struct.pack("<Q", 3) + b"{x}"])
def test_truncated_or_garbled_checkpoint_is_a_one_line_error(data) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CheckpointError) as err:
        Checkpoint(data).state()
    assert "\n" not in err.value.one_line()


def test_changed_state_byte_is_a_hash_error_on_read(tmp_path) -> None:  # type: ignore[no-untyped-def]
    ckpt = _small_checkpoint()
    path = ckpt.write(SampleDir(tmp_path).checkpoint(ckpt.id))
    assert Checkpoint.read(path).id == ckpt.id
    data = bytearray(ckpt.data)
    data[-1] ^= 1  # the last byte of the last history array
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=f"sha256: expected {ckpt.id} .*, got sha256:") as err:
        Checkpoint.read(path)
    assert str(path) in err.value.one_line() and "\n" not in err.value.one_line()


def test_rollout_plot_draws_background_traffic_as_one_layer() -> None:  # type: ignore[no-untyped-def]
    """Was: each background vehicle had its own legend line (98 in a default-suite sample) and the picture spanned
    the whole city, the scenario a speck in it. Background traffic is one legend entry now, outside the extent."""
    from simready.sim.evaluation.plot import BACKGROUND_ROLE, rollout_figure

    scene = _scene("kinematic-v1", clip_s=3.0)
    engine = Engine(scene)
    engine.run()
    trace = finish(engine)
    subject = trace.header["metric_subject"]
    others = sorted(set(trace.df.actor_id) - {subject})
    assert others
    dims = {a: (float(d[0]), float(d[1])) for a, d in trace.header.get("actor_dims", {}).items()}
    plain = rollout_figure(template(), trace, roles={subject: "ego"}, dims=dims).axes[0]
    roles = {subject: "ego", **{a: BACKGROUND_ROLE for a in others}}
    ax = rollout_figure(template(), trace, roles=roles, dims=dims).axes[0]
    labels = ax.get_legend_handles_labels()[1]
    assert labels.count(f"background traffic ({len(others)})") == 1 and not [l for l in labels if l.startswith(others[0])]
    assert len(plain.get_legend_handles_labels()[1]) == len(others) + 1
    df = trace.df[trace.df.actor_id == subject]
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    assert x0 <= df.x.min() and df.x.max() <= x1 and y0 <= df.y.min() and df.y.max() <= y1
    assert x1 - x0 >= 80.0 and y1 - y0 >= 80.0
