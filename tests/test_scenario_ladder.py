"""Constraint ladder: stage order, short-circuit (a failing stage stops the ladder), rejection rows."""

from __future__ import annotations

import dataclasses

import pytest

from simready.catalog.catalog import ensure_catalog
from simready.scenario.generator import default_stages, make_context, resolve_template
from simready.scenario.ladder import PASS, Fail, Ladder, RejectionRow
from simready.scenario.programs import program
from simready.scenario.streams import StreamSet

INTENT = "pedestrian_emerges_behind_van"


@pytest.fixture(scope="module")
def ctx():
    return make_context(resolve_template("residential_crosswalk_v3"), INTENT, catalog=ensure_catalog())


class Spy:
    """Wraps a stage and counts the proposals it sees."""

    def __init__(self, stage):
        self.stage = stage
        self.name, self.cost_rank, self.level = stage.name, stage.cost_rank, stage.level
        self.calls = 0

    def check(self, proposal):
        self.calls += 1
        return self.stage.check(proposal)


def _proposal(ctx, index=1):
    cell = ctx.coverage.cells[0]
    sample_id = f"rc3-ped-{index:06d}"
    return program(INTENT).propose(ctx, cell, sample_id, index, StreamSet(f"test/{sample_id}"))


def test_stages_run_cheap_to_expensive_whatever_the_declaration_order(ctx) -> None:
    stages = default_stages(ctx)
    ladder = Ladder(list(reversed(stages)))
    ranks = [s.cost_rank for s in ladder.stages]
    assert ranks == sorted(ranks)
    assert [s.name for s in ladder.stages][:4] == ["sampling", "semantics", "schema", "bounds"]


def test_a_proposal_failing_semantics_never_reaches_a_later_stage(ctx) -> None:
    """Counting spies on every stage: the unknown asset stops the ladder at stage 1 (semantics)."""
    spies = [Spy(s) for s in default_stages(ctx)]
    proposal = _proposal(ctx)
    proposal.draft["actors"][1]["asset_id"] = "asset:delivery_van/purple"
    result = Ladder(spies).evaluate(proposal)
    assert result.failure is not None and result.failure.stage == "semantics"
    assert result.failure.reason == "semantics.unknown_asset"
    calls = {s.name: s.calls for s in spies}
    assert calls["sampling"] == calls["semantics"] == 1
    assert all(calls[s.name] == 0 for s in spies if s.cost_rank > 10), calls
    assert result.ran == ("sampling", "semantics")


def test_each_stage_failure_stops_at_that_stage(ctx) -> None:
    """Whatever stage k fails, stages after k see nothing (a forced failure at every rank in turn)."""
    for k in range(len(default_stages(ctx))):
        spies = [Spy(s) for s in default_stages(ctx)]
        target = sorted(spies, key=lambda s: s.cost_rank)[k]
        target.check = lambda p, t=target: (setattr(t, "calls", t.calls + 1), Fail("forced", "forced at this stage"))[1]
        result = Ladder(spies).evaluate(_proposal(ctx))
        assert result.failure is not None and result.failure.stage == target.name
        later = [s for s in spies if s.cost_rank > target.cost_rank]
        assert all(s.calls == 0 for s in later)


def test_a_generated_proposal_passes_the_whole_ladder_and_every_stage_runs_once(ctx) -> None:
    spies = [Spy(s) for s in default_stages(ctx)]
    result = Ladder(spies).evaluate(_proposal(ctx))
    assert result.accepted, result.failure
    assert all(s.calls == 1 for s in spies)


def test_rejections_need_reasons() -> None:
    with pytest.raises(ValueError):
        Fail("", "detail")
    with pytest.raises(ValueError):
        Fail("reason", "")
    row = RejectionRow("s", "t", "i", "c", "schema", "schema.invalid", "field: bad", 0, 3)
    assert row.as_dict()["proposal_index"] == 3
    with pytest.raises(ValueError):
        dataclasses.replace(row, reason="")


def test_duplicate_stage_names_are_refused(ctx) -> None:
    stages = default_stages(ctx)
    with pytest.raises(ValueError):
        Ladder(stages + [stages[0]])


def test_extra_stage_plugs_in_after_capture(ctx) -> None:
    class Settle:
        name, cost_rank, level = "physics_settle", 50, 5
        seen = 0

        def check(self, proposal):
            Settle.seen += 1
            return PASS

    ladder = Ladder(default_stages(ctx) + [Settle()])
    assert ladder.stages[-1].name == "physics_settle"
    assert ladder.evaluate(_proposal(ctx)).accepted
    assert Settle.seen == 1
