"""Background traffic downstream of the simulator (SPEC §20: "observed by every sensor"), and its assets chosen by
the sample's split (SPEC §13: a held-out family never leaks into another split)."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image

from simready.catalog.certified import certified_ids
from simready.artifacts.layout import SampleDir
from simready.measurement.inputs import observe_sample
from simready.measurement.options import ObserveOptions
from simready.artifacts.records import Legend, Parity
from simready.scenario.generator import generate
from simready.scenario.manifest import canonicalize, manifest_bytes
from simready.scenario.program_base import family_of
from simready.scenario.splits import SHARED, load_splits
from simready.scenario.traffic import BACKGROUND_TAG, TrafficSpec
from simready.sensors_hw.camera import decode_id_rgb
from simready.sensors_hw.lidar import read_ply
from simready.sensors_hw.trace_input import read_trace_input
from simready.sim.storage.trace import read_trace
from simready.sim.batch import simulate_sample
from simready.truth.reader import TruthReader
from tests.fixtures.samples import SMALL, TLA
from tests.fixtures.sim import catalog, template

TRAFFIC = TrafficSpec(vehicles_per_lane_km=20.0, pedestrians_per_sidewalk_100m=2.0, cyclists_per_km=10.0)


def background(m) -> list:  # type: ignore[no-untyped-def]
    return [a for a in m.actors if BACKGROUND_TAG in a.tags]


def samples(n: int, splits=None) -> list:  # type: ignore[no-untyped-def]
    return list(generate(TLA, "lead_vehicle_brakes", n, catalog=catalog(), template=template(TLA), splits=splits,
                         traffic=TRAFFIC).manifests)


# --- assets by split ---------------------------------------------------------------------------


def test_background_assets_are_certified_catalog_assets_of_the_splits_families():
    cat, config = catalog(), load_splits()
    ms = samples(4)
    ego_family = family_of(template(TLA).ego.asset)
    seen: Counter[str] = Counter()
    for m in ms:
        bg = background(m)
        assert bg and {a.kind for a in bg} == {"vehicle", "pedestrian", "cyclist"}
        ids = {a.asset_id for a in bg}
        assert ids <= set(cat.entries) and certified_ids(cat, ids) == ids
        for a in bg:
            family = family_of(a.asset_id)
            assert config.families[family] in (SHARED, m.split), (m.sample_id, a.id, a.asset_id, m.split)
            e = cat.entry(a.asset_id)
            assert (a.dims.l, a.dims.w, a.dims.h) == pytest.approx(
                (e.dimensions_m.length, e.dimensions_m.width, e.dimensions_m.height))
            if a.kind == "vehicle":
                assert family != ego_family  # the ego's family stays the ego's
        vehicles = Counter(family_of(a.asset_id) for a in bg if a.kind == "vehicle")
        assert len(vehicles) >= 2, vehicles  # a mix of families in every sample, not one model repeated
        assert len({a.asset_id for a in bg if a.kind == "vehicle"}) >= 3
        seen.update(family_of(a.asset_id) for a in bg)
    assert {"sedan", "delivery_van", "pedestrian_adult", "cyclist"} <= set(seen)
    # pedestrian_child is held out for test (data/splits.yaml): never in a sample of another split.
    assert all(m.split != "test" for m in ms) and "pedestrian_child" not in seen


def test_a_held_out_family_stays_in_its_split():
    base = load_splits()
    held = dataclasses.replace(base, families={**base.families, "delivery_van": "val", "pedestrian_child": "val"})
    pinned = dataclasses.replace(held, templates={TLA: "val"})
    out = samples(3, held)
    assert all(m.split == "train" for m in out)
    for m in out:
        families = {family_of(a.asset_id) for a in background(m)}
        assert "delivery_van" not in families and "pedestrian_child" not in families
        assert "sedan" in families
    inside = samples(3, pinned)
    assert all(m.split == "val" for m in inside)
    families = Counter(family_of(a.asset_id) for m in inside for a in background(m))
    assert families["delivery_van"] > 0 and families["sedan"] > 0 and families["pedestrian_child"] > 0


# --- observed by every sensor --------------------------------------------------------------------


@pytest.fixture(scope="module")
def observed(tmp_path_factory) -> tuple[object, SampleDir]:
    """A traffic sample on the arterial, 3 s simulated, the first 0.3 s observed at low resolution."""
    tpl, cat = template(TLA), catalog()
    (m,) = samples(1)
    m = m.model_copy(update={"clip_s": 3.0})
    d = SampleDir(tmp_path_factory.mktemp("traffic-obs") / m.sample_id)
    d.root.mkdir(parents=True)
    d.manifest.write_bytes(manifest_bytes(canonicalize(m)))
    simulate_sample(d.root, tpl, cat)
    options = ObserveOptions(passes=("rgb", "depth", "id", "lidar", "truth"), until_s=0.3, video=False)
    observe_sample(tpl, cat, m, read_trace_input(d.trace), d.observations.root, options=options, overrides=SMALL)
    return m, d


def _entity(m, actor_id: str) -> str:  # type: ignore[no-untyped-def]
    return f"{m.sample_id}/actor:{actor_id}"


def test_background_actors_in_trace_ids_truth_and_export(observed, tmp_path):
    m, d = observed
    bg = {a.id: a for a in background(m)}
    # The trace: a row per tick for every background actor, reserves (absent at start) included; present at the
    # clip's start: those present at warm-up's start, less any that drove off the map during the warm-up, plus
    # reserves that entered to keep the density.
    trace = pq.read_table(d.trace, columns=["t", "actor_id", "present"]).to_pandas()
    assert set(bg) <= set(trace["actor_id"])
    first = trace[trace["t"] == 0.0]
    present = set(first.loc[first["present"], "actor_id"]) & set(bg)
    assert {bg[k].kind for k in present} == {"vehicle", "pedestrian", "cyclist"} and len(present) >= 15
    obs = d.observations
    # The legend names every background actor; parity checked every present one's pose (to the float).
    legend = {e.compact_id: e.entity for e in Legend.read(obs.legend).entries}
    assert {_entity(m, k) for k in bg} <= set(legend.values())
    parity = Parity.read(obs.parity)
    assert parity.passed and {_entity(m, k) for k in present} <= set(parity.actors)
    # The sensors saw background actors: in the camera's id images and the LiDAR's instance ids.
    frames = sorted(p for p in (obs.root / "front_camera").glob("*.id.png"))
    ids = set()
    for p in frames:
        ids |= set(np.unique(decode_id_rgb(np.array(Image.open(p)))).tolist())
    seen_cam = {legend[i] for i in ids if i in legend} & {_entity(m, k) for k in bg}
    assert seen_cam, "no background actor in the front camera"
    lidar = set()
    for p in (obs.root / "roof_lidar").glob("*.ply"):
        lidar |= set(read_ply(p)["instance_id"].tolist())
    assert {legend[i] for i in lidar if i in legend} & {_entity(m, k) for k in bg}
    # Truth: a track per background actor the camera saw, and their pixels move in the flow (not static).
    truth = obs.root / "truth" / "front_camera"
    tracks = pq.read_table(truth / "tracks.parquet").to_pandas()
    assert seen_cam <= set(tracks["entity"])
    first = min(int(p.name.split(".")[0]) for p in truth.glob("*.forward.parquet"))
    reader = TruthReader(obs)  # the forward file leaves out pixel (the surface table's rows) and packs its flags
    surface = reader.table("front_camera", first, "surface").to_pandas()
    forward = reader.table("front_camera", first, "forward").to_pandas()
    assert (surface["pixel"].to_numpy() == forward["pixel"].to_numpy()).all()
    moving_bg = {_entity(m, k) for k in present if bg[k].initial.speed_mps > 1.0}
    rows = surface["entity"].isin(moving_bg).to_numpy()
    assert rows.any() and not forward["static"].to_numpy()[rows].any()
    assert np.abs(forward["disp_x_m"].to_numpy()[rows]).max() > 0.0
    # The MCAP export carries a box and a transform for every present background actor.
    from simready.cli import main
    from tests.test_export_mcap import read_back

    out = tmp_path / "sample.mcap"
    assert main(["export", "mcap", str(d.root), "--out", str(out)]) == 0
    topics, _ = read_back(out)
    boxes = {e.id for _, msg in topics["/boxes"] for e in msg.entities}
    frames_tf = {t.child_frame_id for _, msg in topics["/tf"] for t in msg.transforms}
    assert {f"box:{k}" for k in present} <= boxes and {f"actor:{k}" for k in present} <= frames_tf
    # Warm-up events (traffic changing lanes, entering) have negative times: logged at the clip's start, their own
    # time in the message (an MCAP log time cannot be negative).
    logged = [(t, json.loads(msg.message)) for t, msg in topics["/events"]]
    warm = [(t, e) for t, e in logged if e["t"] < 0.0]
    assert warm and all(t == 0 for t, _ in warm)
    assert len(logged) == len(read_trace(d.trace).events)
