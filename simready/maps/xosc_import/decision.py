"""The decision checkpoint: the event (or time) a branch starts from, chosen by the caller or the main maneuver
group's first event, and the time it fires when its trigger chain is all times."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lxml import etree

from simready.maps.xosc_import.context import Context, Event
from simready.maps.xosc_import.document import XoscError, element_path


class Decision(Context):
    """The decision event and its time, written to the report."""

    def decision(self, decision: str | None, interactions: list[dict[str, Any]]) -> tuple[float | None, str | None]:
        by_id = {i["id"]: i for i in interactions}
        chosen: Event | None
        if decision is not None:
            try:
                t = float(decision)
            except ValueError:
                t = None
            if t is not None:
                if not 0 <= t <= self.clip:
                    raise XoscError(self.src, "--decision", f"{t} s is outside the clip [0, {self.clip}]")
                self.report.decision = f"at {t:g} s (--decision)"
                return t, None
            ev = self.events.get(decision)
            if ev is None or not ev.interactions or ev.interactions[0]["id"] not in by_id:
                raise XoscError(self.src, "--decision", f"no represented event {decision!r} "
                                                        f"(events: {', '.join(sorted(self.events))})")
            chosen, source = ev, "--decision"
        else:
            chosen, source = self._main_event(by_id), "the first event of the main maneuver group"
            if chosen is None:
                self.report.decision = "none: no represented event (pass --decision SECONDS)"
                return None, None
        first = chosen.interactions[0]["id"]
        t = _fire_time(by_id, first)
        where = f"{element_path(chosen.el)} (line {chosen.el.sourceline})"
        if t is None:
            self.report.decision = f"event {chosen.name} ({source}, {where}); it fires on a condition: the branch " \
                                   "command finds its time in a base rollout"
        else:
            self.report.decision = f"event {chosen.name} at {t:g} s ({source}, {where})"
        return t, chosen.name

    def _main_event(self, by_id: Mapping[str, Any]) -> Event | None:
        ego = next((a for a in self._ego_names()), None)
        candidates = [ev for ev in self.events.values() if ev.interactions and ev.interactions[0]["id"] in by_id]
        if not candidates:
            return None
        groups: list[etree._Element] = []
        for ev in candidates:
            if ev.group not in groups:
                groups.append(ev.group)
        main = next((g for g in groups if any(a != ego for a in [self.rd.text(e, "entityRef")
                                                                   for e in g.findall("Actors/EntityRef")])), groups[0])
        return next(ev for ev in candidates if ev.group is main)

    def _ego_names(self) -> list[str]:
        names = [e.name for e in self.entities.values() if e.props.get("simready.role") == "ego" or
                 e.name.lower() in ("ego", "hero")]
        first = next((e.name for e in self.entities.values() if e.kind == "vehicle"), None)
        return names or ([first] if first else [])


def _fire_time(by_id: Mapping[str, Any], inter_id: str) -> float | None:
    """The time an interaction fires when its trigger chain is all times and delays; None when it waits on the scene."""
    seen = set()
    total = 0.0
    while inter_id in by_id and inter_id not in seen:
        seen.add(inter_id)
        trig = by_id[inter_id]["trigger"]
        if trig["kind"] == "at":
            return total + float(trig["t_s"])
        if trig["kind"] != "after":
            return None
        total += trig["delay_s"]
        inter_id = trig["id"]
    return None
