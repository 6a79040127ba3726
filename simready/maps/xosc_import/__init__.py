"""ASAM OpenSCENARIO XML (1.0–1.3) → scenario manifest (SPEC §6, §19): the inverse of :mod:`~simready.maps.xosc_export`.

``import_xosc(file)`` reads a scenario, the road network its ``LogicFile``
names (relative to the ``.xosc``, as the standard says) or ``map_path``, and
the catalogs its ``CatalogLocations`` point at, and returns a validated
:class:`~simready.scenario.manifest.ScenarioManifest` on a world template,
with a report listing — one line each, with the element path and XML line —
what was approximated or could not be represented. The import is refused
(one :class:`XoscError` naming file, element and line) only when the story
cannot be represented: malformed XML, an undefined parameter, a catalog
reference that resolves to nothing, an entity without a position, a
condition or action on an unknown entity, a map that does not import.

Reading is safe: lxml with no entity expansion, no DTD, no network (the
parser :mod:`~simready.maps.opendrive` uses); parameters and ``${…}`` expressions are
evaluated by :mod:`~simready.maps.xosc_params` (never ``eval``).

What maps to what:

* **Road network** → the template whose exported OpenDRIVE
  (:func:`~simready.maps.xodr_export.export_xodr`) has the same sha256 as
  the file (a simready export comes back to its own template), else the map
  imported by :func:`~simready.maps.xodr_import.import_opendrive` as template
  ``xosc_<map stem>`` (returned as data for the caller to write).
* **Entities** → actors: Vehicle (bicycle / motorbike → cyclist) or
  Pedestrian, inline or a ``CatalogReference`` resolved through the catalog
  directories (with the entry's parameters and the reference's
  assignments); each is matched to the certified catalog entry of its class
  with the nearest dimensions (a simready export's ``simready.asset_id``
  property wins); the ego is the entity named ``ego``/``hero`` (any case),
  else the first vehicle. A ``MiscObject`` becomes a ``structure`` occluder
  (a box at its position).
* **Init** → initial pose from a TeleportAction with a World, Lane,
  RelativeLane, RelativeObject, RelativeWorld, Road, RelativeRoad or Route position (``pathS`` is road s
  driven along the route from its first waypoint; the waypoints' lanes are joined by the lane router; a
  route inline or from a route catalog); initial speed
  from an absolute or relative (to an already placed entity) SpeedAction;
  AssignRouteAction → the behaviour route; VisibilityAction(false) → absent
  at start.
* **Time**: simulation time 0 is the Init. A simready export carries
  ``simready.warmup_s`` in the file header; elsewhere the warm-up is 0, so
  manifest time = simulation time. The storyboard's stop trigger at a
  simulation time sets ``clip_s`` (else :data:`DEFAULT_CLIP_S`).
* **Events** → interactions (one per private action; the event's name, then
  ``<event>_<k>`` for further actions): SpeedAction (absolute → speed
  absolute, or stop at 0; relative delta / factor → speed delta / factor;
  relative to another entity with value 0 continuous → match, otherwise
  absolute at that entity's initial speed plus the value) with its
  transition dynamics (shape, rate / time / distance); LaneChangeAction
  (absolute target lane → change_lane to the template lane there; relative
  ±1 to itself → left / right; 0 relative to another entity → actor_lane);
  LaneOffsetAction (absolute → lane_offset metres with a duration from the
  peak lateral acceleration and shape; an absolute offset that lands on a
  neighbouring lane's centre, continuous false, is a change_lane — how the
  export writes a lane change); LongitudinalDistanceAction → gap;
  AssignRouteAction → route over the template lanes its waypoints lie on;
  AcquirePositionAction → route to the lane of its position (linked from the actor's lane when it fires);
  FollowTrajectoryAction (polyline, clothoid, NURBS control points) → route
  over the lanes its vertices lie on (the trajectory's own path is reported
  as approximated); VisibilityAction → exist; LightStateAction,
  AnimationAction (doors) and EnvironmentAction (friction, rain) → set.
  A TeleportAction in the storyboard, controllers, other global actions and
  custom commands are listed as not represented.
* **Triggers**: SimulationTime → at; StoryboardElementState of an event
  (start / running) → after with the condition's delay, (end / complete) →
  after with the event's duration added; other conditions → when:
  ReachPosition and Distance to a position → reaches a circle (a lane
  position with the export's half-window → reaches a lane window);
  RelativeDistance / Distance to an entity → distance (longitudinal in lane
  coordinates → along_lane, else euclidean); TimeHeadway → headway;
  TimeToCollision to an entity → ttc (to a position, an ``arrival`` trigger
  of the acting actor); Speed → speed; RelativeSpeed → speed of the entity
  against the reference's initial speed plus the value (approximated);
  TraveledDistance → reaches the lane window its route puts that far ahead;
  StandStill → standstill; Collision → collision; TrafficSignal → signal.
  ``lessThan``/``lessOrEqual`` → lt, ``greaterThan``/``greaterOrEqual`` →
  gt (``equalTo`` approximated by gt); a falling edge negates the leaf; a
  rising edge is the manifest's first-holds semantics. Condition groups: one
  group → and, single-leaf groups → or, a group holding only a simulation
  time bound → ``by_latest`` (the export's ``fire``/``skip`` patterns come
  back as they went). Act start triggers are added to each of their events'
  conditions; act and event stop triggers are listed as not represented.
* **Decision checkpoint**: ``decision`` (an event name or seconds), else the
  first event of the main maneuver group (the first maneuver group of the
  first act acting on a non-ego actor, else the first); recorded in
  ``realized.decision_event`` / ``realized.t_decision_s`` (when the event
  fires at a known time) for ``simready sim branch``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simready.common import paths
from simready.common.errors import ManifestError
from simready.common.loading import read_bytes
from simready.maps.xosc_import.assembly import Assembly
from simready.maps.xosc_import.context import XoscReport
from simready.maps.xosc_import.document import XoscError, identifier, parse_xml
from simready.maps.xosc_import.entities import Entities
from simready.maps.xosc_import.init_actions import Init
from simready.maps.xosc_import.storyboard import DEFAULT_CLIP_S, Storyboard
from simready.maps.xosc_params import ExpressionError, Parameters, distribution_sets
from simready.scenario.manifest import parse_manifest

if TYPE_CHECKING:
    from simready.scenario.manifest import ScenarioManifest
    from simready.world.template import WorldTemplate


__all__ = ["DEFAULT_CLIP_S", "XoscError", "XoscImport", "XoscReport", "import_distribution", "import_xosc", "is_distribution",
           "manifests_for_sets", "read_distribution"]


@dataclass
class XoscImport:
    """The manifest, its template (and the template's YAML data when the map was imported, not matched), the report."""

    manifest: ScenarioManifest
    template: WorldTemplate
    template_data: dict[str, Any] | None
    report: XoscReport
    parameters: dict[str, str]


class _Importer(Assembly, Storyboard, Init, Entities):
    """One file's import: each OpenSCENARIO part is read by its own class (:mod:`.entities`, :mod:`.init_actions`,
    :mod:`.storyboard` with :mod:`.actions`, :mod:`.triggers`, :mod:`.assembly`) over the shared
    :class:`~.context.Context`; :func:`import_xosc` calls them in order."""


# --- entry points ---------------------------------------------------------------------------------------------


def import_xosc(path: str | Path, map_path: str | Path | None = None, decision: str | None = None,
                parameters: Mapping[str, Any] | None = None, template_dir: str | Path = paths.TEMPLATES_DIR,
                sample_id: str | None = None) -> XoscImport:
    """Import one OpenSCENARIO file (see the module docstring); ``parameters`` override its declarations.

    Raises:
        XoscError: one line naming the file, the element and its line, and the reason.
        MapError: the road network does not import.
    """
    path = Path(path)
    raw = read_bytes(path, XoscError)
    root = parse_xml(raw, str(path))
    if root.find("ParameterValueDistribution") is not None:
        raise XoscError(path, "ParameterValueDistribution",
                        "a parameter distribution file: import it as a batch (import_distribution)")
    params = Parameters(overrides=dict(parameters or {}))
    imp = _Importer(path, root, params, Path(map_path) if map_path else None, Path(template_dir))
    imp.rd.declare(root.find("ParameterDeclarations"))
    unknown = sorted(set(params.overrides) - set(params.scopes[0]))
    if unknown:
        raise XoscError(path, "ParameterDeclarations", f"parameter(s) {', '.join(unknown)} are not declared")
    imp.read_header()
    imp.read_catalog_locations()
    imp.read_entities()
    imp.load_map()
    imp.match_assets()
    imp.read_init()
    imp.read_storyboard()
    if sample_id is not None:
        imp.header["sample_id"] = sample_id
    data = imp.build(decision)
    try:
        manifest = parse_manifest(data, str(path))
    except ManifestError as exc:
        raise XoscError(path, exc.field, f"the imported scenario is not a valid manifest: {exc.reason}") from None
    return XoscImport(manifest, imp.template, imp.template_data, imp.report, imp.param_values())


def is_distribution(path: str | Path) -> bool:
    """Whether ``path`` is a ParameterValueDistribution file (read safely; a malformed file raises XoscError)."""
    path = Path(path)
    return parse_xml(read_bytes(path, XoscError), str(path)).find("ParameterValueDistribution") is not None


def read_distribution(path: str | Path, root: str | None = None) -> tuple[Path, list[dict[str, str]]]:
    """``(scenario file, parameter sets)`` of a ParameterValueDistribution file (the scenario relative to it)."""
    path = Path(path)
    doc = parse_xml(read_bytes(path, XoscError), str(path))
    dist = doc.find("ParameterValueDistribution")
    if dist is None:
        raise XoscError(path, "", "no <ParameterValueDistribution>: not a distribution file")
    sf = dist.find("ScenarioFile")
    if sf is None or not sf.get("filepath"):
        raise XoscError(path, "ParameterValueDistribution", f"no <ScenarioFile filepath> (line {dist.sourceline})")
    try:
        sets = distribution_sets(dist, root)
    except (ExpressionError, ValueError) as exc:
        raise XoscError(path, "ParameterValueDistribution", str(exc)) from None
    return (path.parent / sf.get("filepath", "")).resolve(), sets


def manifests_for_sets(scenario: str | Path, sets: Sequence[Mapping[str, Any]], *, map_path: str | Path | None = None,
                       decision: str | None = None, prefix: str | None = None,
                       template_dir: str | Path = paths.TEMPLATES_DIR) -> list[XoscImport]:
    """One import per parameter set (sample ids ``<prefix>-<k:04d>``): what a program drawing a file's parameters
    calls per proposal — :func:`read_distribution` gives the sets, or a program draws its own from named streams."""
    stem = prefix or identifier(f"xosc-{Path(scenario).stem}")
    return [import_xosc(scenario, map_path, decision, params, template_dir, sample_id=f"{stem}-{k:04d}")
            for k, params in enumerate(sets)]


def import_distribution(path: str | Path, map_path: str | Path | None = None, decision: str | None = None,
                        template_dir: str | Path = paths.TEMPLATES_DIR, root: str | None = None) -> list[XoscImport]:
    """A ParameterValueDistribution file as a batch: one manifest per parameter set (see :func:`read_distribution`)."""
    scenario, sets = read_distribution(path, root)
    return manifests_for_sets(scenario, sets, map_path=map_path, decision=decision, template_dir=template_dir,
                              prefix=identifier(f"xosc-{Path(path).stem}"))
