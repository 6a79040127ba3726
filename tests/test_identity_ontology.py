"""Identity, compact ids, legend and the versioned ontology (SPEC §3)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simready.common.errors import OntologyError
from simready.artifacts.layout import ObservationDir
from simready.artifacts.records import Legend
from simready.world import identity as ident
from simready.world.ontology import UNKNOWN_CLASS_ID, load_ontology, parse_ontology


def test_ontology_loads_with_version_and_ignore_class():
    onto = load_ontology()
    assert onto.ontology_version == "1.0.0"
    assert onto.class_id("pedestrian") == 20
    assert onto.class_id("no_such_class") == UNKNOWN_CLASS_ID == 65535
    assert onto.families["pedestrian_child"].attributes == {"age_group": "child"}
    assert onto.class_of_family("delivery_van") == "van"


def test_ontology_rejects_family_with_unknown_class():
    data = {
        "ontology_version": "x",
        "classes": {"car": {"id": 10, "category": "vehicle"}},
        "families": {"sedan": {"class": "truck", "parts": ["body"]}},
        "attributes": {},
        "licenses_allowed": ["CC0-1.0"],
    }
    with pytest.raises(OntologyError) as exc:
        parse_ontology(data, "onto.yaml")
    assert "onto.yaml" in str(exc.value) and "truck" in str(exc.value)


def test_ontology_rejects_duplicate_class_ids():
    data = {
        "ontology_version": "x",
        "classes": {"a": {"id": 1, "category": "s"}, "b": {"id": 1, "category": "s"}},
        "families": {},
        "attributes": {},
        "licenses_allowed": [],
    }
    with pytest.raises(OntologyError, match="unique"):
        parse_ontology(data, "o.yaml")


def test_identifier_shapes():
    assert ident.asset_id("delivery_van", "red") == "asset:delivery_van/red"
    assert ident.instance_id("residential_crosswalk_v3", "curb_3") == "residential_crosswalk_v3/instance:curb_3"
    assert ident.actor_id("rc3-000042", "ped") == "rc3-000042/actor:ped"
    assert ident.parse_asset_id("asset:sedan/grey") == ("sedan", "grey")
    with pytest.raises(ValueError):
        ident.asset_id("bad family", "x")


def test_compact_ids_are_stable_nonzero_and_order_independent():
    ids = [f"s/actor:a{i}" for i in range(500)]
    a = ident.compact_ids(ids)
    b = ident.compact_ids(list(reversed(ids)))
    assert a == b
    assert all(1 <= v <= ident.COMPACT_ID_MAX for v in a.values())
    assert len(set(a.values())) == len(ids)
    assert a["s/actor:a7"] == ident.raw_compact_id("s/actor:a7")


def test_compact_id_collision_is_detected_and_resolved_deterministically(monkeypatch):
    monkeypatch.setattr(ident, "raw_compact_id", lambda s: 5)
    with pytest.raises(ident.CompactIdCollision, match="share compact id 5"):
        ident.compact_ids(["x", "y"], strict=True)
    resolved = ident.compact_ids(["y", "x"])
    assert resolved == {"x": 5, "y": 6}


@settings(max_examples=100, deadline=None)
@given(st.sets(st.text(min_size=1, max_size=12), min_size=1, max_size=40))
def test_compact_ids_unique_for_any_set(names):
    ids = ident.compact_ids(names)
    assert len(set(ids.values())) == len(names)
    assert ident.NOTHING_HIT not in ids.values()


def test_legend_writer(tmp_path):
    onto = load_ontology()
    entities = {
        "s1/actor:ped": ("pedestrian", onto.class_id("pedestrian"), "pedestrian_adult"),
        "rc/instance:curb_0": ("curb", onto.class_id("curb"), "curb"),
    }
    legend = ident.build_legend(entities)
    path = ident.write_legend(ObservationDir(tmp_path).legend, legend, onto.ontology_version)
    data = Legend.read(path)
    assert data.nothing_hit == 0 and data.ontology_version == onto.ontology_version
    assert [e.compact_id for e in data.entries] == sorted(e.compact_id for e in data.entries)
    by_entity = {e.entity: e for e in data.entries}
    assert by_entity["s1/actor:ped"].class_id == 20 and by_entity["s1/actor:ped"].semantic_class == "pedestrian"
    assert by_entity["s1/actor:ped"].compact_id == ident.compact_ids(entities)["s1/actor:ped"]
    assert json.loads(path.read_text())["entries"][0].keys() == {"compact_id", "entity", "class", "class_id", "family"}
