"""Validity stage: ``reference_pools`` per template and ``validity_reports`` per batch (SPEC §12)."""
# No `from __future__ import annotations`: Dagster inspects the context annotation at runtime.

import base64
from pathlib import Path

import dagster as dg

from simready.assets.automation import EAGER
from simready.assets.catalog import certified_assets
from simready.assets.metadata import artifact_link, markdown_table
from simready.assets.partitions import by_template, sample_partitions, template_partitions
from simready.assets.scenario import batch_samples, save_batch
from simready.assets.world import world_templates
from simready.catalog.catalog import load_catalog
from simready.hashing import content_hash
from simready.layout import ObservationDir, SampleDir
from simready.measurement.batch import observation_dirs
from simready.resources import ArtifactStore, SourceData
from simready.scenario.manifest import load_manifest
from simready.scenario.suite import load_suite
from simready.validity.batch import report_rows, validate_batch
from simready.validity.reference_pool import build_reference_pool, load_reference_pool
from simready.world.template import load_template

#: validity-3: gate-1.2.0, contact windows from the trace's own collision events (issue 12).
VALIDITY_CODE_VERSION = "validity-3"
#: reference-2: the pool's rollouts are dynamic-v1 with every vehicle force-driven (sim-3).
REFERENCE_CODE_VERSION = "reference-2"


@dg.asset(
    group_name="validity",
    kinds={"pybullet", "parquet"},
    partitions_def=template_partitions,
    deps=[world_templates, certified_assets],
    code_version=REFERENCE_CODE_VERSION,
    automation_condition=EAGER,
    description="The template's realism reference pool: independent draws (root 'reference') of the suite's "
                "programs, rolled out with dynamic-v1, frozen into feature rows for the distribution check.",
)
def reference_pools(context: dg.AssetExecutionContext, store: ArtifactStore, source: SourceData) -> dg.MaterializeResult:
    template_id = context.partition_key
    suite = load_suite(source.suite_file, source.templates_dir)
    intents = {name: suite.reference_per_intent for name in suite.intents_for(template_id)}
    template = load_template(source.template_file(template_id))
    catalog = load_catalog(Path(source.catalog_generated_dir))
    folder = store.layout.reference_dir(template_id)
    record = build_reference_pool(template, catalog, intents, store.local_dir(folder))
    store.save(folder)
    return dg.MaterializeResult(
        data_version=dg.DataVersion(record["version"]),
        metadata={"pool_samples": record["pool_samples"], "rows": record["rows"],
                  "intents": dg.MetadataValue.json(record["intents"]),
                  "samples": markdown_table(record["samples"], ["sample", "intent", "verdict"]),
                  "pool": artifact_link(store, store.layout.reference(template_id).record)},
    )


def _reference_profile(store: ArtifactStore, template_id: str):
    record = store.layout.reference(template_id).record
    if not store.exists(record):
        raise dg.Failure(f"{store.url(record)}: missing; materialize reference_pools[{template_id}] first", allow_retries=False)
    return load_reference_pool(store.local_dir(store.layout.reference_dir(template_id)))


@dg.asset(
    group_name="validity",
    kinds={"python"},
    partitions_def=sample_partitions,
    deps=["action_branches", "sensor_observations", dg.AssetDep(reference_pools, partition_mapping=by_template)],
    code_version=VALIDITY_CODE_VERSION,
    automation_condition=EAGER,
    description="Counterfactual validity gate (SPEC §12) on every sample and on each branch as a transformation of it.",
)
def validity_reports(context: dg.AssetExecutionContext, store: ArtifactStore) -> dg.MaterializeResult:
    key = context.partition_key.keys_by_dimension
    dirs = batch_samples(store, key["template"], key["batch"])
    records = validate_batch(dirs, _reference_profile(store, key["template"]))
    save_batch(store, key["template"], key["batch"])
    rows = report_rows(records)
    accepted = sum(1 for r in rows if r["accepted"])
    review = reviewer_markdown(dirs, records)
    return dg.MaterializeResult(
        data_version=dg.DataVersion(content_hash(records)),
        metadata={
            "reports": len(rows),
            "accepted": accepted,
            "rejected": len(rows) - accepted,
            "with_sensor_evidence": sum(1 for r in records if r["sensor_evidence"]),
            "gate": markdown_table(rows, ["sample", "variant", "accepted", "validity", "fidelity", "realism", "weight", "reasons"]),
            "review": dg.MetadataValue.md(review),
        },
    )


def reviewer_markdown(dirs: list[Path], records: list[dict]) -> str:
    """Per sample: the top-down plot with both branches, the check table, weight, split, cell, links."""
    parts = []
    for d, rec in zip(dirs, records):
        sample = SampleDir(d)
        m = load_manifest(sample.manifest)
        base = rec["base"]
        lines = [f"### {m.sample_id} — {m.intent}",
                 f"split **{m.split}** · cell `{m.coverage_cell.id}` · accepted **{base['accepted']}** · "
                 f"validity {base['validity']:.2f} · weight {base['weight']:.2f}{' (capped)' if base['capped'] else ''}"]
        if sample.rollout_plot.exists():
            data = base64.b64encode(sample.rollout_plot.read_bytes()).decode("ascii")
            lines.append(f"![{m.sample_id}](data:image/png;base64,{data})")
        lines.append("| check | passed | score |\n|---|---|---|")
        lines += [f"| {c['check']} | {c['passed']} | {c['score']:.2f} |" for c in base["checks"]]
        for label, rep in sorted(rec["branches"].items()):
            lines.append(f"branch **{label}**: accepted {rep['accepted']}, validity {rep['validity']:.2f}, weight {rep['weight']:.2f}")
        for name, obs in observation_dirs(d).items():
            videos = ", ".join(f"`{v}`" for v in sorted(str(p) for p in ObservationDir(obs).videos()))
            pictures = ", ".join(f"`{p}`" for p in ObservationDir(obs).review_pictures())
            lines.append(f"observations ({name.removeprefix(d.name).strip('/') or 'base'}) `{obs}` · "
                         f"videos {videos or '(none)'} · review {pictures or '(none)'}")
        parts.append("\n\n".join(lines))
    return "\n\n---\n\n".join(parts) or "no samples"
