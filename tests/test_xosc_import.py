"""OpenSCENARIO import (issue 25 item 5): export → import is the identity within 1 cm and 0.01 m/s; bad input is one
line; the imported manifest branches (brake / coast) at its decision."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simready.cli import main
from simready.maps.xosc_import import XoscError, import_xosc
from simready.maps.xosc_params import ExpressionError, Parameters, evaluate
from simready.scenario.manifest import load_manifest
from simready.world.template import load_template
from simready.common import paths
from tests.fixtures.xosc import CASES, _export, assert_same_manifest, manifests  # noqa: F401  (the fixture)


@pytest.mark.parametrize("case", sorted(CASES))
def test_export_then_import_is_the_identity(case, manifests, tmp_path):
    xosc = _export(manifests[case], tmp_path / "x")
    m = load_manifest(manifests[case])
    r = import_xosc(xosc)
    t = load_template(paths.TEMPLATES_DIR / f"{m.template_id}.yaml")
    assert r.template_data is None and r.template.id == m.template_id  # the map came back as its own template
    assert_same_manifest(m, r.manifest, t)


def test_every_verb_and_trigger_survives_the_round_trip(manifests, tmp_path):
    xosc = _export(manifests["all_verbs"], tmp_path / "x")
    m = load_manifest(manifests["all_verbs"])
    r = import_xosc(xosc)
    t = load_template(paths.TEMPLATES_DIR / f"{m.template_id}.yaml")
    # What the export reports as not expressible does not come back: wetness has no action, visible() no condition.
    assert_same_manifest(m, r.manifest, t, not_expressed={"v_set_wet", "v_visible"})


def test_cli_writes_manifest_and_report_and_the_manifest_branches(manifests, tmp_path, capsys):
    from simready.sim.branch import run_branches

    xosc = _export(manifests["cut_in"], tmp_path / "x")
    out = tmp_path / "imported"
    assert main(["scenario", "import-xosc", str(xosc), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "decision: event cutter_change_lane at 2.88 s (the first event of the main maneuver group" in printed
    m = load_manifest(out / f"{load_manifest(manifests['cut_in']).sample_id}.json")
    report = json.loads((out / "import_report.json").read_text())
    assert report["manifests"][0]["sample_id"] == m.sample_id
    assert m.realized["t_decision_s"] == 2.88
    t = load_template(paths.TEMPLATES_DIR / f"{m.template_id}.yaml")
    branches = run_branches(m, t, backend="kinematic-v1")
    assert branches.decision_source == "realized.t_decision_s" and branches.decision_t_s == 2.88
    assert [b.label for b in branches.branches] == ["brake", "coast"]
    brake, coast = branches.table
    assert brake["stopping_distance_m"] is not None or brake["min_ttc_s"] >= coast["min_ttc_s"]


def test_decision_by_event_and_seconds(manifests, tmp_path):
    xosc = _export(manifests["cut_in"], tmp_path / "x")
    r = import_xosc(xosc, decision="cutter_indicator")
    assert r.manifest.realized["t_decision_s"] == 1.88 and "--decision" in r.report.decision
    r = import_xosc(xosc, decision="4.5")
    assert r.manifest.realized["t_decision_s"] == 4.5
    with pytest.raises(XoscError, match="no represented event 'nope'"):
        import_xosc(xosc, decision="nope")


# --- bad input: one line naming the file, element and line; non-zero exit; nothing written --------------------

_GOOD = """<?xml version="1.0"?>
<OpenSCENARIO>
  <FileHeader author="t" description="t" revMajor="1" revMinor="1" date="2020-01-01T00:00:00"/>
  <ParameterDeclarations><ParameterDeclaration name="v0" parameterType="double" value="10"/></ParameterDeclarations>
  <CatalogLocations/>
  <RoadNetwork><LogicFile filepath="MAP"/></RoadNetwork>
  <Entities>
    <ScenarioObject name="Ego"><Vehicle name="car" vehicleCategory="car">
      <BoundingBox><Center x="1.4" y="0" z="0.7"/><Dimensions width="1.85" length="4.7" height="1.45"/></BoundingBox>
      <Performance maxSpeed="50" maxAcceleration="5" maxDeceleration="9"/>
      <Axles><FrontAxle maxSteering="0.5" wheelDiameter="0.6" trackWidth="1.6" positionX="2.8" positionZ="0.3"/>
             <RearAxle maxSteering="0" wheelDiameter="0.6" trackWidth="1.6" positionX="0" positionZ="0.3"/></Axles>
      <Properties/></Vehicle></ScenarioObject>
    ENTITY2
  </Entities>
  <Storyboard>
    <Init><Actions>
      <Private entityRef="Ego"><PrivateAction><TeleportAction><Position>
        <LanePosition roadId="2" laneId="-1" s="20" offset="0"/></Position></TeleportAction></PrivateAction>
        <PrivateAction><LongitudinalAction><SpeedAction>
          <SpeedActionDynamics dynamicsShape="step" value="0" dynamicsDimension="time"/>
          <SpeedActionTarget><AbsoluteTargetSpeed value="SPEED"/></SpeedActionTarget></SpeedAction></LongitudinalAction>
        </PrivateAction></Private>
    </Actions></Init>
    <Story name="s"><Act name="a">
      <ManeuverGroup name="g" maximumExecutionCount="1"><Actors selectTriggeringEntities="false">
        <EntityRef entityRef="Ego"/></Actors>
        <Maneuver name="m"><Event name="brake" priority="overwrite">
          <Action name="b"><PrivateAction><LongitudinalAction><SpeedAction>
            <SpeedActionDynamics dynamicsShape="linear" value="4" dynamicsDimension="rate"/>
            <SpeedActionTarget><AbsoluteTargetSpeed value="0"/></SpeedActionTarget></SpeedAction></LongitudinalAction>
          </PrivateAction></Action>
          <StartTrigger><ConditionGroup><Condition name="c" delay="0" conditionEdge="rising"><ByEntityCondition>
            <TriggeringEntities triggeringEntitiesRule="any"><EntityRef entityRef="WHO"/></TriggeringEntities>
            <EntityCondition><SpeedCondition value="5" rule="greaterThan"/></EntityCondition>
          </ByEntityCondition></Condition></ConditionGroup></StartTrigger></Event></Maneuver></ManeuverGroup>
      <StartTrigger><ConditionGroup><Condition name="t" delay="0" conditionEdge="none"><ByValueCondition>
        <SimulationTimeCondition value="0" rule="greaterThan"/></ByValueCondition></Condition></ConditionGroup></StartTrigger>
    </Act></Story>
    <StopTrigger><ConditionGroup><Condition name="end" delay="0" conditionEdge="rising"><ByValueCondition>
      <SimulationTimeCondition value="10" rule="greaterThan"/></ByValueCondition></Condition></ConditionGroup></StopTrigger>
  </Storyboard>
</OpenSCENARIO>
"""


@pytest.fixture(scope="module")
def arterial_map(tmp_path_factory) -> Path:
    from simready.maps.xodr_export import export_xodr

    folder = tmp_path_factory.mktemp("map")
    path = folder / "two_lane_arterial.xodr"
    path.write_bytes(export_xodr(load_template(paths.TEMPLATES_DIR / "two_lane_arterial.yaml"))[0])
    return path


def _write(folder: Path, map_path: Path, **subs: str) -> Path:
    text = _GOOD.replace("MAP", str(map_path))
    for key, default in (("SPEED", "$v0"), ("WHO", "Ego"), ("ENTITY2", "")):
        text = text.replace(key, subs.get(key, default))
    path = folder / "s.xosc"
    path.write_text(text)
    return path


def test_the_good_file_imports(arterial_map, tmp_path):
    r = import_xosc(_write(tmp_path, arterial_map))
    ego = r.manifest.actor("Ego")
    assert ego.role == "ego" and ego.initial.speed_mps == 10.0 and ego.initial.lane_ref.lane == "lane_eb_right"
    assert r.manifest.clip_s == 10.0 and r.manifest.warmup_s == 0.0
    (brake,) = r.manifest.interactions
    assert brake.speed.mode == "stop" and brake.dynamics.constraint == "rate" and brake.dynamics.value == 4.0
    assert brake.trigger.condition.kind == "speed" and brake.trigger.condition.op == "gt"


@pytest.mark.parametrize("subs, where", [
    ({"SPEED": "$nope"}, "undefined parameter $nope"),
    ({"WHO": "Ghost"}, "entity 'Ghost': no such entity"),
    ({"ENTITY2": '<ScenarioObject name="Other"><CatalogReference catalogName="VehicleCatalog" entryName="car_x"/>'
                 '</ScenarioObject>'}, "catalog reference VehicleCatalog/car_x resolves to nothing"),
    ({"ENTITY2": '<ScenarioObject name="Other"><Pedestrian name="p" mass="80" model="p" pedestrianCategory="pedestrian">'
                 '<BoundingBox><Center x="0" y="0" z="0.9"/><Dimensions width="0.5" length="0.5" height="1.8"/>'
                 '</BoundingBox><Properties/></Pedestrian></ScenarioObject>'}, "entity has no position"),
])
def test_bad_input_is_one_line_and_nothing_written(subs, where, arterial_map, tmp_path, capsys):
    path = _write(tmp_path, arterial_map, **subs)
    out = tmp_path / "out"
    assert main(["scenario", "import-xosc", str(path), "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and str(path) in err[0] and where in err[0], err
    assert "line " in err[0]
    assert not out.exists()


def test_malformed_xml_is_one_line(tmp_path, capsys):
    path = tmp_path / "bad.xosc"
    path.write_text("<OpenSCENARIO><FileHeader></OpenSCENARIO>")
    assert main(["scenario", "import-xosc", str(path), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "malformed XML at line 1" in err[0] and str(path) in err[0]
    assert not (tmp_path / "out").exists()


def test_entities_are_never_expanded(tmp_path, capsys):
    path = tmp_path / "laughs.xosc"
    path.write_text('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">'
                    '<!ENTITY c SYSTEM "file:///etc/passwd">]><OpenSCENARIO><FileHeader description="&b;&c;"/>'
                    '</OpenSCENARIO>')
    assert main(["scenario", "import-xosc", str(path), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "root" not in err.lower() or "passwd" not in err
    assert not (tmp_path / "out").exists()


# --- parameters and expressions ---------------------------------------------------------------------------------


def test_expressions():
    p = Parameters()
    p.declare("v", "10")
    p.declare("w", "${$v * 2 + 1}")
    assert p.resolve("$w") == "21"
    assert p.resolve("${round($v / 3) + max(1, 2) ** 2}") == "7"
    assert p.resolve("${-$v % 3}") == "-1"
    assert p.resolve("${not ($v > 3) or true}") == "1"
    assert p.resolve("plain") == "plain"
    for bad, why in (("${$v +}", "ends early"), ("${__import__('os')}", "unexpected"), ("${1 / 0}", "division by zero"),
                     ("${$q}", "undefined parameter $q"), ("${sqrt(-1)}", "sqrt"), ("${foo(1)}", "unknown function")):
        with pytest.raises(ExpressionError, match=why.replace("$", r"\$").replace("(", r"\(")):
            p.resolve(bad)
    assert evaluate("2 ** 3 ** 2", lambda n: 0) == 512.0


# --- import cost: the cold command imports what it needs ------------------------------------------------------

#: Packages the cold ``scenario import-xosc`` must not import: the Dagster layer, the simulator's physics, ray
#: casting, the mesh libraries, USD, the OpenDRIVE writer (and the scipy it pulls in).
HEAVY = ("dagster", "pybullet", "embreex", "trimesh", "manifold3d", "pxr", "scenariogeneration", "scipy")


def test_the_cold_command_imports_only_what_it_needs(manifests, tmp_path):
    """A simready export carries its map's sha256 and its template's hash: the import matches the template without
    exporting it again, and a certified catalog's verdicts are remembered, so the command never loads the writer,
    the mesh libraries or the simulator (make bench's xosc section times it)."""
    import subprocess
    import sys

    xosc = _export(manifests["cut_in"], tmp_path / "x")
    code = ("import sys; from simready.cli import main; rc = main(['scenario', 'import-xosc', sys.argv[1], '--out', "
            "sys.argv[2]]); print(sorted({m.split('.')[0] for m in sys.modules} & set(sys.argv[3].split(',')))); "
            "sys.exit(rc)")
    for k in range(2):  # the first run may certify the catalog (and remember it); the second must not load it
        done = subprocess.run([sys.executable, "-c", code, str(xosc), str(tmp_path / f"out{k}"), ",".join(HEAVY)],
                              capture_output=True, text=True, timeout=300, cwd=paths.PROJECT_ROOT)
        assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout
    assert "as the file header says" in json.loads((tmp_path / "out1" / "import_report.json").read_text())[
        "manifests"][0]["template"]
