"""Source conventions (units, up axis, forward axis) and the one conversion into our body frame.

A source file *declares* what it can: glTF 2.0 is metres, y up, front facing
+Z by its specification; COLLADA has ``<unit meter=…>`` and ``<up_axis>``;
USD has ``metersPerUnit`` and ``upAxis``; URDF is metres, z up, x forward
(ROS REP 103). OBJ and STL declare nothing. The user's flags are combined
with the declarations by :func:`resolve`: a flag agreeing with the file is
fine, a flag contradicting it is refused (one line naming both), and a
convention neither declares is refused for units (the failure no image
shows) and defaults for up (z) and forward (x), recorded as ``default``.

Frames: our body frame is x forward, y left, z up, metres (SPEC §2). The up
conversion of a y-up source is ``(x, y, z) → (x, −z, y)`` (SPEC §2's example,
a rotation of +90° about x). ``forward`` names the axis the asset's front
faces *in the z-up frame after that conversion*, one of ``x, -x, y, -y``
(glTF's +Z front becomes −y); a rotation about z then turns it to +x. The
conversion matrix is ``T · R_forward · R_up · S_units`` with every rotation
entry exactly 0 or ±1, so axis changes are exact in floating point.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from simready.common.errors import CatalogError

#: Metres per unit of every unit name a flag or a file may give.
UNITS_M: dict[str, float] = {
    "meter": 1.0,
    "centimeter": 0.01,
    "millimeter": 0.001,
    "inch": 0.0254,
    "foot": 0.3048,
}
UP_AXES = ("z", "y")
FORWARD_AXES = ("x", "-x", "y", "-y")
#: Relative agreement within which a declared metres-per-unit is a named unit (a file's 0.0254 is "inch").
UNIT_MATCH_REL = 1e-6

#: y-up → z-up: (x, y, z) → (x, −z, y).
_R_UP: dict[str, NDArray[np.float64]] = {
    "z": np.eye(3),
    "y": np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]]),
}
#: Rotation about z that turns the named front axis to +x.
_R_FORWARD: dict[str, NDArray[np.float64]] = {
    "x": np.eye(3),
    "-x": np.array([[-1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0]]),
    "y": np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),
    "-y": np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),
}


@dataclass(frozen=True)
class Declared:
    """What a source file states about itself; None where it states nothing.

    meters_per_unit: the file's unit in metres (COLLADA ``<unit meter>``, USD ``metersPerUnit``).
    up: ``"y"`` or ``"z"``. forward: one of :data:`FORWARD_AXES`, after the up conversion.
    by: who declares it, for messages and the record (``"glTF 2.0 specification"``, ``"<unit meter=0.01>"``).
    """

    meters_per_unit: float | None = None
    up: str | None = None
    forward: str | None = None
    by: str = ""


@dataclass(frozen=True)
class Flags:
    """The user's declarations (``--units``, ``--up``, ``--forward``); None where not given."""

    units: str | None = None
    up: str | None = None
    forward: str | None = None


@dataclass(frozen=True)
class Applied:
    """The conventions the import applies, and where each came from (``file``, ``flag``, ``file+flag``, ``default``)."""

    meters_per_unit: float
    units: str | None
    up: str
    forward: str
    units_from: str
    up_from: str
    forward_from: str


def unit_name(meters_per_unit: float) -> str | None:
    """The named unit of a metres-per-unit value, or None when it is none of :data:`UNITS_M`."""
    for name, m in UNITS_M.items():
        if abs(meters_per_unit - m) <= UNIT_MATCH_REL * m:
            return name
    return None


def _combine(declared: object, flag: object, name: str, flag_name: str, by: str, source: Path) -> tuple[object, str]:
    if declared is None:
        return flag, "flag"
    if flag is None or flag == declared:
        return declared, "file" if flag is None else "file+flag"
    raise CatalogError(source, flag_name, f"{flag_name} {flag} contradicts the file: {by} declares {name} {declared}")


def resolve(declared: Declared, flags: Flags, source: str | Path) -> Applied:
    """Combine a file's declarations with the flags; CatalogError (one line) on a contradiction or a missing unit."""
    source = Path(source)
    flag_mpu = UNITS_M[flags.units] if flags.units is not None else None
    if declared.meters_per_unit is not None and flag_mpu is not None:
        if abs(declared.meters_per_unit - flag_mpu) > UNIT_MATCH_REL * flag_mpu:
            named = unit_name(declared.meters_per_unit) or f"{declared.meters_per_unit:g} m per unit"
            raise CatalogError(source, "--units", f"--units {flags.units} contradicts the file: {declared.by} declares {named}")
    mpu = declared.meters_per_unit if declared.meters_per_unit is not None else flag_mpu
    if mpu is None:
        raise CatalogError(source, "--units", "the file declares no units; say which with --units meter|centimeter|millimeter|inch|foot")
    if not (np.isfinite(mpu) and mpu > 0):
        raise CatalogError(source, "units", f"declared metres per unit {mpu!r} is not a positive number")
    units_from = "flag" if declared.meters_per_unit is None else ("file" if flag_mpu is None else "file+flag")
    up, up_from = _combine(declared.up, flags.up, "up axis", "--up", declared.by, source)
    forward, forward_from = _combine(declared.forward, flags.forward, "forward axis", "--forward", declared.by, source)
    if up is None:
        up, up_from = "z", "default"
    if forward is None:
        forward, forward_from = "x", "default"
    return Applied(float(mpu), unit_name(float(mpu)), str(up), str(forward), units_from, up_from, forward_from)


def axes_rotation(up: str, forward: str) -> NDArray[np.float64]:
    """``R_forward · R_up`` (3×3, entries exactly 0 or ±1): source axes → body axes."""
    return _R_FORWARD[forward] @ _R_UP[up]


def rotation(applied: Applied) -> NDArray[np.float64]:
    return axes_rotation(applied.up, applied.forward)


def conversion_matrix(applied: Applied, translation_m: NDArray[np.float64]) -> NDArray[np.float64]:
    """4×4 ``T · R · S``: source coordinates (file units, file axes) → body frame metres."""
    m = np.eye(4)
    m[:3, :3] = rotation(applied) * applied.meters_per_unit
    m[:3, 3] = translation_m
    return m
