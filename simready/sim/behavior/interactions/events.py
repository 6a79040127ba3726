"""The SPEC §7 event record every stage of a tick appends to: its tick, scenario time and type, then its fields."""

from __future__ import annotations

from typing import Any

from simready.sim.core.sight import TickView

#: One event of a rollout's log: ``tick``, ``t`` (scenario time, s), ``type``, then the type's fields.
Event = dict[str, Any]


def event(view: TickView, kind: str, **fields: Any) -> Event:
    """The ``kind`` event at ``view``'s tick with ``fields``."""
    return {"tick": view.tick, "t": round(view.t_s, 9), "type": kind, **fields}
