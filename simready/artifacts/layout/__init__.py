"""The on-disk layout of every artifact, in one place (SPEC §10, README "Outputs").

Every artifact path and file name is spelled here and nowhere else: stages ask
these objects for paths (``SampleDir(path).trace``), never join names of their
own. The objects only compute paths — nothing here reads or writes — so the
same layout serves the local folder and, through the store, other backends.

```
<root>/catalog/certification.json
<root>/templates/<template>/{template.json, plot.png, validation.json, rig.json}        TemplateDir
<root>/samples/<template>/rejection_log.parquet
<root>/samples/<template>/<batch>/{batch.json, rejections.jsonl, cells.json}     BatchDir
<root>/samples/<template>/<batch>/<sample>/            SampleDir
    manifest.json  trace.parquet  verdict.json  rollout.png  validity.json  review.html  review-camera.js
    checkpoint/<sha256 hex>.ckpt
    branches/outcomes.json  branches/<label>/trace.parquet  branches/<label>/observations/
    observations/  observations_dry/                    ObservationDir
<root>/reference/<template>/{pool.parquet, pool.json, <sample>/}               ReferencePoolDir
<root>/splits/split_assignments.json
<root>/coverage/{coverage.json, coverage_heatmap.png, suite_weights.json}
<root>/data_docs/
<root>/review/index.html                                 the suite's review index (every sample, filters)
<root>/thumbnails/<key of a picture>                     its thumbnail for the Dagster UI (same key under thumbnails/)
<root>/releases/objects/<aa>/<sha256 hex>                a dataset release's file, stored once by content
<root>/releases/<release hex>/{release.json, datasheet.json, datasheet.md|.html, checklist.json}     ReleaseDir
<root>/releases/tags/<tag>                               the release id a tag names (one line)
```

Every sample folder also holds ``review.html``, its reviewer page (``simready.review``), which links the
sample's own files by relative paths only.

An observation folder (``ObservationDir``) holds ``render.json``,
``results.json``, ``observed-frames.jsonl``, ``legend.json``, ``parity.json``,
``render.log``, one folder per sensor (``<sensor>/<tick:08d><suffix>``, the
suffix by pass in :data:`FRAME_SUFFIXES`), ``truth/<camera>/`` (per-frame
truth tables the same way, plus ``tracks.parquet`` and
``track-events.parquet``), ``video/<sensor>.mp4``, ``job/render-job.json``,
``job/<camera>.poses.npz`` and ``review/{contact_sheet.png,
lidar_topdown.png}``. Inside an observation folder files are named relative
to it, as ``results.json`` lists them (``ObservationDir.frame_name`` and its
siblings); ``ObservationDir.file(name)`` is where such a name lies.

The package: :mod:`.names` (every file and folder name, the only place one is spelled), :mod:`.sample`
(an observation folder, a branch, a sample, a batch), :mod:`.tree` (templates, reference pools, releases and
:class:`ArtifactLayout`, the root); every name is imported from here.
"""

from __future__ import annotations

from simready.artifacts.layout.names import (BATCH_RECORD, BRANCHES_DIR, CAMERA_POSES_SUFFIX, CATALOG_DIR, CELLS,
                                             CERTIFICATION, CHECKLIST, CHECKPOINT_DIR, CHECKPOINT_SUFFIX, CONTACT_SHEET,
                                             COVERAGE, COVERAGE_DIR, COVERAGE_HEATMAP, DATASHEET, DATASHEET_HTML,
                                             DATASHEET_PAGE, DATA_DOCS_DIR, DRY_OBSERVATIONS_DIR, FOXGLOVE_HOW_TO_OPEN,
                                             FOXGLOVE_LAYOUT, FRAME_SUFFIXES, JOB_DIR, LEGEND, LIDAR_TOPDOWN, MANIFEST,
                                             OBSERVATIONS_DIR, OBSERVED_FRAMES, OUTCOMES, PARITY, POOL, POOL_RECORD,
                                             REFERENCE_DIR, REJECTIONS, REJECTION_LOG, RELEASES_DIR,
                                             RELEASE_OBJECTS_DIR, RELEASE_RECORD, RELEASE_TAGS_DIR, RENDER, RENDER_JOB,
                                             RENDER_LOG, RESULTS, REVIEW_CAMERA, REVIEW_DIR, REVIEW_INDEX,
                                             REVIEW_INDEX_DIR, REVIEW_PAGE, RIG, ROLLOUT_PLOT, SAMPLES_DIR, SPLITS_DIR,
                                             SPLIT_ASSIGNMENTS, SUITE_WEIGHTS, TEMPLATES_DIR, TEMPLATE_PLOT,
                                             TEMPLATE_RECORD, TEMPLATE_VALIDATION, THUMBNAILS_DIR, TRACE, TRUTH_DIR,
                                             TRUTH_PASS_PREFIX, TRUTH_TABLES, VALIDITY, VERDICT, VIDEO_DIR,
                                             VIDEO_SUFFIX, ZSTD_SUFFIX)
from simready.artifacts.layout.sample import BatchDir, BranchDir, ObservationDir, SampleDir
from simready.artifacts.layout.tree import ArtifactLayout, ReferencePoolDir, ReleaseDir, TemplateDir


__all__ = [
    "BATCH_RECORD",
    "BRANCHES_DIR",
    "CAMERA_POSES_SUFFIX",
    "CATALOG_DIR",
    "CELLS",
    "CERTIFICATION",
    "CHECKLIST",
    "CHECKPOINT_DIR",
    "CHECKPOINT_SUFFIX",
    "CONTACT_SHEET",
    "COVERAGE",
    "COVERAGE_DIR",
    "COVERAGE_HEATMAP",
    "DATASHEET",
    "DATASHEET_HTML",
    "DATASHEET_PAGE",
    "DATA_DOCS_DIR",
    "DRY_OBSERVATIONS_DIR",
    "FOXGLOVE_HOW_TO_OPEN",
    "FOXGLOVE_LAYOUT",
    "FRAME_SUFFIXES",
    "JOB_DIR",
    "LEGEND",
    "LIDAR_TOPDOWN",
    "MANIFEST",
    "OBSERVATIONS_DIR",
    "OBSERVED_FRAMES",
    "OUTCOMES",
    "PARITY",
    "POOL",
    "POOL_RECORD",
    "REFERENCE_DIR",
    "REJECTIONS",
    "REJECTION_LOG",
    "RELEASES_DIR",
    "RELEASE_OBJECTS_DIR",
    "RELEASE_RECORD",
    "RELEASE_TAGS_DIR",
    "RENDER",
    "RENDER_JOB",
    "RENDER_LOG",
    "RESULTS",
    "REVIEW_CAMERA",
    "REVIEW_DIR",
    "REVIEW_INDEX",
    "REVIEW_INDEX_DIR",
    "REVIEW_PAGE",
    "RIG",
    "ROLLOUT_PLOT",
    "SAMPLES_DIR",
    "SPLITS_DIR",
    "SPLIT_ASSIGNMENTS",
    "SUITE_WEIGHTS",
    "TEMPLATES_DIR",
    "TEMPLATE_PLOT",
    "TEMPLATE_RECORD",
    "TEMPLATE_VALIDATION",
    "THUMBNAILS_DIR",
    "TRACE",
    "TRUTH_DIR",
    "TRUTH_PASS_PREFIX",
    "TRUTH_TABLES",
    "VALIDITY",
    "VERDICT",
    "VIDEO_DIR",
    "VIDEO_SUFFIX",
    "ZSTD_SUFFIX",
    "ArtifactLayout",
    "BatchDir",
    "BranchDir",
    "ObservationDir",
    "ReferencePoolDir",
    "ReleaseDir",
    "SampleDir",
    "TemplateDir",
]
