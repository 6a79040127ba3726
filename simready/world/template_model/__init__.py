"""World template data model (SPEC §5): typed, validated, immutable.

A template B holds what stays structurally true about a place — regions,
lanes, the walkable graph, relations, legal slots, static instances of
certified assets, the ego and its sensor rig — and nothing that a scenario
samples. Everything is in the world frame: metres, x east, y north, z up,
yaw counter-clockwise from +x. Angles are degrees only where a human writes
them (fields named ``*_deg``); code converts at the boundary.

These models check what one field or one object can check on its own
(types, ranges, polygon validity, sensor timing). Cross-references and
geometry between objects are checked by :mod:`simready.world.template_checks`;
loading and hashing live in :mod:`simready.world.template`.

The package: :mod:`.base` (the field types, bounds and the models' shared base), :mod:`.places` (coordinates,
regions, lanes, markings, the walkable graph), :mod:`.relations` (relations and affordances), :mod:`.rig`
(instances, the ego and its sensor rig), :mod:`.signals`, :mod:`.world_template` (the environment controls,
the provenance and the template itself) and :mod:`.derived` (places derived from a template: parking slots,
crossing windows). Every model is imported from here.
"""

from __future__ import annotations

from simready.world.template_model.base import (AssetRef, MIN_REGION_AREA_M2, Name, NonNegReal, Point2, PositiveInt,
                                                PositiveReal, Real, RegionType, TEMPLATE_SCHEMA_VERSION, Text, Vec3,
                                                WALKABLE_REGION_TYPES)
from simready.world.template_model.derived import crossing_s_window, parking_slots
from simready.world.template_model.places import Coordinates, Lane, Marking, Region, WORLD_CONVENTION, Walkable
from simready.world.template_model.relations import (Adjacent, Affordance, Connects, Controls, EgoStart, ParkedOn,
                                                     ParkingAffordance, PedestrianCrossing, PedestrianSpawn, Relation,
                                                     VehicleSpawn)
from simready.world.template_model.rig import (CameraSettings, Ego, Instance, LidarSettings, Mount, Pose, RadarSettings,
                                               Repeat, Sensor, SensorKind, SensorRig)
from simready.world.template_model.signals import PedestrianSignal, Signal, SignalPhase, StopLine
from simready.world.template_model.world_template import (ActorType, EnvironmentControls, Illumination, Provenance,
                                                          Weather, WorldTemplate)

# Bounds and the rolling-shutter readout the sensor models share with the rig (simready.sensors_hw.models).
from simready.world.template_model.base import MAX_IMAGE_PX as MAX_IMAGE_PX, MAX_INT as MAX_INT
from simready.world.template_model.rig import camera_readout_s as camera_readout_s

__all__ = [
    "ActorType",
    "Adjacent",
    "Affordance",
    "AssetRef",
    "CameraSettings",
    "Connects",
    "Controls",
    "Coordinates",
    "Ego",
    "EgoStart",
    "EnvironmentControls",
    "Illumination",
    "Instance",
    "Lane",
    "Marking",
    "LidarSettings",
    "MIN_REGION_AREA_M2",
    "Mount",
    "Name",
    "NonNegReal",
    "ParkedOn",
    "ParkingAffordance",
    "PedestrianCrossing",
    "PedestrianSpawn",
    "Point2",
    "Pose",
    "PositiveInt",
    "PositiveReal",
    "Provenance",
    "RadarSettings",
    "Real",
    "Region",
    "RegionType",
    "Relation",
    "Repeat",
    "Sensor",
    "SensorKind",
    "SensorRig",
    "PedestrianSignal",
    "Signal",
    "SignalPhase",
    "StopLine",
    "TEMPLATE_SCHEMA_VERSION",
    "Text",
    "Vec3",
    "VehicleSpawn",
    "WALKABLE_REGION_TYPES",
    "WORLD_CONVENTION",
    "Walkable",
    "Weather",
    "WorldTemplate",
    "crossing_s_window",
    "parking_slots",
]
