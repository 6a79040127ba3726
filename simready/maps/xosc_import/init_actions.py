"""The storyboard's Init: where each entity starts (teleports, in the order relative positions need), its initial
speed, route and visibility, and the environment at the start."""

from __future__ import annotations

from lxml import etree

from simready.maps.xosc_import.actions import Actions
from simready.maps.xosc_import.document import XoscError


class Init(Actions):
    """The ``<Init>`` actions: initial poses, speeds, routes, visibility and environment."""

    def read_init(self) -> None:
        init = self.root.find("Storyboard/Init/Actions")
        if init is None:
            raise self.rd.error(self.root, "no <Storyboard>/<Init>/<Actions>")
        for g in init.findall("GlobalAction"):
            env = g.find("EnvironmentAction")
            if env is not None:
                self._environment(env)
            else:
                self.note(g, "global action in Init is not represented")
        privates = init.findall("Private")
        self._in_init = True
        # Positions first (relative positions refer to entities placed before them), speeds after.
        pending = list(privates)
        for _ in range(len(pending) + 1):
            later = []
            for priv in pending:
                ent = self.entity(priv, self.rd.text(priv, "entityRef")) if self.entities.get(
                    priv.get("entityRef", "")) is None or self.entities[priv.get("entityRef", "")].kind != "misc" \
                    else self.entities[priv.get("entityRef", "")]
                tele = priv.find("PrivateAction/TeleportAction/Position")
                if tele is None or ent.pose is not None:
                    continue
                try:
                    ent.pose = self.position(tele, ent.name)
                except XoscError as exc:
                    if "placed after" in exc.reason:
                        later.append(priv)
                        continue
                    raise
                lp = tele.find("LanePosition")
                if lp is not None:
                    ent.road = (self.rd.text(lp, "roadId"), int(float(self.rd.text(lp, "laneId"))), self.rd.num(lp, "s"))
            if not later or len(later) == len(pending):
                pending = later
                break
            pending = later
        if pending:
            self.position(pending[0].find("PrivateAction/TeleportAction/Position"))
        for priv in privates:
            # An entity with no teleport starts where the trajectory it follows from the Init starts.
            unplaced = self.entities.get(priv.get("entityRef", ""))
            ft = priv.find("PrivateAction/RoutingAction/FollowTrajectoryAction")
            if unplaced is None or unplaced.pose is not None or ft is None:
                continue
            got = self._trajectory_points(ft)
            if got is not None and got[1]:
                unplaced.pose = got[1][0]
                self.note(ft, f"{unplaced.name!r} has no TeleportAction: it starts where its trajectory starts",
                          approximated=True)
        self._in_init = False
        for ent in list(self.entities.values()):
            if ent.pose is None and ent.controller:
                # A placeholder for traffic its controller spawns (a SUMO co-simulation, say): not in the story.
                del self.entities[ent.name]
                self.report.not_represented.append(
                    f"Entities/ScenarioObject[{ent.name}] (line {ent.line}): no position; the traffic its controller "
                    f"{ent.controller!r} spawns is not represented")
            elif ent.pose is None:
                raise XoscError(self.src, f"Entities/ScenarioObject[{ent.name}]",
                                f"entity has no position: no TeleportAction in Init (line {ent.line})")
        for priv in privates:
            ent = self.entities[priv.get("entityRef", "")] if priv.get("entityRef") in self.entities else \
                self.entity(priv, self.rd.text(priv, "entityRef"))
            for pa in priv.findall("PrivateAction"):
                action = next(iter(pa), None)
                if action is None or action.tag == "TeleportAction":
                    continue
                speed = action.find("SpeedAction") if action.tag == "LongitudinalAction" else None
                if speed is not None:
                    ent.speed = self._init_speed(speed)
                elif action.tag == "RoutingAction" and action.find("AssignRouteAction") is not None:
                    ent.route, ent.nodes = self._route(action.find("AssignRouteAction"), ent)
                elif action.tag == "RoutingAction" and action.find("FollowTrajectoryAction") is not None:
                    follow = self._trajectory(action.find("FollowTrajectoryAction"), ent)
                    if follow is not None:
                        ent.route = follow["route"].get("lanes", [])
                        ent.nodes = follow["route"].get("nodes", [])
                elif action.tag == "VisibilityAction":
                    ent.present = self.rd.text(action, "graphics", "true") == "true" or \
                        self.rd.text(action, "traffic", "true") == "true"
                else:
                    self.note(action, f"{action.tag} in Init is not represented")

    def _init_speed(self, speed: etree._Element) -> float:
        target = speed.find("SpeedActionTarget")
        abs_ = target.find("AbsoluteTargetSpeed") if target is not None else None
        if abs_ is not None:
            return max(0.0, self.rd.num(abs_, "value"))
        rel = target.find("RelativeTargetSpeed") if target is not None else None
        if rel is None:
            raise self.rd.error(speed, "SpeedAction without a target")
        ref = self.entity(rel, self.rd.text(rel, "entityRef"))
        v = self.rd.num(rel, "value")
        kind = self.rd.text(rel, "speedTargetValueType", "delta")
        return max(0.0, ref.speed * v if kind == "factor" else ref.speed + v)
