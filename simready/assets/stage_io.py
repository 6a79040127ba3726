"""What every stage's assets and checks read and write around their domain call: the partition's batch
folder in the artifact store, and the template and catalog they run on.

A template × batch partition (:data:`~simready.assets.partitions.sample_partitions`) is one folder of the
store (``samples/<template>/<batch>/``): a stage asks for its local folder (:func:`batch_dir`), works in it, and
saves it (:func:`save_batch`). Kept apart from the stage modules, so no stage module is imported by another
for its helpers, and apart from ``partitions.py``, which every process opening the instance imports.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from simready.artifacts.layout import BatchDir
from simready.resources import ArtifactStore, SourceData
from simready.world.template import load_template

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog
    from simready.world.template_model import WorldTemplate


def batch_dir(store: ArtifactStore, template_id: str, batch: str) -> BatchDir:
    """The batch's local folder, which the stages of a template × batch partition read and write
    (:meth:`~simready.store.Store.local_dir`; a stage that wrote in it calls :func:`save_batch`)."""
    return BatchDir(store.local_dir(store.layout.batch(template_id, batch).root))


def save_batch(store: ArtifactStore, template_id: str, batch: str) -> None:
    """A stage has written the batch's folder: its files are the batch's objects (:meth:`~simready.store.Store.save`)."""
    store.save(store.layout.batch(template_id, batch).root)


def local_file(store: ArtifactStore, key: Path) -> Path:
    """The local path of one artifact, for a library that writes or reads files itself (save its folder after)."""
    return store.local_dir(key.parent) / key.name


def batch_of(context) -> tuple[str, str]:
    """(template id, batch key) of a template × batch partition (asset or check context)."""
    key = context.partition_key.keys_by_dimension
    return key["template"], key["batch"]


def batch_samples(store: ArtifactStore, template_id: str, batch: str) -> list[Path]:
    """The batch's local sample folders (those holding a manifest), sorted."""
    return [s.root for s in batch_dir(store, template_id, batch).samples()]


def batch_sample_dirs(context, store: ArtifactStore) -> list[Path]:
    """Sample folders of the partition's batch, sorted."""
    return batch_samples(store, *batch_of(context))


def batch_none_asked(context, store: ArtifactStore) -> bool:
    """The suite asks no sample of this batch (a template file it does not sample): an empty batch is complete."""
    from simready.scenario.batch import read_batch_requested  # definitions stay light: scenario.batch (~0.2 s)

    return read_batch_requested(batch_dir(store, *batch_of(context)).root) == 0


def source_template(source: SourceData, template_id: str) -> WorldTemplate:
    """The template a partition names, read from the source data's templates folder."""
    return load_template(source.template_file(template_id))


def source_catalog(source: SourceData) -> Catalog:
    """The generated catalog the source data names."""
    # Imported when a stage runs: loading the definitions (``simready status``) never reads a catalog.
    from simready.catalog.catalog import load_catalog

    return load_catalog(Path(source.catalog_generated_dir))


class StageInputs(NamedTuple):
    """What a stage runs on: the partition's template and the generated catalog."""

    template: WorldTemplate
    catalog: Catalog


def stage_inputs(source: SourceData, template_id: str) -> StageInputs:
    """The template ``template_id`` and the generated catalog, as every stage after the world's reads them."""
    return StageInputs(source_template(source, template_id), source_catalog(source))
