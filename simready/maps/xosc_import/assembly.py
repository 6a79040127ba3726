"""The manifest the import assembles: interactions with their triggers, actors with their rules, routes and walks,
occluders, the environment, the realized parameters and the lineage."""

from __future__ import annotations

import math
from typing import Any

from simready.maps.xosc_import.context import Entity
from simready.maps.xosc_import.decision import Decision
from simready.maps.xosc_import.document import XoscError, identifier
from simready.maps.xosc_import.entities import asset_hash, certified_catalog
from simready.maps.xosc_import.triggers import Triggers
from simready.maps.xosc_params import ExpressionError
from simready.scenario.manifest import SCHEMA_VERSION
from simready.scenario.streams import StreamSet
from simready.world.template import template_hash


_DEFAULT_RULES = {"obey_signals": True, "yield": True, "collision_avoidance": True, "aggression": 0.2,
                  "speed_factor": 1.0}

#: A moving vehicle may start at most this far off the lane it drives (m): the simulator's MAX_ROUTE_OFFSET_M.
MAX_START_OFFSET_M = 3.0


class Assembly(Triggers, Decision):
    """Everything read so far as the manifest's data."""

    def build(self, decision: str | None) -> dict[str, Any]:
        for ev in self.events.values():
            ev.id_first = ev.interactions[0]["id"] if ev.interactions else ev.id
        interactions = []
        for ev in self.events.values():
            if not ev.interactions:
                continue
            trig = self.trigger(ev)
            if trig.get("never"):
                continue
            for k, inter in enumerate(ev.interactions):
                t = trig
                if k > 0:
                    t = {"kind": "after", "id": ev.interactions[0]["id"], "delay_s": 0.0}
                if t["kind"] == "arrival":
                    t = {**t, "of": inter["actor_id"]}
                    if t["of"] == t["sync_with"] or t["of"] is None:
                        self.note(ev.el, "time to collision with a position read as a time bound", approximated=True)
                        t = {"kind": "at", "t_s": 0.0}
                full = {"id": inter["id"], "actor_id": inter["actor_id"], "trigger": t, "until": None,
                        "dynamics": inter.get("dynamics")}
                for verb in ("speed", "gap", "change_lane", "lane_offset", "route", "exist", "set"):
                    full[verb] = inter.get(verb)
                if full["dynamics"] is None and any(full[v] is not None for v in ("speed", "gap", "change_lane",
                                                                                    "lane_offset")):
                    full["dynamics"] = {"shape": "step", "constraint": "time", "value": 0.0}
                interactions.append(full)
        known = {i["id"] for i in interactions}
        for i in interactions:
            if i["trigger"]["kind"] == "after" and i["trigger"]["id"] not in known:
                self.note(self.root, f"interaction {i['id']} waits for {i['trigger']['id']}, which is not "
                                     "represented: it never fires")
        interactions = [i for i in interactions if i["trigger"]["kind"] != "after" or i["trigger"]["id"] in known]
        actors = self._actors()
        spawned = {i["actor_id"] for i in interactions if i.get("exist") and i["exist"]["state"] == "present"}
        for a in actors:
            if not a["present_at_start"] and a["id"] not in spawned:
                a["present_at_start"] = True
                self.report.approximated.append(f"actor {a['id']}: invisible at start and never shown: present")
        catalog, _ = certified_catalog()
        assets = sorted({a["asset_id"] for a in actors})
        sample_id = identifier(self.header.get("sample_id") or f"xosc-{self.path.stem}").replace(":", "_")
        ego = next((a["id"] for a in actors if a["role"] == "ego"), actors[0]["id"])
        t_decision, event_name = self.decision(decision, interactions)
        realized: dict[str, Any] = {"xosc.source": self.path.name, "decision_event": event_name or ""}
        if event_name is not None:
            realized["decision_interaction"] = self.events[event_name].interactions[0]["id"]
        if t_decision is not None:
            realized["t_decision_s"] = round(t_decision, 9)
        realized.update({f"xosc.param.{k}"[:128]: v for k, v in sorted(self.param_values().items())})
        occluders: list[dict[str, Any]] = [{"id": identifier(e.props["simready.occluder"]), "kind": "actor", "actor_id": e.id, "pose": None,
                      "dims": None} for e in self.entities.values() if "simready.occluder" in e.props]
        occluders += [{"id": e.id, "kind": "structure", "actor_id": None,
                      "pose": {"x": e.placed[0], "y": e.placed[1], "yaw": e.placed[2]},
                      "dims": {"l": e.dims[0] or 1.0, "w": e.dims[1] or 1.0, "h": e.dims[2] or 1.0}}
                     for e in self.entities.values() if e.kind == "misc"]
        for e in self.entities.values():
            if e.kind == "misc":
                self.report.approximated.append(f"Entities/ScenarioObject[{e.name}] (line {e.line}): misc object "
                                                f"({e.category}) is a structure occluder box")
        env = self._final_environment()
        streams = StreamSet(sample_id)
        return {
            "schema_version": SCHEMA_VERSION, "template_id": self.template.id,
            "template_hash": template_hash(self.template), "sample_id": sample_id, "seed": streams.root_seed,
            "streams": streams.seeds(), "clip_s": self.clip, "warmup_s": self.warmup, "dt": self.dt,
            "metric_subject": self.header.get("metric_subject", ego), "actors": actors,
            "interactions": interactions, "signal_programs": self.signal_programs(), "occluders": occluders, "environment": env,
            "coverage_cell": {"id": "xosc", "dims": {}}, "split": "train", "realized": realized,
            "lineage": {"asset_families": sorted({a.removeprefix("asset:").split("/")[0] for a in assets}),
                        "base_template": self.template.id, "checkpoint_group": sample_id},
            "asset_versions": {a: asset_hash(catalog, a) for a in assets},
            "intent": f"imported from OpenSCENARIO {self.path.name}",
        }

    def param_values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        scope = self.rd.params.scopes[0]
        for name in sorted(scope):
            try:
                text = self.rd.params.resolve(scope[name])
            except ExpressionError:
                continue
            try:
                out[identifier(name)] = float(text)
            except ValueError:
                out[identifier(name)] = text[:256]
        return out

    def _final_environment(self) -> dict[str, Any]:
        env = dict(self.env)
        h = self.header
        for key in ("wetness", "road_reflectance", "sun_elevation_deg", "sun_azimuth_deg"):
            if key in h:
                env[key] = float(h[key])
        if "weather" in h:
            env["weather"] = h["weather"]
        if "headlights" in h:
            env["headlights"] = h["headlights"] == "true"
        el = env["sun_elevation_deg"]
        env["illumination"] = "day" if el >= 6.0 else ("night" if el < -6.0 else "dusk")
        if "headlights" not in h:
            env["headlights"] = env["illumination"] != "day"
        if env["rain_rate_mmph"] > 0:
            env["weather"] = "rain"
            env["wetness"] = env["wetness"] or 0.5
        elif env["weather"] == "rain":
            env["weather"] = "wet"
        if env["weather"] == "wet" and env["wetness"] == 0:
            env["weather"] = "dry"
        if env["weather"] == "dry":
            env["wetness"] = 0.0
        return env

    def _actors(self) -> list[dict[str, Any]]:
        catalog, _ = certified_catalog()
        actors = []
        named_ego = [e for e in self.entities.values() if e.kind == "vehicle" and
                     (e.props.get("simready.role") == "ego" or e.name.lower() in ("ego", "hero"))]
        first_vehicle = next((e for e in self.entities.values() if e.kind == "vehicle"), None)
        ego = named_ego[0] if named_ego else first_vehicle
        for e in self.entities.values():
            if e.kind == "misc":
                continue
            d = catalog.entries[e.asset_id].dimensions_m
            p = e.props
            role = p.get("simready.role") or ("ego" if e is ego else "agent")
            if role == "ego" and e is not ego:
                role = "agent"
            if role == "parked" and e.speed != 0:
                role = "agent"
            rules = dict(_DEFAULT_RULES)
            for key in ("obey_signals", "yield", "collision_avoidance"):
                if f"simready.{key}" in p:
                    rules[key] = p[f"simready.{key}"] == "true"
            for key in ("aggression", "speed_factor"):
                if f"simready.{key}" in p:
                    rules[key] = float(p[f"simready.{key}"])
            cruise = float(p["simready.cruise_speed_mps"]) if "simready.cruise_speed_mps" in p else \
                (None if role == "parked" else e.speed)
            pose = {"x": round(e.placed[0], 8), "y": round(e.placed[1], 8), "yaw": round(math.atan2(
                math.sin(e.placed[2]), math.cos(e.placed[2])), 9)}
            walk = None
            route = e.route
            if e.kind == "pedestrian":
                nodes = e.nodes or self._nodes([e.placed])
                if len(nodes) < 2:
                    nodes = self._walk_default(e)
                walk = {"route": nodes, "reaction_delay_s": float(p.get("simready.reaction_delay_s", 0.4)),
                        "stop_tendency": float(p.get("simready.stop_tendency", 0.0))}
                if e.via:
                    walk["via"] = [{"x": x, "y": y} for x, y in e.via]
                route = []
            else:
                lr = self.lane_ref(e.placed, e.kind)
                if not route and lr is not None and role != "parked":
                    route = self._default_route(lr["lane"])
                if lr is None and role != "parked":
                    self._check_drivable(e, route)
            actors.append({
                "id": e.id, "kind": e.kind, "role": role, "asset_id": e.asset_id,
                "dims": {"l": d.length, "w": d.width, "h": d.height},
                "initial": {"lane_ref": self.lane_ref(e.placed, e.kind), "pose": pose, "speed_mps": round(e.speed, 9)},
                "behavior": {"rules": rules, "route": route, "cruise_speed_mps": cruise},
                "walk": walk, "present_at_start": e.present,
                "tags": p.get("simready.tags", "").split() if p.get("simready.tags") else [f"xosc:{identifier(e.name)}"[:64]],
            })
        return actors

    def _check_drivable(self, e: Entity, route: list[str]) -> None:
        """A moving vehicle off every lane must still start within reach of a lane it can drive, heading its way;
        else one line saying why (the simulator's behaviour model drives vehicles along lanes)."""
        x, y, h = e.placed
        where = f"Entities/ScenarioObject[{e.name}]"
        try:
            lane, s, t = self.graph.nearest(x, y, h, kinds=("driving", "turn"))
        except ValueError:
            raise XoscError(self.src, where, f"no lane of the map runs in its heading (line {e.line})") from None
        if route:
            lane = route[0]
            s, t = self.graph.lane(lane).project(x, y)
        if abs(t) <= MAX_START_OFFSET_M and s >= -MAX_START_OFFSET_M:
            return
        other, s2, t2 = self.graph.nearest(x, y)
        g = self.graph.lane(other)
        if abs(t2) <= g.width_m / 2 and 0.0 <= s2 <= g.length_m:
            yaw, lane_yaw = (math.degrees(math.remainder(a, math.tau)) for a in (h, g.pose_at(s2)[2]))
            why = (f"starts on lane {other} heading against its direction of travel (yaw {yaw:.0f}°, the lane "
                   f"{lane_yaw:.0f}°): a vehicle drives a lane its way")
        else:
            why = f"starts {abs(t):.2f} m off the nearest lane it can drive ({lane}), more than {MAX_START_OFFSET_M:g} m"
            if e.road is not None and e.road[0] in self.roads.roads:
                road = self.roads.roads[e.road[0]]
                sec = next((sec for sec in reversed(road.sections) if sec.s <= e.road[2] + 1e-9), road.sections[0])
                kind = next((ln.type for ln in sec.lanes if ln.id == e.road[1]), "")
                if kind and kind not in ("driving", "entry", "exit", "onRamp", "offRamp", "connectingRamp"):
                    why += f", on road {road.id} lane {e.road[1]}, a {kind!r} lane (not driven)"
        raise XoscError(self.src, where, f"{e.name!r} {why} (line {e.line})")

    def _walk_default(self, e: Entity) -> list[str]:
        nodes = self.template.walkable.nodes
        if len(nodes) < 2:
            raise XoscError(self.src, f"Entities/ScenarioObject[{e.name}]",
                            f"a pedestrian needs a walkable graph and the map has none (line {e.line})")
        ranked = sorted(sorted(nodes), key=lambda n: math.hypot(nodes[n][0] - e.placed[0], nodes[n][1] - e.placed[1]))
        h = e.placed[2]
        ahead = [n for n in ranked[1:] if (nodes[n][0] - e.placed[0]) * math.cos(h) + (nodes[n][1] - e.placed[1]) *
                 math.sin(h) > 0]
        return [ranked[0], (ahead or ranked[1:])[0]]
