"""Third-party OpenSCENARIO files (esmini's examples, tests/data/esmini, MPL-2.0) through the import: a RoutePosition
from a route catalog lands where the lane position it stands for does, and a cut-in rolls out and branches."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from simready.maps.xosc_import import import_xosc
from simready.sim.branch import run_branches
from simready.sim.run import run_simulation
from simready.world.routing import route_issue

DATA = Path(__file__).parent / "data" / "esmini"
ROUTE_POS = ('<RoutePosition>\n                           <RouteRef>\n                              <CatalogReference '
             'catalogName="RoutesAtFabriksgatan" entryName="{route}"/>\n                           </RouteRef>\n'
             '                           <InRoutePosition>\n                              <FromLaneCoordinates '
             'pathS="{s}" laneId="{lane}"/>\n                           </InRoutePosition>\n'
             '                        </RoutePosition>')


@pytest.fixture(scope="module")
def esmini(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("esmini")
    shutil.copytree(DATA, folder, dirs_exist_ok=True)
    return folder


def _pose(m, actor):
    p = m.actor(actor).initial.pose
    return p.x, p.y, p.yaw


def test_route_positions_from_a_route_catalog_are_their_lane_positions(esmini):
    """ltap-od: the host at pathS 0 on HostStraightRoute (first waypoint road 0, lane 1, s 63), the NPC at pathS 150
    on TargetLeftTurnRoute (first waypoint road 2, lane -1, s 100, driven along s): road 2, lane -1, s 250."""
    path = esmini / "xosc" / "ltap-od.xosc"
    text = path.read_text()
    routed = import_xosc(path)
    for route, s, lane in (("HostStraightRoute", "0", "1"), ("TargetLeftTurnRoute", "$NPCStartPointS", "-1")):
        assert ROUTE_POS.format(route=route, s=s, lane=lane) in text
    lanes = text.replace(ROUTE_POS.format(route="HostStraightRoute", s="0", lane="1"),
                         '<LanePosition roadId="0" laneId="1" offset="0" s="63"/>').replace(
        ROUTE_POS.format(route="TargetLeftTurnRoute", s="$NPCStartPointS", lane="-1"),
        '<LanePosition roadId="2" laneId="-1" offset="0" s="250"/>')
    (esmini / "xosc" / "ltap-od-lanes.xosc").write_text(lanes)
    placed = import_xosc(esmini / "xosc" / "ltap-od-lanes.xosc")
    for actor in ("Ego", "NPC"):
        a, b = _pose(routed.manifest, actor), _pose(placed.manifest, actor)
        assert math.hypot(a[0] - b[0], a[1] - b[1]) <= 0.01 and abs(math.remainder(a[2] - b[2], math.tau)) <= 1e-3
    # The routes the init assigns are lane chains through the junction that the actors can follow.
    graph = routed.template.lane_graph
    for actor in ("Ego", "NPC"):
        route = routed.manifest.actor(actor).behavior.route
        assert len(route) >= 3 and route_issue(graph, route) is None, route
    assert routed.manifest.actor("Ego").behavior.route[0] == "road0_sec0_lane1"
    assert routed.manifest.actor("NPC").behavior.route[-1] == "road1_sec0_lane-1"


def test_the_cut_in_rolls_out_and_branches(esmini):
    """cut-in: the overtaker changes into the ego's lane in the rollout; the decision (its first event, at 0 s)
    branches into brake and coast from one checkpoint."""
    r = import_xosc(esmini / "xosc" / "cut-in.xosc")
    m = r.manifest
    assert [a.id for a in m.actors] == ["Ego", "OverTaker"] and m.actor("Ego").role == "ego"
    assert "change_lane" in {i.verb for i in m.interactions}
    trace = run_simulation(m, r.template, backend="kinematic-v1").trace
    changes = [e for e in trace.events if e["type"] == "lane_change" and e["actor"] == "OverTaker"]
    assert changes and changes[-1]["to_lane"] == m.actor("Ego").initial.lane_ref.lane
    df = trace.df
    assert df[df["actor_id"] == "OverTaker"]["lane"].iloc[-1] == m.actor("Ego").initial.lane_ref.lane
    branches = run_branches(m, r.template, backend="kinematic-v1")
    assert [b.label for b in branches.branches] == ["brake", "coast"]
    assert branches.decision_source == "realized.t_decision_s"
