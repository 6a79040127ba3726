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

#: Sample batches are registered at run time (by the main job, the daily
#: schedule, or a user in the UI). One key is one batch of samples per template.
batch_partitions = dg.DynamicPartitionsDefinition(name="sample_batch")

#: Every sample-level asset shares this: template (static) × batch (dynamic), so a
#: template's change reaches exactly its own batches.
sample_partitions = dg.MultiPartitionsDefinition({"template": template_partitions, "batch": batch_partitions})

#: How a sample-level asset maps onto a template-partitioned parent (and back).
by_template = dg.MultiToSingleDimensionPartitionMapping(partition_dimension_name="template")


def registered_batches(context) -> list[str]:
    """Every batch key registered so far, sorted (asset or check context: both carry the instance)."""
    return sorted(context.instance.get_dynamic_partitions(batch_partitions.name))
