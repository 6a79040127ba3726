"""What the derived street is made of and how it is laid out: the generator's name and version, the catalog assets
and their sizes, spacings, tolerances and bounds (lengths in metres, angles in degrees)."""

from __future__ import annotations


#: What an imported template's ``street:`` section names: the street is derived from the template's own regions,
#: lanes and markings (the map's, through the importer) by this module at load time, not stored instance by instance
#: (docs/scale.md, "Derived streets"). Bump :data:`STREET_VERSION` when a change here would lay another street: a
#: template naming another version is refused rather than silently given a different world.
STREET_GENERATOR = "simready.world.street"
STREET_VERSION = 1
#: Most instances a derived street may have (a bound like the template's MAX_INSTANCES, which counts authored
#: instances only; a 3 MB city map's street has ~163 000).
MAX_DERIVED_INSTANCES = 2_000_000

#: Height of an imported map's sidewalks and kerbs (m) where the map gives none: the shipped templates' kerb.
KERB_HEIGHT_M = 0.15
#: Road and sidewalk strip tiles, widest first: ``(width across the strip m, asset)``; all 2.5 m long.
ROAD_TILES: tuple[tuple[float, str], ...] = (
    (3.0, "asset:road_surface/strip_2p5x3"), (2.0, "asset:road_surface/strip_2p5x2"),
    (1.0, "asset:road_surface/strip_2p5x1"))
SIDEWALK_TILES: tuple[tuple[float, str], ...] = (
    (2.0, "asset:sidewalk/strip_2p5x2"), (1.0, "asset:sidewalk/strip_2p5x1"))
#: Length of every strip tile, kerb piece and solid-line piece (m).
TILE_LENGTH_M = 2.5
#: Longest step between two tiles along a strip (m): 0.5 m less than a tile, so tiles overlap on curves.
TILE_STEP_M = 2.0
KERB_ASSET = "asset:curb/segment_2p5m"
KERB_WIDTH_M = 0.15
SOLID_ASSET = "asset:lane_marking/line_2p5m"
DASH_ASSET = "asset:lane_marking/dash_3m"
#: Broken line: dash and gap lengths (m), the common urban 3 m / 6 m.
DASH_M = 3.0
GAP_M = 6.0
#: Spacing of the points at which a lane border is classified (m).
STATION_M = 1.0
#: Lateral offset of each line of a map's double road mark from the mark's polyline (m).
DOUBLE_OFFSET_M = 0.1
#: Two lane borders closer than this (m) are one shared border.
SHARE_TOL_M = 0.3
#: Widest region that is still read as a strip between two borders (m).
MAX_STRIP_WIDTH_M = 30.0
#: Building blocks: ``(asset, length along the street m, depth m)``.
BUILDINGS: tuple[tuple[str, float, float], ...] = (
    ("asset:building/block_12x10x12", 12.0, 10.0), ("asset:building/block_16x12x15", 16.0, 12.0),
    ("asset:building/block_20x10x9", 20.0, 10.0), ("asset:building/block_24x14x21", 24.0, 14.0))
SETBACK_RANGE_M = (2.0, 5.0)
GAP_RANGE_M = (3.0, 15.0)
#: Nearest a block may come to the street, another block or an existing instance (m).
CLEARANCE_M = 1.5
#: Largest angle (degrees) between a block's front and the outline at either of its ends (a corner is larger).
MAX_TURN_DEG = 12.0
#: How far past a lane's end the road is kept free of blocks (m).
CORRIDOR_M = 60.0
#: How far a rejected block is moved along the outline before the next try (m).
RETRY_STEP_M = 2.0
ZEBRA_ASSET = "asset:crosswalk_marking/bar_3x0p5"
ZEBRA_BAR_M = 0.5
#: Bar plus gap across a crossing (m).
ZEBRA_PITCH_M = 1.0
TERRAIN_ASSET = "asset:terrain/tile_20x20"
TERRAIN_TILE_M = 20.0
#: Open ground reaches this far beyond the street's outline (m): past the deepest block at its largest setback.
TERRAIN_MARGIN_M = 25.0
#: Every instance and region this module adds starts with this (so it never meets an imported name).
STREET_PREFIX = "street_"
#: Decimal places of poses (0.1 mm; yaw in 1e-4 degrees), as the importer rounds.
DECIMALS = 4

ROAD_REGION_TYPES = ("drivable", "parking", "intersection")

#: Radius (m) of the first, bounded search for the surface nearest a point off it (then unbounded).
NEAR_M = 8.0


#: A sidewalk whose map height stands less than this above the road beside it is given :data:`KERB_HEIGHT_M`.
RAISED_MIN_M = 0.02
