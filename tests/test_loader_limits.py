"""Every loader refuses bad text with one typed line, and bounds what a file may ask for.

Regression tests for issue 14's "Why" items 6 (tracebacks on bad text), 7
(silent wrong results) and 8 (resource exhaustion), run against each loader:
world templates, suites, catalog contracts, ``entry.json``,
``catalog_index.json``, manifests and the ontology.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from simready.common import paths
from simready.common.errors import SimreadyError
from simready.common.loading import MAX_DEPTH, MAX_FILE_BYTES, read_text
from simready.scenario.suite import MAX_BATCHES, load_suite
from simready.sensors_hw.models import RigError, apply_overrides
from simready.sensors_hw.scene_build import rig_from_sensor_rig
from simready.testing.street import street_rig_data
from simready.world.template import load_template
from simready.world.template_model.base import MAX_IMAGE_PX, MAX_LANE_WIDTH_M, MAX_REPEAT_COUNT
from tests.fixtures.loaders import LOADERS, SUITE, TEMPLATE, Loader

IDS = [loader.name for loader in LOADERS]


def _refused(loader: Loader, folder: Path, content: bytes | None) -> SimreadyError:
    if content is not None:
        (folder / loader.file_name).write_bytes(content)
    with pytest.raises(SimreadyError) as info:
        loader.load(folder)
    assert "\n" not in str(info.value)
    return info.value


@pytest.mark.parametrize("loader", LOADERS, ids=IDS)
def test_good_file_loads(loader: Loader, tmp_path: Path, generated_catalog: Path) -> None:  # noqa: F811
    (tmp_path / loader.file_name).write_bytes(loader.good(generated_catalog))
    assert loader.load(tmp_path) is not None


@pytest.mark.parametrize("loader", LOADERS, ids=IDS)
def test_invalid_utf8(loader: Loader, tmp_path: Path, generated_catalog: Path) -> None:  # noqa: F811
    good = loader.good(generated_catalog)
    error = _refused(loader, tmp_path, good[:40] + b"\xff\xfe" + good[40:])
    assert "not UTF-8 text: invalid byte 0xff at offset 40" in error.reason


@pytest.mark.parametrize("loader", LOADERS, ids=IDS)
def test_truncated(loader: Loader, tmp_path: Path, generated_catalog: Path) -> None:  # noqa: F811
    good = loader.good(generated_catalog)
    for cut in (len(good) // 2, len(good) - 5, 1):
        _refused(loader, tmp_path, good[:cut])


@pytest.mark.parametrize("loader", [x for x in LOADERS if x.yaml], ids=[x.name for x in LOADERS if x.yaml])
def test_yaml_cut_mid_line(loader: Loader, tmp_path: Path, generated_catalog: Path) -> None:  # noqa: F811
    """Issue 14: a truncated YAML parsed, and defaults filled in what was cut."""
    good = loader.good(generated_catalog)
    assert "truncated?" in _refused(loader, tmp_path, good.rstrip(b"\n")).reason


@pytest.mark.parametrize("loader", LOADERS, ids=IDS)
def test_directory_given_as_file(loader: Loader, tmp_path: Path) -> None:
    (tmp_path / loader.file_name).mkdir()
    assert "is a directory" in _refused(loader, tmp_path, None).reason


@pytest.mark.parametrize("loader", LOADERS, ids=IDS)
def test_deep_nesting(loader: Loader, tmp_path: Path) -> None:
    n = 50_000
    deep = b"a: " + b"[" * n + b"]" * n + b"\n" if loader.yaml else b'{"a": ' + b"[" * n + b"]" * n + b"}"
    error = _refused(loader, tmp_path, deep)
    assert "nest" in error.reason  # libyaml's own bound (1000) or ours (64)


@pytest.mark.parametrize("loader", [x for x in LOADERS if x.yaml], ids=[x.name for x in LOADERS if x.yaml])
def test_duplicate_yaml_key(loader: Loader, tmp_path: Path, generated_catalog: Path) -> None:  # noqa: F811
    good = loader.good(generated_catalog)
    first_key = next(line for line in good.decode().splitlines() if line and line[0].isalpha())
    assert "duplicate key" in _refused(loader, tmp_path, good + b"\n" + first_key.encode() + b"\n").reason


@pytest.mark.parametrize("loader", [x for x in LOADERS if not x.yaml], ids=[x.name for x in LOADERS if not x.yaml])
def test_duplicate_json_key(loader: Loader, tmp_path: Path, generated_catalog: Path) -> None:  # noqa: F811
    data = json.loads(loader.good(generated_catalog))
    key = next(iter(data))
    text = json.dumps(data)
    dup = text[:-1] + f", {json.dumps(key)}: {json.dumps(data[key])}}}"
    assert "duplicate key" in _refused(loader, tmp_path, dup.encode()).reason


@pytest.mark.parametrize("loader", [x for x in LOADERS if x.yaml], ids=[x.name for x in LOADERS if x.yaml])
def test_alias_bomb_refused_fast(loader: Loader, tmp_path: Path) -> None:
    """Issue 14: a YAML alias bomb took 75 s before its error."""
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"a{i}: &a{i} [*a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}]"
              for i in range(1, 10)]
    t0 = time.perf_counter()
    error = _refused(loader, tmp_path, "\n".join(lines).encode() + b"\n")
    assert time.perf_counter() - t0 < 2.0
    assert "aliases are not allowed" in error.reason


def test_oversized_file_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"#" * 2048)
    with pytest.raises(SimreadyError, match="larger than the limit of 1024 bytes"):
        read_text(path, max_bytes=1024)
    assert MAX_FILE_BYTES >= 16 * 1024 * 1024 and MAX_DEPTH == 64


# --- bounds and silent wrong results (issue 14, items 7 and 8) ----------------------


def _template(tmp_path: Path, edit: Callable[[dict], None]) -> Path:
    doc = yaml.safe_load(TEMPLATE.read_text())
    edit(doc)
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _sensor(doc: dict, kind: str) -> dict:
    return next(s for s in doc["sensor_rig"]["sensors"].values() if s["type"] == kind)


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d["instances"][0]["repeat"].update(count=1_000_000_000), "instances[0].repeat.count"),
        (lambda d: d["instances"][0]["repeat"].update(count=MAX_REPEAT_COUNT + 1), "instances[0].repeat.count"),
        (lambda d: d["lanes"][0].update(width_m=1e308), "lanes[0].width_m"),
        (lambda d: d["lanes"][0].update(width_m=MAX_LANE_WIDTH_M + 1), "lanes[0].width_m"),
        (lambda d: _sensor(d, "camera").update(width_px=10**12), "width_px"),
        (lambda d: _sensor(d, "camera").update(height_px=MAX_IMAGE_PX + 1), "height_px"),
        (lambda d: d["instances"][0]["pose"].update(x=1e308), "instances[0].pose.x"),
        (lambda d: d["regions"][0]["polygon"][0].__setitem__(0, 1e7), "regions[0].polygon"),
    ],
    ids=["repeat 1e9", "repeat over limit", "lane width 1e308", "lane width over limit", "camera width 1e12",
         "camera height over limit", "instance x 1e308", "coordinate 1e7"],
)
def test_template_bounds(tmp_path: Path, edit: Callable[[dict], None], field: str) -> None:
    t0 = time.perf_counter()
    with pytest.raises(SimreadyError) as info:
        load_template(_template(tmp_path, edit))
    assert field in info.value.field
    assert time.perf_counter() - t0 < 5.0


def test_too_many_instances_after_expansion(tmp_path: Path) -> None:
    def many(doc: dict) -> None:
        inst = doc["instances"][0]
        doc["instances"] = [dict(inst, name=f"r{i}", pose=dict(inst["pose"]),
                                 repeat={"count": MAX_REPEAT_COUNT, "step_m": list(inst["repeat"]["step_m"])})
                            for i in range(11)]

    with pytest.raises(SimreadyError, match="instances after expanding repeats"):
        load_template(_template(tmp_path, many))


def _suite(tmp_path: Path, edit: Callable[[dict], None]) -> Path:
    doc = yaml.safe_load(SUITE.read_text())
    edit(doc)
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d["templates"].update(no_such_template={"cut_in": 1}), "templates.no_such_template"),
        (lambda d: d["templates"].update({"../../etc": {"cut_in": 1}}), "templates"),
        (lambda d: d.update(batches=MAX_BATCHES + 1), "batches"),
        (lambda d: d["templates"]["two_lane_arterial"].update(cut_in=10**9), "templates.two_lane_arterial.cut_in"),
        (lambda d: d.update(suite_id="../x"), "suite_id"),
    ],
    ids=["unknown template", "template path", "batches over limit", "samples over limit", "suite id"],
)
def test_suite_refusals(tmp_path: Path, edit: Callable[[dict], None], field: str) -> None:
    with pytest.raises(SimreadyError) as info:
        load_suite(_suite(tmp_path, edit))
    assert info.value.field.startswith(field)


def test_suite_unknown_template_against_given_dir(tmp_path: Path) -> None:
    """Issue 14: a suite naming a missing template ran "successfully" with 0 samples."""
    templates = tmp_path / "templates"
    templates.mkdir()
    shutil.copy(paths.TEMPLATES_DIR / "two_lane_arterial.yaml", templates)
    with pytest.raises(SimreadyError, match="unknown template"):
        load_suite(SUITE, templates)


@pytest.mark.parametrize(
    "override",
    ["camera.width_px=1000000000000", "camera.height_px=16385", "lidar.azimuth_steps=1000000", "lidar.channels=2000000"],
)
def test_rig_overrides_bounded(override: str) -> None:
    """Issue 14: camera ``width_px`` 1e12 validated; ``--set`` reaches the same sensor models."""
    rig = rig_from_sensor_rig(street_rig_data(), source="street")
    with pytest.raises(RigError) as info:
        apply_overrides(rig, [override])
    assert "\n" not in str(info.value)


def test_a_text_read_again_gives_equal_data_that_no_caller_shares_and_a_refused_text_is_refused_again() -> None:
    """parse_yaml remembers what a small text parsed to (simready.common.loading._parsed): the second read gives
    equal data, a copy (a caller that changes its data changes nobody else's), and a bad text is not remembered."""
    from simready.common.loading import parse_yaml

    text = "id: asset:memo/probe\nsize: [1.0, 2.0]\nparams: {a: 1}\n"
    first = parse_yaml(text, "a.yaml")
    first["size"].append(3.0)
    first["params"]["a"] = 2
    again = parse_yaml(text, "b.yaml")
    assert again == {"id": "asset:memo/probe", "size": [1.0, 2.0], "params": {"a": 1}}
    assert again["size"] is not parse_yaml(text, "c.yaml")["size"]
    for source in ("bad.yaml", "worse.yaml"):
        with pytest.raises(SimreadyError, match=rf"{source}.*duplicate key 'a'"):
            parse_yaml("a: 1\na: 2\n", source)
