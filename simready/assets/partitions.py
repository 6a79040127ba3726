"""Partitions, defined once for the whole DAG.

Templates are a static dimension read from ``data/templates/`` when the code
location loads: adding a template file adds a partition.

Sample batches are a dynamic dimension, and Dagster lets anyone add a key to
it: the UI's "Add a partition" dialog takes any text. Dagster 1.13 has no
validation hook on a ``DynamicPartitionsDefinition`` (its GraphQL
``addDynamicPartition`` mutation only refuses a duplicate), so the check sits
in the one place every way of adding a key goes through: the instance.
:class:`SimreadyInstance` (``instance_class`` in ``deploy/**/dagster.yaml``)
refuses a batch key that is not ``b0000`` … ``b9999`` with one line, before
anything is stored — the dialog shows it under "Could not add partition".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import dagster as dg
from dagster._core.instance.ref import InstanceRef

from simready.assets.sqlite_engines import reuse_sqlite_engines
from simready.common import paths
from simready.scenario.suite import SuiteError, batch_index


def template_ids() -> list[str]:
    """Template ids from file names (``<id>.yaml``), sorted; parsing happens in the asset."""
    return sorted(p.stem for p in paths.TEMPLATES_DIR.glob("*.yaml"))


template_partitions = dg.StaticPartitionsDefinition(template_ids())

#: Sample batches are registered at run time (by the main job, the daily
#: schedule, or a user in the UI). One key is one batch of samples per template.
BATCH_PARTITIONS = "sample_batch"
batch_partitions = dg.DynamicPartitionsDefinition(name=BATCH_PARTITIONS)

#: Every sample-level asset shares this: template (static) × batch (dynamic), so a
#: template's change reaches exactly its own batches.
sample_partitions = dg.MultiPartitionsDefinition({"template": template_partitions, "batch": batch_partitions})

#: How a sample-level asset maps onto a template-partitioned parent (and back).
by_template = dg.MultiToSingleDimensionPartitionMapping(partition_dimension_name="template")


def registered_batches(context) -> list[str]:
    """Every batch key registered so far, sorted (asset or check context: both carry the instance)."""
    return sorted(context.instance.get_dynamic_partitions(BATCH_PARTITIONS))


def check_batch_keys(keys: Sequence[str]) -> None:
    """Every key is a batch key (``b0000`` … ``b9999``, :func:`simready.scenario.suite.batch_index`).

    Raises:
        SuiteError: one line naming the partitions and the first bad key; check before adding any.
    """
    for key in keys:
        try:
            batch_index(key)
        except SuiteError as exc:
            raise SuiteError(BATCH_PARTITIONS, "", f"{exc.reason}; nothing was added") from None


class SimreadyInstance(dg.DagsterInstance):
    """Dagster's instance, except that it refuses a sample batch key that is not ``b0000`` … ``b9999``, whoever
    adds it: the UI (GraphQL ``addDynamicPartition``), a sensor's or schedule's request, ``simready run``, code.

    Named by ``instance_class`` in the deployments' ``dagster.yaml``; every process that opens the instance
    (webserver, daemon, run workers, ``simready``) imports this module, which is why it stays light.
    """

    # What Dagster asks of an ``instance_class``: the dagster.yaml keys it adds (none) and its default storages
    # (Dagster's own).
    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        # Its SQLite storages keep one engine per database file (the statements compiled once, not per connection).
        reuse_sqlite_engines()
        super().__init__(*args, **kwargs)

    @classmethod
    def config_schema(cls) -> dict:
        return {}

    @classmethod
    def config_defaults(cls, base_dir: str) -> Mapping:
        return InstanceRef.config_defaults(base_dir)

    def add_dynamic_partitions(self, partitions_def_name: str, partition_keys: Sequence[str]) -> None:
        if partitions_def_name == BATCH_PARTITIONS:
            check_batch_keys(partition_keys)
        super().add_dynamic_partitions(partitions_def_name, partition_keys)
