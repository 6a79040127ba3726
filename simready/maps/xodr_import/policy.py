"""Every tolerance, bound and lane-type table of the OpenDRIVE import, in one place (lengths in metres)."""

from __future__ import annotations


#: Largest distance between samples along a road (m).
MAX_STEP_M = 2.0
#: Smallest distance between samples along a road, however tight the curve (m).
MIN_STEP_M = 0.01
#: A plan-view record curving tighter than this over more than a quarter turn is not a road (1/m; radius 5 cm).
MAX_CURVATURE = 20.0
#: Most pieces a folded outline may cross itself into (noded) for a repair to be tried (real maps: up to ~60).
MAX_FOLD_PIECES = 200
#: Most vertices of a lane outline that a repair (``make_valid``) is tried on; a larger folded outline is left out.
MAX_REPAIR_VERTICES = 20_000
#: Most samples along one road (a bound on work and memory, issue 27): 100 km at 2 m is 50 000.
MAX_SAMPLES_PER_ROAD = 200_000
#: Most lane samples (lanes × samples) in one map: about 160 MB of border arrays.
MAX_LANE_SAMPLES = 5_000_000
#: A width polynomial dipping this little below zero is rounding (CARLA maps hold -0.006 m), clamped to 0 (m).
NEGATIVE_WIDTH_TOLERANCE_M = 0.01
#: A repaired outline must keep at least this share of the lane's area (width × length), else the lane is left out.
REPAIR_MIN_AREA_SHARE = 0.5
#: A lane's end and its successor's start closer than this are joined (m), as :mod:`simready.world.lanes` derives.
ENDPOINT_TOLERANCE_M = 0.5
#: Road s values closer than this are sampled once (m).
SAMPLE_MERGE_M = 1e-4
#: Largest gap between a chord and the arc it replaces (m).
CHORD_TOLERANCE_M = 0.002
#: A junction lane turning by more than this is a ``turn`` lane (deg).
TURN_DEG = 30.0
#: Output coordinates are rounded to this many decimals (0.1 mm).
DECIMALS = 4
#: Walkable nodes along a sidewalk are at most this far apart (m).
WALK_NODE_SPACING_M = 10.0
#: A crosswalk joins a sidewalk it comes this close to (m); the template checks ``connects`` at 0.2 m.
CROSSWALK_TOUCH_M = 0.15
#: Outline pieces a repaired fold may drop, in all (m²).
FOLD_TOLERANCE_M2 = 0.01
#: A lane centreline may leave its (repaired) region by this much, below the template's 0.5 m (m).
CENTRE_IN_REGION_M = 0.45
#: A stop line stays this far before its lane's end (m).
STOP_LINE_END_MARGIN_M = 0.01
#: Sidewalk chains whose ends are this close are joined (m).
SIDEWALK_JOIN_M = 0.5

DRIVING_TYPES = ("driving", "entry", "exit", "onRamp", "offRamp", "connectingRamp")
#: OpenDRIVE 1.8 renamed ``sidewalk`` to ``walking``.
SIDEWALK_TYPES = ("sidewalk", "walking")
#: Lane types that become a region without a lane, and the region type (a ``biking`` lane outside a junction is
#: a ``biking`` template lane in its drivable region; inside one, a region alone).
REGION_ONLY_TYPES = {"shoulder": "drivable", "biking": "drivable", "border": "median", "median": "median",
                     "curb": "median"}

#: Dynamic signals of these types (the German catalogue's pedestrian light, and pedestrian and bicycle light) are
#: pedestrian lights: imported over the crosswalks near them, not as traffic lights.
PEDESTRIAN_LIGHT_TYPES = ("1000002", "1000007")
#: A pedestrian light governs the crosswalks of its road whose object is this close to it along s (m).
PEDESTRIAN_LIGHT_REACH_M = 15.0

#: A centreline loop cut out by a repair may hold at most this share of the lane's length.
MAX_LOOP_SHARE = 0.2


#: A lane narrower than this is closed at that sample (m).
ZERO_WIDTH_M = 1e-3


#: Road mark types that may be crossed (SPEC §18: broken or none = allowed); any other single line may not.
CROSSABLE_MARKS = ("broken", "none", "", "botts dots", "broken broken")
