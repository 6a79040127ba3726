"""The bytes of an imported template: YAML in the section order of the hand-written ones, deterministic.

Keys keep the order the importer builds (id, regions, lanes, … as in
``data/templates``); leaf lists (points, polygons) are written in flow
style so a polygon is one line; floats are already rounded by the importer.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["template_yaml"]


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Safe YAML that never writes anchors or aliases (the template loader refuses them).

    libyaml's emitter when built in: the same bytes as PyYAML's (checked on the
    test maps and a 30 MB city template), 2-3x faster on a city map.
    """

    def ignore_aliases(self, data: Any) -> bool:
        return True


def template_yaml(data: dict[str, Any]) -> str:
    provenance = data.get("provenance", {})
    head = (f"# World template imported from the OpenDRIVE map {provenance.get('source', '?')} "
            f"(sha256 {provenance.get('source_sha256', '?')}).\n"
            "# Written by `simready template import`; re-import rather than edit. World frame = the map's inertial\n"
            "# frame: metres, x east, y north, z up, yaw counter-clockwise from +x.\n")
    return head + yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=None, width=120,
                            allow_unicode=True)
