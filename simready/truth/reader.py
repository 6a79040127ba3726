"""Reading an observation folder's perception truth (SPEC §11) the way its consumers want it.

The files store what cannot be derived, at the precision declared in
:mod:`simready.truth.precision` (each table's Parquet metadata repeats it
under ``precision``); what derives from stored columns and the camera model
is computed here on reading instead of stored:

* ``flow_du_distorted_px``, ``flow_dv_distorted_px`` of a correspondence
  (``forward`` / ``backward``): the RGB image's flow through the lens, from the
  stored pinhole flow and the camera's lens as ``render.json`` records it
  (:func:`simready.truth.flow.distorted_flow`); equal to the pinhole flow with
  the lens off. float64; within the pinhole flow's bound
  (:data:`~simready.truth.precision.FLOW_STEP_PX` / 2) times the lens's local
  magnification.

Files are found by their SPEC §10 names (:class:`simready.artifacts.layout.ObservationDir`);
the camera model from ``render.json``'s rig, overrides applied.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from simready.common.errors import SimreadyError
from simready.artifacts.layout import TRUTH_TABLES, ObservationDir
from simready.artifacts.records import Render
from simready.sensors_hw.models import CameraModel, Rig
from simready.truth.flow import dense, distorted_flow

#: File kinds of the per-frame truth tables, by the pass name their files carry (``truth.<pass>``).
FRAME_KINDS = {"surface": "truth.surface", "motion": "truth.motion_field", "forward": "truth.forward",
               "backward": "truth.backward"}
#: Columns a reader computes instead of reading, by file kind: name -> the stored columns it derives from.
DERIVED_COLUMNS: dict[str, dict[str, tuple[str, ...]]] = {
    kind: {"flow_du_distorted_px": ("pixel", "flow_du_px", "flow_dv_px"),
           "flow_dv_distorted_px": ("pixel", "flow_du_px", "flow_dv_px")}
    for kind in ("forward", "backward")
}
#: The Parquet key-value metadata key of every truth table's facts (camera, ticks, times, precision, ...).
METADATA_KEY = b"simready.truth"


class TruthReadError(SimreadyError):
    kind = "truth"


class TruthReader:
    """One observation folder's truth tables, with the derived columns (:data:`DERIVED_COLUMNS`) computed."""

    def __init__(self, folder: str | Path | ObservationDir) -> None:
        self.obs = folder if isinstance(folder, ObservationDir) else ObservationDir(Path(folder))
        if not self.obs.render.is_file():
            raise TruthReadError(self.obs.render, "", "missing; the truth reader needs the rig it records")
        self.rig = Rig.from_settings(Render.read(self.obs.render).rig, source=str(self.obs.render))

    def camera(self, name: str) -> CameraModel:
        model = self.rig.sensors.get(name)
        if not isinstance(model, CameraModel):
            raise TruthReadError(self.obs.render, f"rig.{name}", "is not a camera of the rig")
        return model

    def path(self, camera: str, tick: int, kind: str) -> Path:
        if kind not in FRAME_KINDS:
            raise ValueError(f"truth file kind must be one of {', '.join(FRAME_KINDS)}, got {kind!r}")
        return self.obs.file(ObservationDir.frame_name(camera, tick, FRAME_KINDS[kind]))

    def table(self, camera: str, tick: int, kind: str, columns: Sequence[str] | None = None) -> pa.Table:
        """Frame ``tick``'s table of ``kind`` (:data:`FRAME_KINDS`): the stored columns, then the derived ones
        (all when ``columns`` is None; else those named, in that order)."""
        derived = DERIVED_COLUMNS.get(kind, {})
        wanted = None if columns is None else list(columns)
        # The stored columns to read: the named ones and those the named derived ones derive from.
        stored = None if wanted is None else sorted({s for c in wanted for s in derived.get(c, (c,))})
        path = self.path(camera, tick, kind)
        if not path.is_file():
            raise TruthReadError(path, "", "missing")
        schema = pq.read_schema(path)
        absent = [c for c in (stored or ()) if c not in schema.names]
        if absent:
            raise TruthReadError(path, absent[0], "no such column (stored or derived)")
        table = pq.read_table(path, columns=stored)
        if derived and (wanted is None or any(c in derived for c in wanted)):
            flow = distorted_flow(self.camera(camera), table.column("pixel").to_numpy(),
                                  table.column("flow_du_px").to_numpy(), table.column("flow_dv_px").to_numpy())
            table = table.append_column("flow_du_distorted_px", pa.array(flow[:, 0]))
            table = table.append_column("flow_dv_distorted_px", pa.array(flow[:, 1]))
        return table if wanted is None else table.select(wanted)

    def metadata(self, camera: str, tick: int, kind: str) -> dict[str, Any]:
        """The facts a frame's table records beside its rows (camera, ticks, times, ``precision``, ...)."""
        meta = pq.read_schema(self.path(camera, tick, kind)).metadata or {}
        return json.loads(meta.get(METADATA_KEY, b"{}"))

    def dense(self, camera: str, tick: int, kind: str, column: str, fill: float = np.nan) -> np.ndarray:
        """One column of a frame's table as an (H, W) image (``fill`` where the frame saw nothing)."""
        model = self.camera(camera)
        table = self.table(camera, tick, kind, ("pixel", column))
        return dense(table.column("pixel").to_numpy(), table.column(column).to_numpy(), model.height_px,
                     model.width_px, fill)

    def clip_table(self, camera: str, pass_name: str) -> pa.Table:
        """A camera's whole-clip table: ``truth.tracks`` or ``truth.track_events``."""
        if pass_name not in TRUTH_TABLES:
            raise ValueError(f"whole-clip truth table must be one of {', '.join(TRUTH_TABLES)}, got {pass_name!r}")
        return pq.read_table(self.obs.file(ObservationDir.truth_table_name(camera, pass_name)))
