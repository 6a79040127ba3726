"""Split assignment from lineage keys; the sampler refuses family pins that disagree."""

from __future__ import annotations

import dataclasses

import pytest

from simready.catalog.catalog import ensure_catalog
from simready.scenario.generator import generate
from simready.scenario.splits import (
    SplitError,
    assign_split,
    hash_split,
    leakage,
    load_splits,
    parse_splits,
    write_split_assignments,
)

CONFIG = {"ratios": {"train": 0.8, "val": 0.1, "test": 0.1}, "salt": "t:",
          "families": {"shuttle": "shared", "delivery_van": "shared", "pedestrian_adult": "shared",
                       "pedestrian_child": "test", "sedan": "shared"}}


def test_hashed_groups_follow_the_ratios_and_are_stable() -> None:
    config = parse_splits(CONFIG)
    splits = [hash_split(config, f"sample-{i}") for i in range(5000)]
    assert abs(splits.count("train") / 5000 - 0.8) < 0.03
    assert splits == [hash_split(config, f"sample-{i}") for i in range(5000)]


def test_a_pinned_family_decides_the_split_and_shared_families_do_not() -> None:
    config = parse_splits(CONFIG)
    d = assign_split(config, base_template="rc3", families=["delivery_van", "pedestrian_child"], checkpoint_group="s1")
    assert (d.split, d.decided_by, d.conflict) == ("test", "family pedestrian_child", None)
    d = assign_split(config, base_template="rc3", families=["delivery_van"], checkpoint_group="s1")
    assert d.split == hash_split(config, "s1") and d.decided_by == "checkpoint group s1"


def test_conflicting_pins_and_unlisted_families_are_refused() -> None:
    config = parse_splits({**CONFIG, "templates": {"rc3": "train"}})
    d = assign_split(config, base_template="rc3", families=["pedestrian_child"], checkpoint_group="s1")
    assert d.split is None and "disagree" in d.conflict
    d = assign_split(config, base_template="x", families=["cyclist"], checkpoint_group="s1")
    assert d.split is None and "no split assignment" in d.conflict


def test_the_sampler_rejects_a_sample_whose_lineage_pins_disagree_at_stage_one() -> None:
    """Pin the only van family to train while child pedestrians are test: child cells cannot be filled."""
    config = parse_splits({**CONFIG, "families": {**CONFIG["families"], "delivery_van": "train"}})
    result = generate("residential_crosswalk_v3", "pedestrian_emerges_behind_van", 2,
                      cell="ped_family=pedestrian_child", catalog=ensure_catalog(), splits=config,
                      max_proposals_per_cell=3)
    assert result.manifests == []
    assert {r.reason for r in result.rejections} <= {"semantics.split_conflict"} | {
        r.reason for r in result.rejections if r.stage == "sampling"}
    assert any(r.reason == "semantics.split_conflict" and r.stage == "semantics" for r in result.rejections)


def test_accepted_manifests_carry_their_split_and_lineage() -> None:
    result = generate("residential_crosswalk_v3", "pedestrian_emerges_behind_van", 3, cell="ped_family=pedestrian_child",
                      catalog=ensure_catalog())
    for m in result.manifests:
        assert m.split == "test"
        assert m.lineage.base_template == "residential_crosswalk_v3"
        assert m.lineage.checkpoint_group == m.sample_id
        assert "pedestrian_child" in m.lineage.asset_families


def test_the_shipped_config_parses_and_lists_every_actor_family() -> None:
    config = load_splits()
    for family in ("shuttle", "delivery_van", "sedan", "pedestrian_adult", "pedestrian_child", "cyclist"):
        assert family in config.families
    with pytest.raises(SplitError):
        parse_splits({**CONFIG, "ratios": {"train": 0.5, "val": 0.1, "test": 0.1}})
    with pytest.raises(SplitError):
        parse_splits({**CONFIG, "families": {"sedan": "holdout"}})
    assert dataclasses.is_dataclass(config)


def _row(sample: str, split: str, group: str, families: list[str]) -> dict:
    return {"sample": sample, "template": "t", "batch": "b", "split": split, "base_template": "t",
            "checkpoint_group": group, "families": families}


def test_the_split_table_refuses_to_move_a_written_sample(tmp_path) -> None:
    path = tmp_path / "split_assignments.json"
    rows = [_row("s1", "train", "s1", ["sedan"]), _row("s2", "test", "s2", ["van"])]
    write_split_assignments(rows, path)
    write_split_assignments([*rows, _row("s3", "val", "s3", ["sedan"])], path)  # new samples may join
    written = path.read_bytes()
    with pytest.raises(SplitError, match=r"split assignment is immutable; changed for \['s1'\]"):
        write_split_assignments([_row("s1", "val", "s1", ["sedan"])], path)
    assert path.read_bytes() == written


def test_leakage_names_each_lineage_key_in_two_splits_except_shared_families() -> None:
    rows = [_row("s1", "train", "g1", ["sedan", "van"]), _row("s2", "test", "g1", ["van"]),
            _row("s3", "test", "g3", ["sedan"])]
    assert leakage(rows, {"van"}) == {"checkpoint:g1": ["test", "train"], "family:sedan": ["test", "train"]}
    assert leakage(rows[:1], set()) == {}
