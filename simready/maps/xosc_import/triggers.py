"""Start triggers and conditions → the manifest's triggers: simulation times, storyboard element states, entity
conditions (positions, distances, headways, times to collision, speeds, travelled distance, standstill,
collision) and signal states, combined from condition groups and the act's start trigger."""

from __future__ import annotations

from typing import Any

from lxml import etree

from simready.maps.xosc_import.context import Context, Event
from simready.maps.xosc_import.positions import Positions
from simready.maps.xosc_import.signals import SIGNAL_FORMS, Signals, parse_signal_state


_RULE = {"lessThan": "lt", "lessOrEqual": "lt", "greaterThan": "gt", "greaterOrEqual": "gt", "equalTo": "gt",
         "notEqualTo": "gt"}


_INVERT = {"lt": "gt", "gt": "lt"}


class Triggers(Signals, Positions):
    """An event's start trigger (and its act's) as one manifest trigger."""

    def trigger(self, event: Event) -> dict[str, Any]:
        """The manifest trigger of an event: its start trigger and its act's, combined."""
        groups = self._groups(event.el.find("StartTrigger"))
        # An act that starts at simulation time 0 (or before) adds nothing to its events' conditions.
        act_groups = [[i for i in g if not ("time" in i and i["rule"] == "gt" and i["time"] <= -self.warmup + 1e-9)]
                      for g in self._groups(event.act.find("StartTrigger"))]
        act_groups = [g for g in act_groups if g]
        if act_groups and groups:
            if len(act_groups) > 1 and len(groups) > 1:
                self.note(event.act.find("StartTrigger"), "act and event both have several condition groups: "
                                                          "the act's first group is used", approximated=True)
            combined = [a + g for a in act_groups[:1 if len(groups) > 1 else None] for g in groups]
            groups = combined
        else:
            groups = groups or act_groups
        return self._trigger_from_groups(event, groups)

    def _groups(self, trig: etree._Element | None) -> list[list[dict[str, Any]]]:
        if trig is None:
            return []
        out = []
        for g in trig.findall("ConditionGroup"):
            items = [self._condition(c) for c in g.findall("Condition")]
            out.append([i for i in items if i is not None])
        return out

    def _condition(self, c: etree._Element) -> dict[str, Any] | None:
        """One condition as ``{"time": t}``, ``{"after": id, "delay": d}``, ``{"leaf": {...}}`` or ``None``."""
        rd = self.rd
        delay = rd.num(c, "delay", 0.0)
        edge = rd.text(c, "conditionEdge", "none")
        vc = c.find("ByValueCondition")
        if vc is not None:
            body = next(iter(vc), None)
            if body is None:
                return None
            if body.tag == "SimulationTimeCondition":
                rule = rd.text(body, "rule")
                t = self.time(rd.num(body, "value")) + delay
                return {"time": t, "rule": _RULE.get(rule, "gt"), "el": body}
            if body.tag == "StoryboardElementStateCondition":
                ref = rd.text(body, "storyboardElementRef")
                kind = rd.text(body, "storyboardElementType")
                state = rd.text(body, "state")
                if kind != "event" or ref not in self.events:
                    if kind in ("act", "story", "maneuverGroup", "maneuver") and state in (
                            "startTransition", "runningState"):
                        first = self._first_event_of(ref, kind)
                        if first is not None:
                            return {"after": first, "delay": delay, "el": body}
                    self.note(body, f"state of {kind} {ref!r} is not represented (an event's state is)")
                    return {"never": True, "el": body}
                ev = self.events[ref]
                if state in ("endTransition", "completeState", "stopTransition", "skipTransition"):
                    return {"after": ev.name, "delay": delay, "end": True, "el": body}
                return {"after": ev.name, "delay": delay, "el": body}
            if body.tag == "TrafficSignalCondition":
                sig = rd.text(body, "name")
                signal_state = parse_signal_state(rd.text(body, "state"))
                if signal_state is None:
                    raise rd.error(body, f"signal state {rd.text(body, 'state')!r} is none of {SIGNAL_FORMS}")
                found = self.template_signal(sig)
                if found is None:
                    raise rd.error(body, f"no traffic signal {sig!r} in the map (signals: "
                                         f"{', '.join(s.id for s in self.template.signals) or 'none'})")
                self._signals_used.add(found.id)
                return self._leaf({"kind": "signal", "signal": found.id, "state": signal_state}, c, edge, delay)
            self.note(body, f"{body.tag} is not represented")
            return {"never": True, "el": body}
        ec = c.find("ByEntityCondition")
        if ec is None:
            raise rd.error(c, "condition is neither by value nor by entity")
        refs = [rd.text(e, "entityRef") for e in ec.findall("TriggeringEntities/EntityRef")]
        if not refs:
            raise rd.error(c, "entity condition without triggering entities")
        ents = [self.entity(ec, r) for r in refs]
        if len(ents) > 1:
            self.note(ec, f"{len(ents)} triggering entities: the first ({ents[0].name}) is used", approximated=True)
        a = ents[0]
        body = next(iter(ec.find("EntityCondition")), None)
        if body is None:
            raise rd.error(ec, "empty <EntityCondition>")
        op = _RULE.get(body.get("rule", "lessThan"), "lt")
        if body.get("rule") in ("equalTo", "notEqualTo"):
            self.note(body, f"rule {body.get('rule')} read as greaterThan", approximated=True)
        tag = body.tag
        if tag in ("ReachPositionCondition", "DistanceCondition") and body.find("Position") is not None:
            if tag == "ReachPositionCondition":
                r = rd.num(body, "tolerance")
                op = "lt"
            else:
                r = rd.num(body, "value")
            region = self._region(body.find("Position"), r)
            leaf = {"kind": "reaches", "actor": a.id, "region": region}
            if op == "gt":
                return self._leaf(leaf, c, "falling" if edge == "none" else _flip(edge), delay)
            return self._leaf(leaf, c, edge, delay)
        if tag in ("RelativeDistanceCondition", "DistanceCondition"):
            other = self.entity(body, rd.text(body, "entityRef"))
            along = rd.text(body, "relativeDistanceType", "euclidianDistance") == "longitudinal" and \
                rd.text(body, "coordinateSystem", "entity") in ("lane", "road")
            if rd.text(body, "freespace", "false") == "true":
                self.note(body, "freespace distance read as centre distance", approximated=True)
            return self._leaf({"kind": "distance", "a": a.id, "b": other.id, "op": op,
                               "metric": "along_lane" if along else "euclidean",
                               "value_m": max(0.0, rd.num(body, "value"))}, c, edge, delay)
        if tag == "TimeHeadwayCondition":
            other = self.entity(body, rd.text(body, "entityRef"))
            return self._leaf({"kind": "headway", "a": a.id, "b": other.id, "op": op,
                               "value_s": max(0.0, rd.num(body, "value"))}, c, edge, delay)
        if tag == "TimeToCollisionCondition":
            tgt = body.find("TimeToCollisionConditionTarget")
            target_ref = tgt.find("EntityRef") if tgt is not None else None
            if target_ref is not None:
                other = self.entity(target_ref, rd.text(target_ref, "entityRef"))
                return self._leaf({"kind": "ttc", "a": a.id, "b": other.id, "op": op,
                                   "value_s": max(0.0, rd.num(body, "value"))}, c, edge, delay)
            pos = tgt.find("Position") if tgt is not None else None
            if pos is None:
                raise rd.error(body, "TimeToCollisionCondition without a target")
            x, y, _ = self.position(pos)
            return {"arrival": {"sync_with": a.id, "at": {"x": x, "y": y}, "ttc_s": max(0.0, rd.num(body, "value"))},
                    "el": body}
        if tag == "SpeedCondition":
            return self._leaf({"kind": "speed", "actor": a.id, "op": op,
                               "value_mps": max(0.0, rd.num(body, "value"))}, c, edge, delay)
        if tag == "RelativeSpeedCondition":
            other = self.entity(body, rd.text(body, "entityRef"))
            v = max(0.0, other.speed + rd.num(body, "value"))
            self.note(body, f"speed of {a.name} relative to {other.name} read against {other.name}'s initial speed: "
                            f"speed {op} {v:.3f} m/s", approximated=True)
            return self._leaf({"kind": "speed", "actor": a.id, "op": op, "value_mps": v}, c, edge, delay)
        if tag == "TraveledDistanceCondition":
            d = rd.num(body, "value")
            start = self.lane_ref(a.placed, a.kind)
            if start is None:
                self.note(body, f"{a.name} starts on no lane: travelled distance is not represented")
                return {"never": True, "el": body}
            lane, s = start["lane"], start["s"] + d
            for nxt in a.route[1:] if a.route and a.route[0] == lane else []:
                if s <= self.graph.lane(lane).length_m:
                    break
                s -= self.graph.lane(lane).length_m
                lane = nxt
            s = min(s, self.graph.lane(lane).length_m - 0.01)
            self.note(body, f"travelled {d:g} m read as reaching s {s:.2f} on {lane} along its route", approximated=True)
            return self._leaf({"kind": "reaches", "actor": a.id, "region": {
                "shape": "lane_window", "lane": lane, "s_from": round(max(0.0, s), 6),
                "s_to": round(self.graph.lane(lane).length_m, 6)}}, c, edge, delay)
        if tag == "StandStillCondition":
            return self._leaf({"kind": "standstill", "actor": a.id, "for_s": max(self.dt, rd.num(body, "duration"))},
                              c, edge, delay)
        if tag == "CollisionCondition":
            other_ref = body.find("EntityRef")
            other_id = self.entity(other_ref, rd.text(other_ref, "entityRef")).id if other_ref is not None else None
            return self._leaf({"kind": "collision", "a": a.id, "b": other_id}, c, edge, delay)
        self.note(body, f"{tag} is not represented")
        return {"never": True, "el": body}

    def _first_event_of(self, name: str, kind: str) -> str | None:
        tag = {"act": "Act", "story": "Story", "maneuverGroup": "ManeuverGroup", "maneuver": "Maneuver"}[kind]
        for ev in self.events.values():
            node = ev.el.getparent()
            while node is not None:
                if node.tag == tag and node.get("name") == name:
                    return ev.name
                node = node.getparent()
        return None

    def _region(self, pos: etree._Element, r: float) -> dict[str, Any]:
        lp = pos.find("LanePosition")
        rol = {v: k for k, v in self.road_of_lane.items()}
        if lp is not None and rol and self.rd.text(lp, "roadId").isdigit() and \
                int(self.rd.text(lp, "roadId")) in rol and self.rd.num(lp, "offset", 0.0) == 0.0:
            # The export writes a lane window as its middle and half-length on the lane's road.
            lane = rol[int(self.rd.text(lp, "roadId"))]
            mid = self.rd.num(lp, "s")
            return {"shape": "lane_window", "lane": lane, "s_from": round(max(0.0, mid - r), 6),
                    "s_to": round(mid + r, 6)}
        x, y, _ = self.position(pos)
        return {"shape": "circle", "x": x, "y": y, "r": max(r, 1e-3)}

    def _leaf(self, leaf: dict[str, Any], c: etree._Element, edge: str, delay: float) -> dict[str, Any]:
        if delay > 0:
            self.note(c, f"condition delay {delay:g} s is not represented (the interaction fires when it holds)",
                      approximated=True)
        if edge == "falling":
            if leaf["kind"] in ("distance", "ttc", "headway", "speed"):
                leaf = {**leaf, "op": _INVERT[leaf["op"]]}
            else:
                leaf = {"kind": "not", "of": leaf}
        elif edge == "risingOrFalling":
            self.note(c, "a rising-or-falling edge is read as rising", approximated=True)
        return {"leaf": leaf, "el": c}

    def _trigger_from_groups(self, event: Event, groups: list[list[dict[str, Any]]]) -> dict[str, Any]:
        where = event.el.find("StartTrigger")
        where = where if where is not None else event.el
        if not groups or all(not g for g in groups):
            return {"kind": "at", "t_s": 0.0}
        # by_latest patterns: a group holding only "time >= T" among others is "fire at T";
        # a "time < T" in every group is "skip after T".
        fire = [g for g in groups if g and all("time" in i and i["rule"] == "gt" for i in g)]
        rest = [g for g in groups if g not in fire]
        deadline_fire = min((max(i["time"] for i in g) for g in fire), default=None)
        if not rest:
            assert deadline_fire is not None  # every group is a non-empty "time >= T" group
            return {"kind": "at", "t_s": max(0.0, min(deadline_fire, self.clip))}
        conds: list[list[dict[str, Any]]] = []
        skip_deadline = None
        for g in rest:
            kept = []
            for item in g:
                if "time" in item and item["rule"] == "lt":
                    skip_deadline = item["time"] if skip_deadline is None else min(skip_deadline, item["time"])
                elif "time" in item:
                    kept.append(item)
                else:
                    kept.append(item)
            conds.append(kept)
        if any(any("never" in i for i in g) for g in conds):
            conds = [g for g in conds if not any("never" in i for i in g)]
            if not conds:
                if deadline_fire is not None:
                    return {"kind": "at", "t_s": max(0.0, min(deadline_fire, self.clip))}
                self.note(where, "no condition of this event can be represented: it never fires")
                return {"never": True}
        # One group of an "after" (plus perhaps a time bound) → after; a time-only group → at.
        if len(conds) == 1:
            g = conds[0]
            afters = [i for i in g if "after" in i]
            times = [i for i in g if "time" in i]
            leaves = [i for i in g if "leaf" in i or "arrival" in i]
            own = [i for i in afters if i["after"] == event.name]
            if own:
                self.note(where, "a condition on the event's own state (a repeat) is dropped", approximated=True)
                afters = [i for i in afters if i["after"] != event.name]
                if not afters and not leaves and not times:
                    return {"kind": "at", "t_s": 0.0}
            if afters and not leaves:
                a = afters[0]
                delay = a["delay"] + (self.events[a["after"]].duration_s if a.get("end") else 0.0)
                if a.get("end"):
                    self.note(a["el"], f"end of {a['after']} read as its start + its duration ({delay:g} s)",
                              approximated=True)
                if len(afters) > 1 or times:
                    self.note(where, "an after-condition combined with others: only the first is kept",
                              approximated=True)
                return {"kind": "after", "id": self.events[a["after"]].id_first, "delay_s": max(0.0, delay)}
            if times and not leaves:
                return {"kind": "at", "t_s": max(0.0, min(max(i["time"] for i in times), self.clip))}
            if len(leaves) == 1 and "arrival" in leaves[0]:
                arr = leaves[0]["arrival"]
                return {"kind": "arrival", "of": "@actor", "at": arr["at"], "sync_with": arr["sync_with"],
                        "ttc_s": arr["ttc_s"]}
        by_latest = self.clip
        if_never = "skip"
        if deadline_fire is not None:
            by_latest, if_never = min(deadline_fire, self.clip), "fire"
        elif skip_deadline is not None:
            by_latest = min(skip_deadline, self.clip)
        leaf_groups = []
        for g in conds:
            leaves = [i["leaf"] for i in g if "leaf" in i]
            for i in g:
                if "leaf" not in i:
                    self.note(i["el"], "a time, state or arrival condition mixed with entity conditions is dropped",
                              approximated=True)
            if leaves:
                leaf_groups.append(leaves)
        if not leaf_groups:
            return {"kind": "at", "t_s": max(0.0, min(by_latest, self.clip))}
        if len(leaf_groups) == 1:
            leaves = leaf_groups[0]
            condition = leaves[0] if len(leaves) == 1 else {"kind": "and", "of": _flat(leaves, self, where)}
        elif all(len(g) == 1 for g in leaf_groups):
            condition = {"kind": "or", "of": _flat([g[0] for g in leaf_groups], self, where)}
        else:
            self.note(where, "an or of ands is not represented: the first group is used", approximated=True)
            condition = {"kind": "and", "of": _flat(leaf_groups[0], self, where)}
        return {"kind": "when", "condition": condition, "by_latest_s": max(0.0, by_latest), "if_never": if_never}


def _flat(leaves: list[dict[str, Any]], imp: Context, where: etree._Element) -> list[dict[str, Any]]:
    """Leaves of an and / or: a ``not`` inside one is not representable (one level of nesting) and is dropped."""
    out = [leaf for leaf in leaves if leaf["kind"] != "not"]
    if len(out) != len(leaves):
        imp.note(where, "a negated condition inside an and/or is dropped", approximated=True)
    if len(out) == 1:
        out = out * 2  # the manifest's and / or need two leaves: the same leaf twice is the leaf
    return out


def _flip(edge: str) -> str:
    return {"rising": "falling", "falling": "rising"}.get(edge, edge)
