"""What perception truth holds, for reviewers: tracks and observations per class over many observation folders.

A *track* is one life of one entity in one camera (``track_id`` = ``<entity>#<life>``, SPEC §11); an
*observation* is one row of ``tracks.parquet`` (a frame × an entity present in the world then), *visible*
when the camera saw at least one of its pixels.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

from simready.artifacts.layout import TRUTH_TABLES, ObservationDir
from simready.artifacts.records import Legend

#: The columns of the preview: who, when, what the camera saw and where.
PREVIEW_COLUMNS = ("track_id", "t_s", "status", "visible_pixels", "box_u_min", "box_v_min", "box_u_max", "box_v_max",
                   "min_depth_m")


def tracks_files(folders: Iterable[ObservationDir]) -> list[tuple[ObservationDir, Any]]:
    """Every camera's ``tracks.parquet`` of the folders, as ``(folder, path)`` in folder then camera order."""
    name = TRUTH_TABLES["truth.tracks"]
    return [(obs, path) for obs in folders for path in sorted(obs.truth.glob(f"*/{name}"))]


def track_counts(folders: Iterable[ObservationDir]) -> list[dict[str, Any]]:
    """One row per semantic class (by name, from each folder's legend), sorted by class: ``tracks``,
    ``entities`` (distinct per folder), ``observations`` and ``visible`` observations, over every camera."""
    per: dict[str, dict[str, Any]] = {}
    for obs, path in tracks_files(folders):
        names = {e.class_id: e.semantic_class or f"class {e.class_id}" for e in Legend.read(obs.legend).entries}
        table = pq.read_table(path, columns=["track_id", "entity", "class_id", "visible"])
        for class_id in sorted(set(table.column("class_id").to_pylist())):
            rows = table.filter(pc.equal(table.column("class_id"), class_id))
            row = per.setdefault(names.get(class_id, f"class {class_id}"),
                                 {"tracks": set(), "entities": set(), "observations": 0, "visible": 0})
            row["tracks"].update((str(path), t) for t in rows.column("track_id").to_pylist())
            row["entities"].update((str(obs.root), e) for e in rows.column("entity").to_pylist())
            row["observations"] += rows.num_rows
            row["visible"] += int(pc.sum(rows.column("visible")).as_py() or 0)
    return [{"class": name, "tracks": len(r["tracks"]), "entities": len(r["entities"]),
             "observations": r["observations"], "visible": r["visible"]} for name, r in sorted(per.items())]


def tracks_preview(path: str | Path, rows: int = 12) -> list[dict[str, Any]]:
    """The first ``rows`` observations of one ``tracks.parquet``, in :data:`PREVIEW_COLUMNS`."""
    table = pq.read_table(path, columns=list(PREVIEW_COLUMNS)).slice(0, rows)
    return table.to_pylist()
