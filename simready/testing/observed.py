"""An observed sample folder of the synthetic street, as the pipeline lays one out (manifest, trace, observations).

For the exports' tests and benchmark: real observations (:func:`simready.measurement.observe.observe` on the
street of :mod:`simready.testing.street`), a SPEC §7 trace whose header carries each actor's size and kind, and
a valid manifest whose ego carries the rig.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from simready.artifacts.layout import SampleDir
from simready.measurement.observe import observe
from simready.measurement.options import ObserveOptions
from simready.sim.storage.trace import Trace, write_trace
from simready.testing.street import ACTORS, street_sample
from simready.testing.synthetic import street_manifest_dict

SAMPLE = "bench-street"


def observed_street_sample(root: Path, duration_s: float, options: ObserveOptions,
                           events: Sequence[dict[str, Any]] = (), **rig_kw: Any) -> SampleDir:
    """``root/bench-street/``: the street observed over [0, duration_s] with ``options`` and the rig's ``rig_kw``
    (as :func:`simready.testing.street.street_rig_data`); the trace carries ``events``."""
    built, rig, trace = street_sample(duration_s, **rig_kw)
    sample = SampleDir(Path(root) / SAMPLE)
    sample.root.mkdir(parents=True)
    observe(built, rig, trace, sample.observations.root, options=options)
    header = {**trace.header, "actor_dims": {a[0]: list(a[4]) for a in ACTORS},
              "actor_kinds": {a[0]: "pedestrian" if a[6] == "pedestrian" else "vehicle" for a in ACTORS}}
    write_trace(Trace(header, list(events), {}, pa.Table.from_pandas(trace.ticks, preserve_index=False)), sample.trace)
    sample.manifest.write_text(json.dumps(street_manifest_dict(SAMPLE)))
    return sample
