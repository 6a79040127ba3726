"""The ground of the street: road and sidewalk surfaces tiled, kerbs along the sidewalk borders that face the road,
and open ground (terrain tiles) around everything."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
import shapely
from shapely.geometry import LineString, Point
from shapely.geometry.base import BaseGeometry

from simready.world.street.policy import (KERB_ASSET, KERB_WIDTH_M, TERRAIN_ASSET, TERRAIN_MARGIN_M, TERRAIN_TILE_M,
                                          TILE_LENGTH_M, TILE_STEP_M)
from simready.world.street.tiles import Placed, fill_grid, fill_strip, pieces_along, strip_borders
from simready.world.template_model import Region


def surfaces(regions: Iterable[Region], tiles: Sequence[tuple[float, str]], z: float) -> list[Placed]:
    out: list[Placed] = []
    for region in regions:
        borders = strip_borders(region.polygon)
        out.extend(fill_strip(*borders, tiles, z) if borders else fill_grid(region.shape, tiles, z))
    return out


def kerbs(sidewalks: Iterable[Region], road: BaseGeometry) -> list[Placed]:
    """Kerb pieces along the border of each sidewalk strip that faces the road, inside the sidewalk."""
    out: list[Placed] = []
    if road is None:
        return out
    for region in sidewalks:
        borders = strip_borders(region.polygon)
        if borders is None:
            continue
        lines = [LineString(b) for b in borders]
        gaps = [road.distance(line.interpolate(0.5, normalized=True)) for line in lines]
        side = int(np.argmin(gaps))
        if gaps[side] > 1.0:
            continue
        kerb, other = lines[side], lines[1 - side]
        for p, yaw in pieces_along(kerb, 0.0, kerb.length, TILE_LENGTH_M, TILE_STEP_M):
            q = other.interpolate(other.project(Point(p)))
            inward = np.array([q.x, q.y]) - p
            norm = float(np.hypot(*inward))
            c = p + (inward / norm) * (KERB_WIDTH_M / 2) if norm > 1e-9 else p
            out.append((KERB_ASSET, float(c[0]), float(c[1]), 0.0, yaw))
    return out


def terrain(footprint: BaseGeometry) -> list[Placed]:
    """Open-ground tiles on a world-aligned grid, wherever a tile comes within :data:`TERRAIN_MARGIN_M` of the street."""
    near = footprint.buffer(TERRAIN_MARGIN_M)
    shapely.prepare(near)
    x0, y0, x1, y1 = near.bounds
    out: list[Placed] = []
    for i in range(math.floor(x0 / TERRAIN_TILE_M), math.ceil(x1 / TERRAIN_TILE_M)):
        for j in range(math.floor(y0 / TERRAIN_TILE_M), math.ceil(y1 / TERRAIN_TILE_M)):
            cell = shapely.box(i * TERRAIN_TILE_M, j * TERRAIN_TILE_M, (i + 1) * TERRAIN_TILE_M, (j + 1) * TERRAIN_TILE_M)
            if near.intersects(cell):
                out.append((TERRAIN_ASSET, (i + 0.5) * TERRAIN_TILE_M, (j + 0.5) * TERRAIN_TILE_M, 0.0, 0.0))
    return out
