"""Triggers → start triggers: ``at`` and ``after`` as simulation-time and storyboard-state conditions, ``when`` as
condition groups with ``by_latest`` as a time bound, ``arrival`` as a time to collision."""

from __future__ import annotations

import math
from typing import Any

from scenariogeneration import xosc

from simready.maps.xosc_export.base import BuilderBase
from simready.maps.xosc_export.vocabulary import INVERTED_RULES, RULES
from simready.scenario.manifest import Condition, Interaction
from simready.scenario.manifest.triggers import (AfterTrigger, AndCondition, ArrivalTrigger, AtTrigger,
                                                 CollisionCondition, DistanceCondition, HeadwayCondition, NotCondition,
                                                 OrCondition, ReachesCondition, SignalCondition, SpeedCondition,
                                                 StandstillCondition, TtcCondition, VisibleCondition)


class Triggers(BuilderBase):
    """An interaction's trigger as an OpenSCENARIO start trigger."""

    def _leaf(self, where: str, cond: Condition, negate: bool = False) -> tuple[Any, str | None] | None:
        """(condition, triggering entity or None for a value condition); None when not expressible."""
        rule = (INVERTED_RULES if negate else RULES).get(getattr(cond, "op", ""), None)
        if isinstance(cond, DistanceCondition):
            kind = xosc.RelativeDistanceType.longitudinal if cond.metric == "along_lane" else \
                xosc.RelativeDistanceType.euclidianDistance
            system = xosc.CoordinateSystem.lane if cond.metric == "along_lane" else xosc.CoordinateSystem.entity
            return xosc.RelativeDistanceCondition(cond.value_m, rule, kind, cond.b, alongroute=False, freespace=False,
                                                  coordinate_system=system), cond.a
        if isinstance(cond, TtcCondition):
            return xosc.TimeToCollisionCondition(cond.value_s, rule, alongroute=False, freespace=False,
                                                 entity=cond.b), cond.a
        if isinstance(cond, HeadwayCondition):
            return xosc.TimeHeadwayCondition(cond.b, cond.value_s, rule, alongroute=False, freespace=False), cond.a
        if isinstance(cond, SpeedCondition):
            return xosc.SpeedCondition(cond.value_mps, rule), cond.actor
        if negate:
            self.report.not_expressed.append(f"{where}: not({cond.kind}) (no inverse in OpenSCENARIO)")
            return None
        if isinstance(cond, ReachesCondition):
            region = cond.region
            if region.shape == "circle":
                return _within(xosc.WorldPosition(region.x, region.y), region.r), cond.actor
            if region.shape == "lane_window":
                mid = 0.5 * (region.s_from + region.s_to)
                return _within(self.lane_position(region.lane, mid), 0.5 * (region.s_to - region.s_from)), cond.actor
            xs = [p.x for p in region.points]
            ys = [p.y for p in region.points]
            cx, cy = sum(xs) / len(xs), sum(ys) / len(ys)
            r = max(math.hypot(x - cx, y - cy) for x, y in zip(xs, ys))
            self.report.not_expressed.append(f"{where}: reaches a polygon, approximated by the circle around it "
                                             f"(centre {cx:.2f}, {cy:.2f}, radius {r:.2f} m)")
            return _within(xosc.WorldPosition(cx, cy), r), cond.actor
        if isinstance(cond, StandstillCondition):
            return xosc.StandStillCondition(cond.for_s), cond.actor
        if isinstance(cond, SignalCondition):
            signal = self.signal_ids.get(cond.signal, cond.signal)
            return xosc.TrafficSignalCondition(signal, cond.state), None
        if isinstance(cond, CollisionCondition):
            return xosc.CollisionCondition(cond.b if cond.b is not None else xosc.ObjectType.vehicle), cond.a
        if isinstance(cond, VisibleCondition):
            self.report.not_expressed.append(f"{where}: visible({cond.a} to {cond.to}) has no OpenSCENARIO condition")
            return None
        self.report.not_expressed.append(f"{where}: condition {cond.kind}")
        return None

    def _trigger_item(self, name: str, leaf: tuple[Any, str | None]) -> Any:
        cond, entity = leaf
        if entity is None:
            return xosc.ValueTrigger(name, 0.0, xosc.ConditionEdge.none, cond)
        return xosc.EntityTrigger(name, 0.0, xosc.ConditionEdge.none, cond, entity)

    def _time_item(self, name: str, t_s: float, rule: xosc.Rule) -> Any:
        return xosc.ValueTrigger(name, 0.0, xosc.ConditionEdge.none, xosc.SimulationTimeCondition(self.time(t_s), rule))

    def start_trigger(self, inter: Interaction) -> xosc.Trigger:
        where = f"interaction {inter.id} trigger"
        trig = inter.trigger
        out = xosc.Trigger()
        if isinstance(trig, AtTrigger):
            out.add_conditiongroup(_group(self._time_item(f"{inter.id}_at", trig.t_s, xosc.Rule.greaterOrEqual)))
            self.report.written.append(f"{where}: at {trig.t_s} s -> SimulationTimeCondition {self.time(trig.t_s):g} s")
            return out
        if isinstance(trig, AfterTrigger):
            cond = xosc.StoryboardElementStateCondition(xosc.StoryboardElementType.event, trig.id,
                                                        xosc.StoryboardElementState.startTransition)
            out.add_conditiongroup(_group(xosc.ValueTrigger(f"{inter.id}_after", trig.delay_s, xosc.ConditionEdge.none,
                                                            cond)))
            self.report.written.append(f"{where}: after {trig.id} + {trig.delay_s} s -> StoryboardElementStateCondition")
            return out
        if isinstance(trig, ArrivalTrigger):
            return self._arrival(inter, trig, out)
        groups = self._condition_groups(inter, trig.condition)
        deadline = trig.by_latest_s
        if trig.if_never == "fire":
            groups = (groups or []) + [[self._time_item(f"{inter.id}_by_latest", deadline, xosc.Rule.greaterOrEqual)]]
        elif groups:
            groups = [g + [self._time_item(f"{inter.id}_before", deadline, xosc.Rule.lessThan)] for g in groups]
        else:
            # Nothing expressible and skipped when it never holds: an event that never starts.
            groups = [[self._time_item(f"{inter.id}_never", self.m.clip_s + 1.0, xosc.Rule.greaterThan)]]
        for g in groups:
            out.add_conditiongroup(_group(*g))
        self.report.written.append(f"{where}: when {trig.condition.kind} (by_latest {deadline} s, {trig.if_never}) "
                                   f"-> {len(groups)} condition group(s)")
        return out

    def _condition_groups(self, inter: Interaction, cond: Condition) -> list[list[Any]] | None:
        where = f"interaction {inter.id} trigger"
        if isinstance(cond, AndCondition):
            leaves = [self._leaf(where, c) for c in cond.of]
            present = [leaf for leaf in leaves if leaf is not None]
            if len(present) < len(leaves):
                return None
            return [[self._trigger_item(f"{inter.id}_c{k}", leaf) for k, leaf in enumerate(present)]]
        if isinstance(cond, OrCondition):
            leaves = [self._leaf(where, c) for c in cond.of]
            return [[self._trigger_item(f"{inter.id}_c{k}", leaf)] for k, leaf in enumerate(leaves) if leaf is not None] or None
        leaf = self._leaf(where, cond.of, negate=True) if isinstance(cond, NotCondition) else self._leaf(where, cond)
        return None if leaf is None else [[self._trigger_item(f"{inter.id}_c0", leaf)]]

    def _arrival(self, inter: Interaction, trig: ArrivalTrigger, out: xosc.Trigger) -> xosc.Trigger:
        where = f"interaction {inter.id} trigger"
        if trig.at is None:
            self.report.not_expressed.append(f"{where}: arrival at conflict point {trig.conflict_point} "
                                             "(a template place OpenDRIVE does not hold); written: never starts")
            out.add_conditiongroup(_group(self._time_item(f"{inter.id}_never", self.m.clip_s + 1.0, xosc.Rule.greaterThan)))
            return out
        value = trig.ttc_s if trig.ttc_s is not None else abs(trig.delta_t_s or 0.0)  # exactly one is set
        cond = xosc.TimeToCollisionCondition(value, xosc.Rule.lessOrEqual, alongroute=False, freespace=False,
                                             position=xosc.WorldPosition(trig.at.x, trig.at.y))
        out.add_conditiongroup(_group(xosc.EntityTrigger(f"{inter.id}_arrival", 0.0, xosc.ConditionEdge.none, cond,
                                                         trig.sync_with)))
        self.report.not_expressed.append(f"{where}: arrival of {trig.of} in sync with {trig.sync_with} is solved at "
                                         f"run time; approximated as {trig.sync_with}'s time to ({trig.at.x}, "
                                         f"{trig.at.y}) <= {value} s")
        return out


def _within(position: Any, radius_m: float) -> xosc.DistanceCondition:
    """The actor is within ``radius_m`` of ``position`` (the form that replaces the deprecated ReachPositionCondition)."""
    return xosc.DistanceCondition(radius_m, xosc.Rule.lessThan, position, alongroute=False, freespace=False,
                                  distance_type=xosc.RelativeDistanceType.euclidianDistance)


def _group(*items: Any) -> xosc.ConditionGroup:
    group = xosc.ConditionGroup()
    for item in items:
        group.add_condition(item)
    return group
