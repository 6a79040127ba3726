"""The compiled scene: a manifest resolved against its template and catalog, validated before any stepping.

:func:`build_scene` turns (manifest θ, template B, catalog) into fixed
arrays the controllers read every tick — actor constants in sorted actor-id
order, every actor's initial path and position on it, signal states per
tick, static sight-line occluders, a ground-height raster — and raises one
:class:`~simready.common.errors.ManifestError` (field path and reason) for any
input the engine cannot honour: an unknown lane, walkable node, asset or
conflict point, a route whose lanes do not follow each other, a verb a
parked actor cannot perform, or a trigger condition that can never be
evaluated (``along_lane`` distance or headway of an actor off the lane
graph). Nothing here changes during a rollout.

Frames and units: world frame (x east, y north, z up), metres, seconds,
radians. Actor order is sorted by id everywhere (SPEC §7 determinism).

The package, one module per part: :mod:`.model` (the :class:`Scene` and its paths), :mod:`.build`
(:func:`build_scene`: initial paths, sight-line edges, the compile), :mod:`.validation` (the manifest's
references and triggers checked), :mod:`.actors` (the actor table), :mod:`.signals` (signal states per tick),
:mod:`.ground` (the ground height raster) and :mod:`.provenance` (what the ``config_hash`` covers). This
``__init__`` is the package's public face.
"""

from __future__ import annotations

from simready.sim.core.scene.actors import ActorScalars, ActorTable
from simready.sim.core.scene.build import MAX_ROUTE_OFFSET_M, ROAD_REGION_TYPES, build_scene
from simready.sim.core.scene.ground import GROUND_CLASSES, GROUND_RASTER_M, GroundModel
from simready.sim.core.scene.model import Scene, at_tick, expand_walk, lane_window_contains
from simready.sim.core.scene.provenance import physics_config, substeps_per_tick
from simready.sim.core.scene.signals import SIGNAL_CODES, SIGNAL_NAMES, SignalTable

__all__ = ["GROUND_CLASSES", "GROUND_RASTER_M", "MAX_ROUTE_OFFSET_M", "ROAD_REGION_TYPES", "SIGNAL_CODES", "SIGNAL_NAMES",
           "ActorScalars", "ActorTable", "GroundModel", "Scene", "SignalTable", "at_tick", "build_scene", "expand_walk",
           "lane_window_contains", "physics_config", "substeps_per_tick"]
