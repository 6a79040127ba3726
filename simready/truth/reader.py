"""Reading an observation folder's perception truth (SPEC §11) the way its consumers want it.

The files store what cannot be derived, at the precision declared in
:mod:`simready.truth.precision` (each table's Parquet metadata repeats it
under ``precision``), in the layout :mod:`simready.truth.stored` declares
(``pixel`` once per tick, in the surface table; a correspondence's booleans
one ``flags`` bit field; the declared-step columns as int32 step differences),
which the reader undoes: every table reads with ``pixel``, the named booleans
and the float32 values as before. What derives from stored columns
and the camera model is computed here on reading instead of stored:

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
from simready.truth.stored import FLAG_BITS, FLAGS, BODY, BODY_COLUMNS, PIXEL_FROM, expanded

#: File kinds of the per-frame truth tables, by the pass name their files carry (``truth.<pass>``).
FRAME_KINDS = {"surface": "truth.surface", "motion": "truth.motion_field", "forward": "truth.forward",
               "backward": "truth.backward"}
#: What the distorted flow derives from (``render.json:rig lens``: the camera's lens as ``render.json`` records it).
_DISTORTED_FROM = ("pixel", "flow_du_px", "flow_dv_px", "render.json:rig lens")
#: Columns a reader computes instead of reading, by file kind: name -> what it derives from (a column of the file,
#: ``surface:pixel`` the same tick's surface table's, ``metadata:bodies`` the file's legend of bodies, or
#: ``render.json:rig lens``), as :mod:`simready.truth.stored` lays them out (``pixel`` first, the strings where
#: ``body`` is stored, the flags where ``flags`` is, the distorted flow last).
DERIVED_COLUMNS: dict[str, dict[str, tuple[str, ...]]] = {
    "surface": {name: (BODY, "metadata:bodies") for name in BODY_COLUMNS},
    "motion": {"pixel": ("surface:pixel",)},
    **{kind: {"pixel": ("surface:pixel",), **{name: (FLAGS,) for name in FLAG_BITS[kind]},
              "flow_du_distorted_px": _DISTORTED_FROM, "flow_dv_distorted_px": _DISTORTED_FROM}
       for kind in ("forward", "backward")},
}
#: The derived columns computed from the others on reading (after the stored ones, in this order).
_DISTORTED = ("flow_du_distorted_px", "flow_dv_distorted_px")
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
        """Frame ``tick``'s table of ``kind`` (:data:`FRAME_KINDS`) with every column it had before storing
        (:mod:`simready.truth.stored`): ``pixel`` (the surface table's where the file leaves it out), the stored
        columns with a correspondence's ``flags`` as its named booleans and a surface table's ``body`` as its
        strings, then the distorted flow (all when ``columns`` is None; else those named, in that order)."""
        path = self.path(camera, tick, kind)
        if not path.is_file():
            raise TruthReadError(path, "", "missing")
        schema = pq.read_schema(path)
        names = schema.names
        # The columns put back from one stored column each: a correspondence's flags, the surface table's strings.
        packed = {name: FLAGS for name in (FLAG_BITS.get(kind, ()) if FLAGS in names else ())}
        if kind == "surface" and BODY in names:
            packed |= {name: BODY for name in BODY_COLUMNS}
        pixel_elsewhere = "pixel" not in names and kind in PIXEL_FROM
        distorted = _DISTORTED if kind in ("forward", "backward") else ()
        wanted = None if columns is None else list(columns)
        # The file's columns to read: the named ones, the stored column of named put-back ones, what the distorted
        # flow needs.
        if wanted is None:
            read: list[str] | None = None
        else:
            need = set()
            for c in wanted:
                if c in names and c not in packed.values():  # flags and body read as what they stand for
                    need.add(c)
                elif c in packed:
                    need.add(packed[c])
                elif c in distorted:
                    need |= {"flow_du_px", "flow_dv_px"} | ({"pixel"} if not pixel_elsewhere else set())
                elif not (c == "pixel" and pixel_elsewhere):
                    raise TruthReadError(path, c, "no such column (stored or derived)")
            read = [c for c in names if c in need]
        table = pq.read_table(path, columns=read)
        pixel = None
        if pixel_elsewhere and (wanted is None or "pixel" in wanted or any(c in distorted for c in wanted)):
            pixel = self._pixel(camera, tick, PIXEL_FROM[kind], path, table.num_rows)
        meta = json.loads((schema.metadata or {}).get(METADATA_KEY, b"{}"))
        bodies = None
        if BODY in table.column_names and BODY in packed.values():
            bodies = meta.get("bodies")
            if bodies is None:
                raise TruthReadError(path, "bodies", "missing from the metadata; the body column needs its legend")
        # the steps the file's step differences were taken at, as its metadata states them
        steps = {name: float(p["step"]) for name, p in meta.get("precision", {}).items()} or None
        try:
            table = expanded(kind, table, pixel, bodies, steps)
        except ValueError as e:
            raise TruthReadError(path, "", str(e)) from None
        if distorted and (wanted is None or any(c in distorted for c in wanted)):
            flow = distorted_flow(self.camera(camera), table.column("pixel").to_numpy(),
                                  table.column("flow_du_px").to_numpy(), table.column("flow_dv_px").to_numpy())
            table = table.append_column(distorted[0], pa.array(flow[:, 0]))
            table = table.append_column(distorted[1], pa.array(flow[:, 1]))
        return table if wanted is None else table.select(wanted)

    def _pixel(self, camera: str, tick: int, kind: str, path: Path, rows: int) -> pa.ChunkedArray:
        """The ``pixel`` column a table at ``path`` shares with the same tick's table of ``kind`` (its rows)."""
        source = self.path(camera, tick, kind)
        if not source.is_file():
            raise TruthReadError(source, "", f"missing; {path.name} takes its pixel column from it")
        pixel = pq.read_table(source, columns=["pixel"]).column("pixel")
        if len(pixel) != rows:
            raise TruthReadError(path, "", f"has {rows} rows, {source.name} {len(pixel)}: not the same tick's tables")
        return pixel

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
