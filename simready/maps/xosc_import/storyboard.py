"""The storyboard: the clip its stop trigger sets, its events (stories, acts, maneuver groups, maneuvers) and each
event's actions as interactions."""

from __future__ import annotations

from typing import Any

from lxml import etree

from simready.maps.xosc_import.actions import Actions
from simready.maps.xosc_import.context import Event
from simready.maps.xosc_import.document import identifier
from simready.scenario.manifest.base import MAX_CLIP_S


#: Clip length when the storyboard's stop trigger is not a simulation time (s).
DEFAULT_CLIP_S = 20.0


class Storyboard(Actions):
    """Stories, acts and events: the clip and every event's interactions (their triggers are :mod:`.triggers`')."""

    def read_storyboard(self) -> None:
        sb = self.root.find("Storyboard")
        stop = sb.find("StopTrigger")
        self.clip = DEFAULT_CLIP_S if "clip_s" not in self.header else float(self.header["clip_s"])
        if stop is not None and "clip_s" not in self.header:
            times = [self.rd.num(c, "value") for c in stop.iter("SimulationTimeCondition")]
            if times:
                self.clip = self.time(min(times))
            elif len(stop):
                self.note(stop, "storyboard stop trigger on a condition: the clip lasts "
                                f"{DEFAULT_CLIP_S:g} s", approximated=True)

        if self.clip > MAX_CLIP_S or self.clip <= 0:
            self.note(stop if stop is not None else sb, f"clip {self.clip:g} s cut to {min(MAX_CLIP_S, DEFAULT_CLIP_S):g} s",
                      approximated=True)
            self.clip = min(MAX_CLIP_S, DEFAULT_CLIP_S) if self.clip <= 0 else MAX_CLIP_S
        self.clip = round(round(self.clip / self.dt) * self.dt, 9)
        # Pass 1: every event and its actors (after-triggers may name events defined later).
        for story in sb.findall("Story"):
            self.rd.declare(story.find("ParameterDeclarations"))
            for act in story.findall("Act"):
                if act.find("StopTrigger") is not None and len(act.find("StopTrigger")):
                    self.note(act.find("StopTrigger"), "act stop trigger: actions hold until another takes their axis")
                for mg in act.findall("ManeuverGroup"):
                    actors = [self.rd.text(e, "entityRef") for e in mg.findall("Actors/EntityRef")]
                    for a in actors:
                        self.entity(mg, a)
                    if mg.find("CatalogReference") is not None:
                        self.note(mg, "maneuver from a catalog is not read")
                    for man in mg.findall("Maneuver"):
                        for ev in man.findall("Event"):
                            name = self.rd.text(ev, "name")
                            if name in self.events:
                                self.note(ev, f"event name {name!r} repeats: state conditions name the first")
                                name = f"{name}@{ev.sourceline}"
                            ident = identifier(name)
                            taken = {e.id for e in self.events.values()}
                            k = 2
                            while ident in taken:
                                ident, k = identifier(f"{identifier(name)}_{k}"), k + 1
                            self.events[name] = Event(name, ident, ev, actors, mg, act)
        for story in sb.findall("Story"):
            for act in story.findall("Act"):
                for mg in act.findall("ManeuverGroup"):
                    for ev in mg.iter("Event"):
                        self._event(next(e for e in self.events.values() if e.el is ev))

    def _event(self, event: Event) -> None:
        ev = event.el
        if int(float(ev.get("maximumExecutionCount", "1"))) > 1:
            self.note(ev, "maximumExecutionCount > 1: the event runs once", approximated=True)
        actions = ev.findall("Action")
        k = 0
        for action in actions:
            body = next(iter(action), None)
            if body is None:
                continue
            verbs = self._verbs(body, event)
            for actor, verb in verbs:
                inter_id = event.id if k == 0 else identifier(f"{event.id}_{k}")
                k += 1
                event.interactions.append({"id": inter_id, "actor_id": actor, **verb})

    def _verbs(self, body: etree._Element, event: Event) -> list[tuple[str | None, dict[str, Any]]]:
        """``[(actor id, verb fields)]`` for one ``<Action>``'s body, once per maneuver-group actor."""
        if body.tag == "GlobalAction":
            env = body.find("EnvironmentAction/Environment")
            if env is not None:
                before = dict(self.env)
                self._environment(body.find("EnvironmentAction"))
                after, self.env = self.env, before
                out: list[tuple[str | None, dict[str, Any]]] = []
                if after["road_friction"] != before["road_friction"]:
                    out.append((None, {"set": {"key": "env.road_friction", "value": float(after["road_friction"])}}))
                if after["rain_rate_mmph"] != before["rain_rate_mmph"]:
                    out.append((None, {"set": {"key": "env.rain_rate_mmph", "value": float(after["rain_rate_mmph"])}}))
                return out
            self.note(body, f"{next(iter(body)).tag if len(body) else 'GlobalAction'} is not represented")
            return []
        if body.tag in ("UserDefinedAction", "CustomCommandAction"):
            self.note(body, "user-defined action (custom command) is not represented")
            return []
        if body.tag != "PrivateAction":
            self.note(body, f"<{body.tag}> is not represented")
            return []
        out = []
        for name in event.actors:
            ent = self.entity(body, name)
            verb = self._private(body, ent, event)
            if verb is not None:
                out.append((ent.id, verb))
        return out
