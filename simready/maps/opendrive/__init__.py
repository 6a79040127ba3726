"""Read an ASAM OpenDRIVE file (1.4–1.8) into plain, immutable records, each with its XML line.

Why lxml and not an OpenDRIVE library: measured here (Python 3.11, 2 cores),
``pyxodr`` 0.1.3 (last release 2023) takes 1.0 s just to import (it pulls
matplotlib, over the whole 1 s budget of importing a junction map), reads no
signals, objects or speed records and keeps no source lines, so its errors
could not say where a map is wrong; ``pyopendrive`` needs Python >= 3.12.
``lxml`` (already a dependency of ``scenariogeneration``, imports in 14 ms)
parses with ``sourceline`` on every element, which is what the one-line
errors need, and the geometry we must write ourselves anyway
(:mod:`simready.maps.refline`).

Units as in OpenDRIVE: metres, radians, speeds converted to m/s. Only what
the importer uses is read; everything else it meets is named in
:attr:`OpenDriveMap.unread` so that the import report lists it.

The package: :mod:`.records` (the immutable records), :mod:`.reader` (the parser, its limits and its errors).
"""

from __future__ import annotations

from simready.maps.opendrive.reader import LIMITS, parse_opendrive, read_opendrive
from simready.maps.opendrive.records import (Connection, Corner, Geometry, Junction, Lane, LaneSection, MapObject,
                                             OpenDriveMap, Poly3, Road, RoadLink, RoadMark, Signal, SignalRef)


__all__ = [
    "Connection", "Corner", "Geometry", "Junction", "LIMITS", "Lane", "LaneSection", "MapObject", "OpenDriveMap",
    "Poly3", "Road", "RoadLink", "RoadMark", "Signal", "SignalRef", "parse_opendrive", "read_opendrive",
]
