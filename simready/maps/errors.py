"""The one error type of the map boundary."""

from __future__ import annotations

from simready.common.errors import SimreadyError


class MapError(SimreadyError):
    """An OpenDRIVE map that cannot be imported, or a template or manifest that cannot be exported to ASAM formats.

    For an input map the field names the XML element (road id, lane section s,
    lane id, ...) and the reason ends with the element's line.
    """

    kind = "map"
