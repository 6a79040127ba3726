"""The artifact tree's root and its top folders: templates, reference pools, releases, splits, coverage, Data Docs,
the review index and thumbnails (:class:`ArtifactLayout` hands out every folder)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from simready.artifacts.layout.names import (CATALOG_DIR, CERTIFICATION, CHECKLIST, COVERAGE, COVERAGE_DIR,
                                             COVERAGE_HEATMAP, DATASHEET, DATASHEET_HTML, DATASHEET_PAGE, DATA_DOCS_DIR,
                                             GX_RESULTS_DIR,
                                             MANIFEST, POOL, POOL_RECORD, REFERENCE_DIR, REJECTION_LOG, RELEASES_DIR,
                                             RELEASE_OBJECTS_DIR, RELEASE_RECORD, RELEASE_TAGS_DIR, REVIEW_INDEX,
                                             REVIEW_INDEX_DIR, RIG, SAMPLES_DIR, SPLITS_DIR, SPLIT_ASSIGNMENTS,
                                             SUITE_WEIGHTS, TEMPLATES_DIR, TEMPLATE_PLOT, TEMPLATE_RECORD,
                                             TEMPLATE_VALIDATION, THUMBNAILS_DIR, path_part)
from simready.artifacts.layout.sample import BatchDir, SampleDir


@dataclass(frozen=True)
class TemplateDir:
    """One world template version's folder: ``templates/<template>/``."""

    root: Path

    @property
    def record(self) -> Path:
        return self.root / TEMPLATE_RECORD

    @property
    def plot(self) -> Path:
        return self.root / TEMPLATE_PLOT

    @property
    def validation(self) -> Path:
        return self.root / TEMPLATE_VALIDATION

    @property
    def rig(self) -> Path:
        return self.root / RIG


@dataclass(frozen=True)
class ReferencePoolDir:
    """One template's realism reference pool: its feature rows, its record and the reference rollouts."""

    root: Path

    @property
    def pool(self) -> Path:
        return self.root / POOL

    @property
    def record(self) -> Path:
        return self.root / POOL_RECORD

    def sample(self, sample_id: str) -> SampleDir:
        return SampleDir(self.root / path_part(sample_id, "sample id"))

    def samples(self) -> list[SampleDir]:
        """The reference rollouts' folders, sorted by sample id."""
        return [SampleDir(p.parent) for p in sorted(self.root.glob(f"*/{MANIFEST}"))]


@dataclass(frozen=True)
class ReleaseDir:
    """One dataset release's folder, ``releases/<release hex>/`` (its files point at ``releases/objects/``)."""

    root: Path

    @property
    def record(self) -> Path:
        """Every released file per split and sample, with its sha256 and size."""
        return self.root / RELEASE_RECORD

    @property
    def datasheet(self) -> Path:
        return self.root / DATASHEET

    @property
    def datasheet_page(self) -> Path:
        """The datasheet and checklist for a reader (Markdown)."""
        return self.root / DATASHEET_PAGE

    @property
    def datasheet_html(self) -> Path:
        """The same page for a browser (HTML)."""
        return self.root / DATASHEET_HTML

    @property
    def checklist(self) -> Path:
        return self.root / CHECKLIST


@dataclass(frozen=True)
class ArtifactLayout:
    """The artifact tree under one root (the store's local folder)."""

    root: Path

    @property
    def catalog_dir(self) -> Path:
        return self.root / CATALOG_DIR

    @property
    def certification(self) -> Path:
        return self.catalog_dir / CERTIFICATION

    def template(self, template_id: str) -> TemplateDir:
        return TemplateDir(self.root / TEMPLATES_DIR / path_part(template_id, "template id"))

    def template_dir(self, template_id: str) -> Path:
        return self.template(template_id).root

    def template_record(self, template_id: str) -> Path:
        return self.template(template_id).record

    def template_plot(self, template_id: str) -> Path:
        return self.template(template_id).plot

    def template_validation(self, template_id: str) -> Path:
        return self.template(template_id).validation

    def rig(self, template_id: str) -> Path:
        return self.template(template_id).rig

    def rejection_log(self, template_id: str) -> Path:
        return self.root / SAMPLES_DIR / path_part(template_id, "template id") / REJECTION_LOG

    def batch(self, template_id: str, batch: str) -> BatchDir:
        return BatchDir(self.root / SAMPLES_DIR / path_part(template_id, "template id") / path_part(batch, "batch key"))

    def reference(self, template_id: str) -> ReferencePoolDir:
        return ReferencePoolDir(self.root / REFERENCE_DIR / path_part(template_id, "template id"))

    def reference_dir(self, template_id: str) -> Path:
        return self.reference(template_id).root

    @property
    def split_assignments(self) -> Path:
        return self.root / SPLITS_DIR / SPLIT_ASSIGNMENTS

    @property
    def coverage_dir(self) -> Path:
        return self.root / COVERAGE_DIR

    @property
    def coverage(self) -> Path:
        return self.coverage_dir / COVERAGE

    @property
    def coverage_heatmap(self) -> Path:
        return self.coverage_dir / COVERAGE_HEATMAP

    @property
    def suite_weights(self) -> Path:
        return self.coverage_dir / SUITE_WEIGHTS

    @property
    def data_docs(self) -> Path:
        return self.root / DATA_DOCS_DIR

    def gx_result(self, suite: str, partition_label: str) -> Path:
        """The GX validation result (GX's own JSON) of suite ``suite`` over its table in a partition, as its asset
        check computed it: ``gx_results/<suite>/<partition label>.json`` (the label: a Data Docs page's, see
        :func:`simready.validity.data_docs.partition_label`). The Data Docs site renders it instead of validating
        the table again. A report, in no release and no fingerprint."""
        return self.root / GX_RESULTS_DIR / path_part(suite, "suite") / f"{path_part(partition_label, 'partition')}.json"

    @property
    def samples_dir(self) -> Path:
        """Every template's batches and rejection logs: ``samples/``."""
        return self.root / SAMPLES_DIR

    @property
    def review_dir(self) -> Path:
        """The suite's review index folder: ``review/``."""
        return self.root / REVIEW_INDEX_DIR

    @property
    def review_index(self) -> Path:
        """The suite's review index page, linking every sample's ``review.html``."""
        return self.review_dir / REVIEW_INDEX

    def thumbnail(self, picture: Path) -> Path:
        """The thumbnail of the picture at ``picture`` (a path under this root): the same path under
        ``thumbnails/``, so no stage's folder holds a file it did not write."""
        return self.root / THUMBNAILS_DIR / Path(picture).relative_to(self.root)

    @property
    def releases_dir(self) -> Path:
        return self.root / RELEASES_DIR

    def release(self, release_hex: str) -> ReleaseDir:
        """A release's folder by the hex digits of its id (``sha256:<hex>``)."""
        return ReleaseDir(self.releases_dir / path_part(release_hex, "release id"))

    @property
    def release_objects_dir(self) -> Path:
        return self.releases_dir / RELEASE_OBJECTS_DIR

    def release_object(self, sha256: str) -> Path:
        """Where the bytes hashing to ``sha256`` (``sha256:<hex>``) are stored once for every release."""
        digest = path_part(sha256.split(":", 1)[-1], "sha256")
        return self.release_objects_dir / digest[:2] / digest

    @property
    def release_tags_dir(self) -> Path:
        return self.releases_dir / RELEASE_TAGS_DIR

    def release_tag(self, tag: str) -> Path:
        """The file holding the id of the release a tag (``latest``, ``r1``) names."""
        return self.release_tags_dir / path_part(tag, "release tag")

    @property
    def data_docs_index(self) -> Path:
        """The Data Docs site's entry page (the name GX gives it)."""
        return self.data_docs / "index.html"
