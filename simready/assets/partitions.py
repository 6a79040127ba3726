"""Partitions, defined once for the whole DAG.

Templates are a static dimension read from ``data/templates/`` when the code
location loads: adding a template file adds a partition.
"""

from __future__ import annotations

import dagster as dg

from simready import paths


def template_ids() -> list[str]:
    """Template ids from file names (``<id>.yaml``), sorted; parsing happens in the asset."""
    return sorted(p.stem for p in paths.TEMPLATES_DIR.glob("*.yaml"))


template_partitions = dg.StaticPartitionsDefinition(template_ids())
