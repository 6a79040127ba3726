"""The certification's tolerances and fixed values, named and versioned with :data:`CERTIFICATION_VERSION`
(metres, kilograms, relative errors)."""

from __future__ import annotations


CERTIFICATION_VERSION = "1.0.0"
ALLOWED_UNITS = "meter"
DIM_ABS_TOL_M = 0.01
DIM_REL_TOL = 0.01
COLLIDER_FACE_TOL_M = 0.05
COLLIDER_VOLUME_REL_TOL = 0.05
INERTIA_REL_TOL = 0.02
COM_TOL_M = 0.01
#: Agreement required between entry.json summaries and the files they summarize.
SUMMARY_REL_TOL = 1e-6
#: The recorded conversion's linear part must be a rotation times the recorded unit, to this precision.
CONVERSION_TOL = 1e-9
AXES = ("x", "y", "z")
#: Appended to a refusal that ``catalog import --repair`` would repair (issue 30).
REPAIR_HINT = "rerun the import with --repair to {}"
