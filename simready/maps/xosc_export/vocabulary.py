"""The OpenSCENARIO words the export writes: the version and header date, each verb's action, and the names of
lights, doors, dynamics shapes and dimensions, rules and times of day."""

from __future__ import annotations

import datetime

from scenariogeneration import xosc


#: OpenSCENARIO minor version written: 1.3, because the 1.2 XML schema makes a LightStateAction need a user-defined
#: light *and* a vehicle light (a sequence where 1.3 has a choice), so no 1.2 light action validates.
OSC_MINOR_VERSION = 3
#: The file header's date: fixed, so the same manifest gives the same bytes (the date means nothing here).
HEADER_DATE = datetime.datetime(2000, 1, 1, 0, 0, 0)
#: Each verb and the OpenSCENARIO action it becomes (None: not expressible).
VERBS: dict[str, str | None] = {
    "speed": "AbsoluteSpeedAction / RelativeSpeedAction",
    "gap": "LongitudinalDistanceAction",
    "change_lane": "AbsoluteLaneOffsetAction (the centre spacing to the target lane)",
    "lane_offset": "AbsoluteLaneOffsetAction",
    "route": "AssignRouteAction",
    "exist": "VisibilityAction",
    "set": "LightStateAction (lights.*), AnimationAction (doors.* but doors.sliding), EnvironmentAction "
           "(env.road_friction, env.rain_rate_mmph)",
}
LIGHTS = {"lights.brake": "brakeLights", "lights.hazard": "warningLights", "lights.indicator_left": "indicatorLeft",
           "lights.indicator_right": "indicatorRight"}
DOORS = {"doors.front_left": "doorFrontLeft", "doors.front_right": "doorFrontRight",
          "doors.rear_left": "doorRearLeft", "doors.rear_right": "doorRearRight", "doors.tailgate": "trunk"}
#: How long a door takes to open or close (s): the manifest sets the state, not the motion.
DOOR_MOTION_S = 1.0
#: Peak lateral acceleration written for a step lane offset (m/s²): as good as immediate.
STEP_LATERAL_ACC = 100.0
SHAPES = {"step": xosc.DynamicsShapes.step, "linear": xosc.DynamicsShapes.linear,
           "sinusoidal": xosc.DynamicsShapes.sinusoidal, "cubic": xosc.DynamicsShapes.cubic}
DIMENSIONS = {"rate": xosc.DynamicsDimension.rate, "time": xosc.DynamicsDimension.time,
               "distance": xosc.DynamicsDimension.distance}
RULES = {"lt": xosc.Rule.lessThan, "gt": xosc.Rule.greaterThan}
INVERTED_RULES = {"lt": xosc.Rule.greaterOrEqual, "gt": xosc.Rule.lessOrEqual}
TIME_OF_DAY = {"day": (12, 0), "dusk": (19, 30), "night": (23, 0)}
