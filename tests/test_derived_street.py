"""An imported template names its street instead of listing it (issue 24, large maps; docs/scale.md).

``simready template import`` writes ``street: {generator, version}``; loading the file derives the same street
instances and building regions :func:`simready.world.street.with_street` would have listed, so the template hash —
and every byte downstream — is the one the listed street gave. The YAML writer formats numeric leaves itself, byte
for byte as PyYAML would.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest
import yaml

from simready.common import paths
from simready.common.errors import TemplateError
from simready.maps.template_yaml import template_yaml
from simready.maps.xodr_import import import_opendrive
from simready.testing import opendrive_maps as maps
from simready.world import street as st
from simready.world.template import load_template, parse_template, template_hash
from simready.world.template_source import TemplateLoader, fast_yaml

#: sha256 of the street :func:`street_static` lays on the straight test map. A change here changes every derived
#: street: bump ``STREET_VERSION`` (imported templates then ask to be re-imported) and update this value.
STRAIGHT_STREET_SHA = "e3152e093a2c9568acd6255bba4bd590a89e8af5bde1c36a0fa2b9b9517dfeb4"


@pytest.fixture(scope="module")
def straight(tmp_path_factory) -> dict:
    return import_opendrive(maps.write_all(tmp_path_factory.mktemp("xodr"))["straight"], "derived").data


def test_the_derived_street_is_the_listed_one(straight, tmp_path):
    listed = parse_template(st.with_street(straight), "listed.yaml")
    path = tmp_path / "derived.yaml"
    path.write_text(template_yaml(st.derived_street(straight)), encoding="utf-8")
    text = path.read_text()
    assert "street_road_" not in text and "street: {generator: simready.world.street, version: 1}" in text
    derived = load_template(path)
    assert template_hash(derived) == template_hash(listed)
    assert [i.model_dump() for i in derived.instances] == [i.model_dump() for i in listed.instances]
    assert [r.model_dump() for r in derived.regions] == [r.model_dump() for r in listed.regions]
    assert derived._street == st.street_spec()


def paths_templates() -> list[Path]:
    return list(paths.TEMPLATES_DIR.glob("*.yaml"))


def test_the_street_generator_is_pinned(straight):
    street = st.street_static(parse_template(straight, "s.yaml"))
    digest = hashlib.sha256(json.dumps([street.instances, street.regions], sort_keys=True).encode()).hexdigest()
    assert digest == STRAIGHT_STREET_SHA, "the street generator changed: bump STREET_VERSION and update this value"


@pytest.mark.parametrize("street", [{"generator": "simready.world.street", "version": 99}, "yes", None,
                                    {"generator": "other", "version": 1}])
def test_a_street_this_code_does_not_build_is_one_line(straight, tmp_path, street):
    path = tmp_path / "bad.yaml"
    path.write_text(template_yaml({**straight, "street": street}), encoding="utf-8")
    with pytest.raises(TemplateError) as err:
        load_template(path)
    line = str(err.value)
    assert "\n" not in line and "street" in line and "re-import" in line and "bad.yaml" in line


def _pyyaml(data: dict) -> str:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=None, width=120, allow_unicode=True)


def test_the_fast_writer_writes_pyyamls_bytes():
    rng = random.Random(7)
    nums = lambda n: [rng.choice([round(rng.uniform(-1e4, 1e4), rng.randint(0, 6)), rng.randint(-9, 9),  # noqa: E731
                                  1e-05, -2.5e-07, 1e20, 0.0]) for _ in range(n)]
    data = {
        "id": "t", "z": nums(300),
        "regions": [{"id": f"r{k}", "polygon": [nums(2) for _ in range(5)], "z": nums(rng.randint(1, 90)),
                     "nested": {"deep": {"rows": [nums(rng.randint(1, 60)) for _ in range(3)], "pair": nums(2)}}}
                    for k in range(20)],
        "mixed": [[1.0, "a"], [True, 2.0]], "empty": [], "flags": [True, False], "rows_with_empty": [[1.0], []],
        "walkable": {"nodes": {"n1": [1.5, -2.0], "n2": [3.0, 4.0]}, "edges": [["n1", "n2"]]},
        "sensor_rig": {"mounts": {"m": {"translation_m": [1.0, 0.0, 2.0], "rpy_deg": [0, 0, 0]}}},
    }
    head = template_yaml(data).split("\n", 3)[3]
    assert head == _pyyaml(data)
    assert yaml.safe_load(head) == data


# --- reading: the parser's events straight to data, the full path for anything unusual ---------------------------

TRICKY = """\
a: 1
b: -0
c: 007
d: 1.5
e: -2.0e-05
f: 3e-5
g: 1_000
h: .5
i: yes
j: off
k: ~
l: null
m: '12'
n: "1.0"
o: 2001-12-14
p: 0x1F
q: 1:30
r: [1.0, -3, 4.0e+20, .inf, -.Inf, .nan]
s: |
  - [1.0, 2.0]
  text
t: plain text, with a comma
u: {x: 1, y: [a, b, {c: d}]}
v: !!str 5
7: int key
on: bool key
1.5: float key
"""


@pytest.mark.parametrize("text", [TRICKY, *[p.read_text() for p in sorted(paths_templates())]])
def test_the_fast_reader_reads_what_the_full_path_reads(text):
    fast = fast_yaml(text)
    loader = TemplateLoader(text)
    try:
        full = loader.get_single_data()
    finally:
        loader.dispose()
    if "!!str" in text:
        assert fast is None  # a tag: the full path reads it
        text = text.replace("v: !!str 5\n", "")
        fast, full = fast_yaml(text), yaml.load(text, Loader=TemplateLoader)
    assert fast is not None
    assert json.dumps(fast, default=str, sort_keys=False) == json.dumps(full, default=str, sort_keys=False)
    assert repr(fast) == repr(full)  # the same types (int 7 vs str '7', True vs 'on', nan) and order


@pytest.mark.parametrize("text", ["a: 1\na: 2\n", "a: &x 1\nb: *x\n", "? [1, 2]\n: 3\n", "a: [1, 2\n", "", "---\na: 1\n---\nb: 2\n",
                                  "a: 1\n1: 2\n'1': 3\n", "a: 1\n1: 2\n1.0: 3\n", "a: {x: 1}\n? {b: 1}\n: 2\n"])
def test_anything_unusual_takes_the_full_path(text):
    assert fast_yaml(text) is None
