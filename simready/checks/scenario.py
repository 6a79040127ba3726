"""Asset checks for the scenario stage."""

import dagster as dg
import pyarrow.parquet as pq

from simready.assets.partitions import sample_partitions, template_partitions
from simready.assets.scenario import rejection_log, scenario_manifests
from simready.assets.stage_io import batch_dir, batch_of, source_template, stage_inputs
from simready.checks.findings import findings
from simready.common.errors import ManifestError
from simready.resources import ArtifactStore, SourceData
from simready.scenario.manifest import load_manifest
from simready.scenario.suite import load_suite
from simready.world.template import template_hash


@dg.asset_check(
    asset=scenario_manifests,
    partitions_def=sample_partitions,
    blocking=True,
    description="Every manifest re-parses against the schema and pins the current template hash.",
)
def manifests_schema_valid(
    context: dg.AssetCheckExecutionContext, store: ArtifactStore, source: SourceData
) -> dg.AssetCheckResult:
    from simready.scenario.batch import read_batch_manifest_paths  # definitions stay light: scenario.batch (~0.2 s)

    template_id, batch = batch_of(context)
    current = template_hash(source_template(source, template_id))
    problems = []
    files = read_batch_manifest_paths(batch_dir(store, template_id, batch).root)
    for path in files:
        try:
            m = load_manifest(path)
        except ManifestError as exc:
            problems.append(exc.one_line())
            continue
        if m.template_hash != current:
            problems.append(f"{path}: template_hash: {m.template_hash} is not the current {current}")
    return dg.AssetCheckResult(
        passed=not problems,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={"manifests": len(files), "problems": findings(problems[:20], column="problem")},
    )


@dg.asset_check(
    asset=rejection_log,
    partitions_def=template_partitions,
    description="Every rejection row names its stage, reason and detail.",
)
def rejection_reasons_nonempty(context: dg.AssetCheckExecutionContext, store: ArtifactStore) -> dg.AssetCheckResult:
    with store.open(store.layout.rejection_log(context.partition_key)) as f:
        table = pq.read_table(f).to_pylist()
    empty = [r for r in table if not (r["stage"] and r["reason"] and r["detail"])]
    return dg.AssetCheckResult(
        passed=not empty,
        metadata={"rows": len(table), "empty": len(empty), "examples": findings(empty[:5])},
    )


@dg.asset_check(
    asset=scenario_manifests,
    partitions_def=sample_partitions,
    blocking=True,
    description="No accepted manifest violates a ladder stage: each replays from its stream root to the same bytes.",
)
def manifests_pass_ladder(
    context: dg.AssetCheckExecutionContext, store: ArtifactStore, source: SourceData
) -> dg.AssetCheckResult:
    from simready.scenario.batch import read_batch_manifest_paths  # definitions stay light: scenario.batch (~0.2 s)
    from simready.scenario.generator import replay  # definitions stay light: the generator (~0.3 s)

    template_id, batch = batch_of(context)
    load_suite(source.suite_file, source.templates_dir)  # registers the suite's program files (SPEC §19)
    template, catalog = stage_inputs(source, template_id)
    files = read_batch_manifest_paths(batch_dir(store, template_id, batch).root)
    failures = {}
    for path in files:
        ok, why = replay(load_manifest(path), template=template, catalog=catalog)
        if not ok:
            failures[path.parent.name] = why
    return dg.AssetCheckResult(
        passed=not failures,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={"replayed": len(files), "violations": findings(failures, column="violation")},
    )
