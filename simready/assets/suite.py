"""Suite stage: ``split_assignments`` and ``coverage_report``, over every template and batch (SPEC §12, §13).

Unpartitioned and downstream of the validity stage, so the lineage graph runs
world → scenario → simulation → measurement → validity → suite without looping
back. The split rules and the suite weights are domain code
(:mod:`simready.scenario.splits`, :mod:`simready.validity.suite`); these assets
gather the files and report.
"""
# No `from __future__ import annotations`: Dagster inspects the context annotation at runtime.

import datetime
import json
import time
from pathlib import Path

import dagster as dg

from simready.assets.automation import EAGER
from simready.assets.inputs import suite_file
from simready.assets.metadata import artifact_link, picture, table
from simready.assets.partitions import registered_batches
from simready.assets.scenario import SCENARIO_CODE_VERSION, scenario_manifests
from simready.assets.stage_io import batch_dir, batch_samples, local_file
from simready.assets.validity import VALIDITY_CODE_VERSION, validity_reports
from simready.common.hashing import content_hash, sha256_bytes
from simready.common.parallel import beside
from simready.artifacts.layout import SampleDir
from simready.resources import ArtifactStore, SourceData
from simready.scenario.coverage import TRAFFIC_DIMENSION_NAMES
from simready.scenario.manifest import load_manifest
from simready.scenario.splits import SplitError, split_assignment_row, write_split_assignments
from simready.scenario.suite import load_suite
from simready.scenario.traffic_spec import densities_of


@dg.asset(
    group_name="suite",
    kinds={"python"},
    deps=[scenario_manifests, suite_file],
    code_version=VALIDITY_CODE_VERSION,
    automation_condition=EAGER,
    description="Immutable train/val/test per sample with its lineage keys, assigned before any rendering (SPEC §13).",
)
def split_assignments(context: dg.AssetExecutionContext, store: ArtifactStore, source: SourceData) -> dg.MaterializeResult:
    from simready.scenario.batch import read_batch_manifest_paths  # definitions stay light: scenario.batch (~0.2 s)

    batches = registered_batches(context)
    rows = [
        split_assignment_row(load_manifest(path), template_id, batch)
        for template_id in sorted(load_suite(source.suite_file, source.templates_dir).templates)
        for batch in batches
        for path in read_batch_manifest_paths(batch_dir(store, template_id, batch).root)
    ]
    try:
        write_split_assignments(rows, local_file(store, store.layout.split_assignments))
        store.save(store.layout.split_assignments.parent)
    except SplitError as exc:
        raise dg.Failure(exc.one_line()) from exc
    sizes = {s: sum(1 for r in rows if r["split"] == s) for s in ("train", "val", "test")}
    return dg.MaterializeResult(
        data_version=dg.DataVersion(content_hash(rows)),
        metadata={
            "samples": len(rows),
            "splits": table([{"split": k, "samples": v, "share": v / len(rows) if rows else 0.0} for k, v in sizes.items()],
                            [("split", "string"), ("samples", "int"), ("share", "float")]),
            "path": artifact_link(store, store.layout.split_assignments),
        },
    )


@dg.asset(
    group_name="suite",
    kinds={"python"},
    deps=[scenario_manifests, validity_reports, suite_file],
    code_version=SCENARIO_CODE_VERSION,
    automation_condition=EAGER,
    description="Suite dashboard: counts per declared causal cell with a heatmap, validity verdicts, suite weights "
    "under the low-fidelity share cap, and the GX Data Docs.",
)
def coverage_report(context: dg.AssetExecutionContext, store: ArtifactStore, source: SourceData) -> dg.MaterializeResult:
    from simready.review import sample_summary, write_index  # review.__getattr__ loads Pillow, matplotlib
    from simready.review.summary import SampleSummary, with_thumbnail  # definitions stay light: pybullet, pandas
    from simready.review.rollup import ROLLUP_COLUMNS, acceptance_by_batch  # definitions stay light: pybullet, pandas
    # definitions stay light: matplotlib
    from simready.scenario.coverage_summary import coverage_table, coverage_totals, merge_cells, plot_coverage_heatmap
    from simready.validity.data_docs import partition_label  # definitions stay light: pybullet, pandas
    from simready.validity.suite import build_docs, suite_validity  # definitions stay light: pybullet, pandas

    suite = load_suite(source.suite_file, source.templates_dir)
    batches = registered_batches(context)
    cell_files = [
        batch_dir(store, t, b).cells
        for t in sorted(suite.templates)
        for b in batches
        if batch_dir(store, t, b).cells.exists()
    ]
    merged = merge_cells(cell_files)
    intents = [i for t in suite.templates.values() for i in t]
    # Each density the suite asks for is a coverage dimension (SPEC §20): its bucket has its own cells.
    densities: dict[str, list[dict[str, float]]] = {}
    for t, ints in suite.templates.items():
        for i in ints:
            spec = suite.traffic_for(t, i)
            densities.setdefault(i, []).append(densities_of(spec) if spec else {})
    rows = coverage_table(merged, intents, densities)
    totals = coverage_totals(rows)
    layout = store.layout
    coverage = json.dumps({"totals": totals, "cells": rows}, indent=1, sort_keys=True).encode("utf-8")
    store.write_bytes(layout.coverage, coverage)
    under = [r for r in rows if r["under_target"] and r["proposals"] > 0]
    review_dir = store.local_dir(layout.review_dir)

    def pictures() -> tuple[list[SampleSummary], float]:
        """The heatmap, and the review index with its thumbnails (its seconds for `make bench`)."""
        plot_coverage_heatmap(rows, local_file(store, layout.coverage_heatmap))
        started = time.perf_counter()
        judged = [with_thumbnail(SampleDir(d), sample_summary(SampleDir(d), b), review_dir)
                  for t in sorted(suite.templates) for b in batches
                  for d in batch_samples(store, t, b) if SampleDir(d).validity.exists()]
        write_index(judged, local_file(store, layout.review_index), f"{suite.suite_id}: samples for review")
        return judged, time.perf_counter() - started

    # The pictures on the second core while this process weighs the suite and builds the Data Docs: neither reads
    # what the other writes, and alone each left a core idle (issue 29: the suite's run is the main job's last).
    with beside(pictures) as drawn:
        dirs = [d for t in sorted(suite.templates) for b in batches for d in batch_samples(store, t, b)]
        suite_weights = suite_validity(dirs)
        store.write_bytes(layout.suite_weights, json.dumps(suite_weights, indent=1, sort_keys=True).encode("utf-8"))
        by_batch = {str(dg.MultiPartitionKey({"template": t, "batch": b})): batch_samples(store, t, b)
                    for t in sorted(suite.templates) for b in batches}
        logs = {t: store.local_path(layout.rejection_log(t)) for t in sorted(suite.templates)}
        # The Data Docs show when this run validated the tables: its start as Dagster recorded it.
        run = context.instance.get_run_record_by_id(context.run_id)
        validated_at = datetime.datetime.fromtimestamp(run.start_time, datetime.timezone.utc) \
            if run is not None and run.start_time else None

        def stored(suite_name: str, key: str) -> Path | None:
            """Where the suite's check stored its GX result over the partition's table (None: it did not)."""
            result = layout.gx_result(suite_name, partition_label(key))
            return store.local_path(result) if store.exists(result) else None

        docs = build_docs(by_batch, logs, store.local_dir(layout.data_docs), validated_at, stored)
    judged, index_s = drawn()
    store.save(layout.coverage_dir)
    store.save(layout.data_docs)
    ladder = {(t, b): store.read_json(layout.batch(t, b).record) for t in sorted(suite.templates) for b in batches
              if store.exists(layout.batch(t, b).record)}
    store.save(layout.review_dir)
    return dg.MaterializeResult(
        data_version=dg.DataVersion(sha256_bytes(coverage)),
        metadata={
            "cells": totals["cells"],
            "cells_filled_to_target": totals["cells_filled"],
            "cells_with_a_sample": totals["cells_with_samples"],
            "fill_fraction": totals["fill_fraction"],
            "heatmap": picture(store, layout.coverage_heatmap, "coverage fill per cell"),
            "under_target_tried": table(under[:50], [("intent", "string"), ("cell", "string"), ("accepted", "int"),
                                                     ("target", "int"), ("dominant_rejection", "string")]),
            # Cells and samples named apart, as the heatmap's titles and the run summary name them.
            "by_intent": table([{"intent": k, "cells": v["cells"], "cells_with_a_sample": v["with_samples"],
                                 "cells_filled_to_target": v["filled"], "samples_accepted": v["accepted"],
                                 "samples_target": v["target"]} for k, v in totals["by_intent"].items()],
                               [("intent", "string"), ("cells", "int"), ("cells_with_a_sample", "int"),
                                ("cells_filled_to_target", "int"), ("samples_accepted", "int"),
                                ("samples_target", "int")]),
            # Per bucket of each background-traffic density (SPEC §20): vehicles, pedestrians, cyclists.
            "by_traffic_bucket": table([{"dimension": dim, "bucket": bucket, "cells": v["cells"],
                                         "samples_accepted": v["accepted"], "samples_target": v["target"]}
                                        for dim in TRAFFIC_DIMENSION_NAMES
                                        for bucket, v in totals[f"by_{dim}"].items()],
                                       [("dimension", "string"), ("bucket", "string"), ("cells", "int"),
                                        ("samples_accepted", "int"), ("samples_target", "int")]),
            # Each row what validity_reports counts on its partition; the rows sum to bases_* and the branches table.
            "acceptance_by_template_batch": table(acceptance_by_batch(judged, ladder), ROLLUP_COLUMNS),
            "path": artifact_link(store, layout.coverage),
            "review_assets_s": round(index_s, 3),  # the review index and its pictures (`make bench`'s review section)
            "bases_accepted": suite_weights["accepted"],
            "bases_rejected": suite_weights["rejected"],
            "branches": table([{"branch": k, **v} for k, v in sorted(suite_weights["branches"]["by_branch"].items())],
                              [("branch", "string"), ("accepted", "int"), ("rejected", "int")]),
            "matched_sets_whole": f"{suite_weights['branches']['matched_sets_whole']}/{suite_weights['branches']['matched_sets']}",
            "rejected_branches": table(suite_weights["branches"]["rejected"][:50],
                                       [("sample", "string"), ("branch", "string"), ("reason", "string")]),
            "low_fidelity_share": suite_weights["policy"].get("low_fidelity_share", 0.0),
            "scaled_down": suite_weights["policy"].get("scaled_down", False),
            "suite_weights": artifact_link(store, layout.suite_weights),
            "data_docs": artifact_link(store, layout.data_docs_index) if docs else "(no tables yet)",
            "review_index": artifact_link(store, layout.review_index),
        },
    )

