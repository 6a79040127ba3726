"""Rain in the LiDAR: two-way extinction lowers returns; the dry override restores the dry bytes exactly."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from simready.testing.street import street_sample
from simready.common.errors import SimreadyError
from simready.artifacts.layout import ObservationDir
from simready.artifacts.records import FileEntry, Render, Results
from simready.sensors_hw.atmosphere import Atmosphere
from simready.sensors_hw.lidar import scan
from simready.measurement.observe import ObserveOptions, observe
from simready.measurement.plan import sensor_rng
from simready.sensors_hw.scene_build import ego_track

SMALL = {"width_px": 32, "height_px": 24, "line_time_s": 2e-4, "azimuth_steps": 512, "channels": 32}


@pytest.fixture(scope="module")
def street():
    built, rig, trace = street_sample(0.3, **SMALL)
    return built, rig.on_body(ego_track(built)), trace


def sweep(street, atmosphere: Atmosphere | None, tick: int = 1):
    built, rig, _ = street
    return scan(built.scene, rig, "roof_lidar", 0.1, sensor_rng(1234, tick), ignore=built.ignore,
                atmosphere=atmosphere)


def test_moderate_rain_loses_a_few_percent_at_50_m_and_more_at_120_m():
    a = Atmosphere(10.0).extinction_per_m
    loss = {r: 1.0 - math.exp(-2.0 * a * r) for r in (50.0, 120.0)}
    assert 0.02 < loss[50.0] < 0.08 and loss[120.0] > loss[50.0] * 2
    assert Atmosphere(0.0).extinction_per_m == 0.0 and Atmosphere(50.0).extinction_per_m > a


def test_rain_keeps_a_subset_of_the_dry_returns_and_loses_more_far_away(street):
    dry, wet = sweep(street, None), sweep(street, Atmosphere(50.0))
    assert 0 < len(wet) < len(dry)
    assert set(wet.beam.tolist()) <= set(dry.beam.tolist())
    # Loss grows with range: compare the share kept of near and far dry returns.
    kept = np.isin(dry.beam, wet.beam)
    near, far = dry.hits.distance_m[dry.beam] < 15.0, dry.hits.distance_m[dry.beam] >= 30.0
    assert near.any() and far.any() and kept[far].mean() < kept[near].mean()
    # Intensity of a kept return is attenuated, never raised.
    common = np.isin(dry.beam, wet.beam)
    assert np.all(wet.intensity <= dry.intensity[common] + 1e-7)
    heavier = sweep(street, Atmosphere(200.0))
    assert set(heavier.beam.tolist()) <= set(wet.beam.tolist())


def test_clear_air_is_bitwise_the_dry_sweep(street):
    dry, clear = sweep(street, None), sweep(street, Atmosphere(0.0))
    for name in ("points_sensor", "intensity", "instance_id", "t_s", "range_m", "beam"):
        assert np.array_equal(getattr(dry, name), getattr(clear, name))


@pytest.fixture(scope="module")
def observed(tmp_path_factory):
    root = tmp_path_factory.mktemp("rain")
    outs = {}
    for name, atmo, overrides in (("dry", None, {}), ("rain", Atmosphere(25.0), {}),
                                  ("off", Atmosphere(25.0), {"atmosphere.rain_rate_mmph": 0})):
        built, rig, trace = street_sample(0.3, **SMALL)
        outs[name] = root / name
        observe(built, rig, trace, outs[name], options=ObserveOptions(passes=("lidar",), video=False),
                atmosphere=atmo, overrides=overrides)
    return outs


def lidar_files(out: Path) -> dict[str, FileEntry]:
    return {e.path: e for e in Results.read(ObservationDir(out).results).files if e.pass_name == "lidar"}


def render_of(out: Path) -> Render:
    return Render.read(ObservationDir(out).render)


def test_rain_lowers_returns_per_sweep_against_the_same_trace(observed):
    dry, rain = lidar_files(observed["dry"]), lidar_files(observed["rain"])
    assert set(dry) == set(rain)
    assert sum(e.points for e in rain.values()) < sum(e.points for e in dry.values())
    render = render_of(observed["rain"])
    assert render.atmosphere["rain_rate_mmph"] == 25.0 and render.atmosphere["extinction_per_m"] > 0


def test_the_override_restores_the_dry_bytes_exactly_and_is_recorded(observed):
    dry, off = lidar_files(observed["dry"]), lidar_files(observed["off"])
    assert {p: e.sha256 for p, e in dry.items()} == {p: e.sha256 for p, e in off.items()}
    render = render_of(observed["off"])
    assert render.atmosphere["rain_rate_mmph"] == 0.0
    assert {"key": "atmosphere.rain_rate_mmph", "value": 0, "sensors": ["atmosphere"]} in [o.dump() for o in render.overrides]


@pytest.mark.parametrize("overrides", [{"atmosphere.fog": 1}, {"atmosphere.rain_rate_mmph": -1},
                                       {"atmosphere.rain_rate_mmph": "lots"}])
def test_bad_atmosphere_overrides_are_refused(street, tmp_path, overrides):
    built, rig, trace = street
    with pytest.raises(SimreadyError):
        observe(built, rig, trace, tmp_path / "o", options=ObserveOptions(passes=("lidar",), video=False),
                overrides=overrides)
    assert not (tmp_path / "o").exists()


def test_atmosphere_from_the_manifest_environment():
    assert Atmosphere.from_environment({"weather": "rain", "rain_rate_mmph": 12.5}).rain_rate_mmph == 12.5
    assert Atmosphere.from_environment({"weather": "dry"}).clear and Atmosphere.from_environment(None).clear


def test_noise_off_is_one_switch_for_every_stochastic_sensor_effect(street):
    """``--set noise=off``: no seed changes a LiDAR sweep or radar frame, rain included; rain still attenuates.

    ``lidar.range_noise_m=0`` alone left the rain's range spread and the random losses in.
    """
    from simready.sensors_hw.models import apply_overrides
    from simready.sensors_hw.radar import detect

    built, rig, _ = street
    quiet, resolved = apply_overrides(rig, ["noise=off"])
    assert {n: m.noise for n, m in quiet.sensors.items()} == dict.fromkeys(rig.sensors, False)
    assert resolved["overrides"][0]["sensors"] == sorted(rig.sensors)

    def lidar(r, atmosphere, seed, tick):
        return scan(built.scene, r, "roof_lidar", 0.1, sensor_rng(seed, tick), ignore=built.ignore, atmosphere=atmosphere)

    fields = ("points_sensor", "intensity", "instance_id", "t_s", "range_m", "beam")
    for atmo in (None, Atmosphere(50.0)):
        a, b = lidar(quiet, atmo, 1234, 1), lidar(quiet, atmo, 99, 7)
        assert all(np.array_equal(getattr(a, f), getattr(b, f)) for f in fields)
        noisy = lidar(apply_overrides(rig, {"lidar.range_noise_m": 0})[0], atmo, 1234, 1)
        if atmo is not None:  # the old partial switch: rain's range spread and random loss stay seeded
            assert not np.array_equal(noisy.range_m, lidar(apply_overrides(rig, {"lidar.range_noise_m": 0})[0],
                                                           atmo, 99, 7).range_m)
    dry, wet = lidar(quiet, None, 1, 1), lidar(quiet, Atmosphere(50.0), 1, 1)
    # Noise-free ranges are the true hit distances; rain moves no point, only scales intensity by T².
    assert np.array_equal(dry.range_m, dry.hits.distance_m[dry.beam])
    common = np.isin(dry.beam, wet.beam)
    assert np.array_equal(dry.points_sensor[common], wet.points_sensor)
    two_way = np.exp(-2.0 * Atmosphere(50.0).extinction_per_m * wet.hits.distance_m[wet.beam])
    np.testing.assert_allclose(wet.intensity, (dry.intensity[common] * two_way).astype(np.float32), rtol=1e-6)
    assert common.sum() == len(wet) > 0 and np.all(wet.intensity < dry.intensity[common])
    radar = [detect(built.scene, quiet, "front_radar", 0.1, sensor_rng(s, 2), ignore=built.ignore) for s in (5, 6)]
    assert len(radar[0]) > 0
    assert np.array_equal(radar[0].range_m, radar[1].range_m) and np.array_equal(radar[0].range_m, radar[0].true_range_m)
    assert np.array_equal(radar[0].radial_velocity_mps, radar[0].true_radial_velocity_mps)
