"""The GX Data Docs site for reviewers: one validation page per suite, data asset and partition, under a fixed run
time so that a page's path is a function of those alone, opening offline (:mod:`simready.validity.docs_offline`).

Data Docs use a fresh ephemeral GX context per site (~10 ms) so that a site shows exactly the results it is given;
the suites are :mod:`simready.validity.expectations`'.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from simready.common.atomic import write_text_atomic
from simready.common.parallel import map_samples
from simready.validity.docs_offline import make_offline
from simready.validity.expectations import (DATASOURCE_NAME, DOCS_RESULT_FORMAT, DOCS_SITE_NAME, SuiteResult,
                                            check_suite_name, import_gx, new_context, register_suite)


#: Every validation on a site is stored under this run time. GX puts the run time in a page's path; a fixed one
#: makes the path a function of (suite, asset, partition) alone, so a Dagster check can link the page of its
#: partition and a rebuild replaces it. What the pages and the index *show* is when the tables were validated
#: (``build_data_docs``' ``validated_at``): the site is a report, kept out of every fingerprint and data version.
DOCS_RUN_TIME = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
UNPARTITIONED = "unpartitioned"
_LOG = logging.getLogger(__name__)


class DocsBatch(NamedTuple):
    """One validation on a Data Docs site: suite ``suite`` over ``frame``, the table of data asset ``asset``
    (the Dagster asset it belongs to; the suite's name when None) in ``partition`` (a Dagster partition key;
    None for a table that is not one partition's)."""

    suite: str
    frame: pd.DataFrame
    asset: str | None = None
    partition: str | None = None

    #: The file of the suite's result over this table as its asset check computed it (:func:`result_json`), if any:
    #: rendered instead of validating the table again where the table and the suite are still the ones it was over.
    stored: Path | None = None

    @property
    def label(self) -> str:
        """The partition as GX's run name and a path segment: ``|`` between dimensions becomes ``.``."""
        return partition_label(self.partition)

    @property
    def data_asset(self) -> str:
        return self.asset or self.suite


def partition_label(partition: str | None) -> str:
    """A partition key as GX's run name and a path segment (a page's, a stored result's): ``|`` between dimensions
    becomes ``.``; :data:`UNPARTITIONED` for None."""
    if partition is None:
        return UNPARTITIONED
    label = partition.replace("|", ".")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", label) or label in (".", ".."):
        raise ValueError(f"partition key {partition!r}: only letters, digits, '_', '-', '.' and '|' name a page")
    return label


def result_json(result: Any) -> bytes:
    """A suite's GX validation result (an ``ExpectationSuiteValidationResult``) in GX's own serialization, to store
    beside the run (``ArtifactLayout.gx_result``) for :func:`build_data_docs` to render instead of validating again.

    Canonical, as every artifact is (the same table and suite give the same bytes in any process and deployment):
    what GX draws from the clock or at random is left out (the batch's load time; the run time and validation time,
    which :func:`build_data_docs` sets to the site's own anyway; the validation's and each expectation's uuid4 id,
    new in every context)."""
    doc = result.to_json_dict()
    meta = doc.get("meta", {})
    meta.get("batch_markers", {}).pop("ge_load_time", None)
    for key in ("run_id", "validation_time", "validation_id"):
        meta.pop(key, None)
    for item in doc.get("results", []):
        config = item.get("expectation_config") or {}
        config.pop("id", None)
    return json.dumps(doc, sort_keys=True).encode("utf-8")


def validation_page(suite: str, asset: str | None = None, partition: str | None = None) -> str:
    """The path of a validation's page in a site built by :func:`build_data_docs`, relative to its root."""
    batch = DocsBatch(suite, pd.DataFrame(), asset, partition)
    return f"validations/{suite}/{batch.label}/{DOCS_RUN_TIME:%Y%m%dT%H%M%S.%fZ}/{batch.data_asset}.{batch.label}.html"


def build_data_docs(results: Iterable[SuiteResult | DocsBatch | tuple[str, pd.DataFrame]], out_dir: str | Path,
                    validated_at: datetime.datetime | None = None) -> Path:
    """Write the GX Data Docs site for ``results`` under ``out_dir``, to open offline; return its ``index.html``.

    Each item is a :class:`DocsBatch`, a :class:`SuiteResult` from :func:`run_suite` in this process (it keeps
    its table) or a ``(suite name, table)`` pair. Each table's result is the one its check stored
    (:attr:`DocsBatch.stored`: GX's serialization, :func:`result_json`) where that is over the same table (GX's
    fingerprint of it) and expectations and found no unexpected value, else the table is validated again (counted
    in the log); it is stored under
    its data asset and partition (GX's own dataframe batches name neither, and its pages say "Data asset: None"),
    at :func:`validation_page`; then GX renders the site and :func:`~simready.validity.docs_offline.make_offline`
    points its pages at the vendored CSS and JS. The pages and the index show ``validated_at`` (timezone-aware;
    None: now) as the validations' run time.
    """
    # heavy: Great Expectations (~9 s), only for the expectation suites
    from great_expectations.core.run_identifier import RunIdentifier
    from great_expectations.data_context.types.resource_identifiers import (
        ExpectationSuiteIdentifier,
        ValidationResultIdentifier,
    )  # heavy: Great Expectations (~9 s), only for the expectation suites

    gx = import_gx()
    validated_at = (validated_at or datetime.datetime.now(datetime.timezone.utc)).replace(microsecond=0)
    if validated_at.tzinfo is None:
        raise ValueError(f"validated_at {validated_at} has no timezone")
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    context = new_context(gx)
    context.add_data_docs_site(
        site_name=DOCS_SITE_NAME,
        site_config={
            "class_name": "SiteBuilder",
            "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
            "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(out) + os.sep},
        },
    )
    datasource = context.data_sources.add_pandas(DATASOURCE_NAME)
    store = context.validation_results_store
    registered: dict[str, Any] = {}
    pages: dict[str, DocsBatch] = {}
    for batch in map(_docs_batch, results):
        check_suite_name(batch.suite)
        page = validation_page(batch.suite, batch.asset, batch.partition)
        if page in pages:
            raise ValueError(f"two tables for one page: suite {batch.suite!r}, asset {batch.data_asset!r}, "
                             f"partition {batch.partition!r}")
        pages[page] = batch
        if batch.suite not in registered:
            registered[batch.suite] = register_suite(gx, context, datasource, batch.suite)

    def validate(batch: DocsBatch) -> Any:
        """GX's result of the batch's suite over its table (its own graph of metrics per expectation: ~0.6 s)."""
        return registered[batch.suite].run(batch_parameters={"dataframe": batch.frame}, result_format=DOCS_RESULT_FORMAT,
                                           run_id=RunIdentifier(run_name=batch.label, run_time=DOCS_RUN_TIME))

    # The results the asset checks stored are rendered as they are; only the tables without one (or whose table or
    # suite changed since) are validated again.
    by_page: dict[str, Any] = {}
    again: dict[str, list[str]] = {}
    for page, batch in pages.items():
        result, why = _stored_result(batch, registered[batch.suite])
        if result is None:
            again.setdefault(why, []).append(page)
        else:
            by_page[page] = result
    fresh = [p for p in pages if p not in by_page]
    if fresh:
        _LOG.log(logging.WARNING if any(pages[p].stored is not None for p in fresh) else logging.INFO,
                 "Data Docs: %d of %d tables validated again (%s)", len(fresh), len(pages),
                 "; ".join(f"{why}: {len(ps)}" for why, ps in sorted(again.items())))
    # The validations side by side, one per core (each its own table; the results come back in order), then stored
    # here: the site is built alone at the end of a run, where a second core would otherwise idle.
    by_page.update(zip(fresh, map_samples(validate, [pages[p] for p in fresh])))
    for page, batch in pages.items():
        result = by_page[page]
        run_id = RunIdentifier(run_name=batch.label, run_time=DOCS_RUN_TIME)
        for key in store.list_keys():  # GX stored it under its own batch id; keep it under ours only
            if key.run_id == run_id and key.expectation_suite_identifier.name == batch.suite:
                store.remove_key(key)
        result.meta["batch_spec"] = {"data_asset_name": batch.data_asset, "partition": batch.partition or UNPARTITIONED}
        # The page shows the run id its result carries: the real validation time (its path keeps DOCS_RUN_TIME).
        result.meta["run_id"] = RunIdentifier(run_name=batch.label, run_time=validated_at)
        result.meta["validation_time"] = validated_at.strftime("%Y%m%dT%H%M%S.%fZ")
        # GX's batch markers hold its load time (wall clock); the table's fingerprint is what identifies the batch.
        result.meta["batch_markers"] = {k: v for k, v in result.meta.get("batch_markers", {}).items() if k != "ge_load_time"}
        store.set(ValidationResultIdentifier(ExpectationSuiteIdentifier(name=batch.suite), run_id,
                                             f"{batch.data_asset}.{batch.label}"), result)
    context.build_data_docs(site_names=[DOCS_SITE_NAME])
    index = out / "index.html"
    if not index.is_file():
        raise RuntimeError(f"GX wrote no Data Docs index under {out}")
    missing = [p for p in pages if not (out / p).is_file()]
    if missing:
        raise RuntimeError(f"GX wrote no page at {out / missing[0]} (validation_page and GX disagree)")
    _prune(out / "validations", {out / p for p in pages})
    _index_shows(index, validated_at)
    make_offline(out)
    return index


def _stored_result(batch: DocsBatch, definition: Any) -> tuple[Any | None, str]:
    """The batch's stored result (GX's ``ExpectationSuiteValidationResult``) if it is over this very table (GX's
    own fingerprint of it) and this suite's expectations, and renders as a validation here would; else None and
    why not."""
    if batch.stored is None or not batch.stored.is_file():
        return None, "no stored result"
    # heavy: Great Expectations (~9 s), only for the expectation suites
    from great_expectations.core.expectation_validation_result import ExpectationSuiteValidationResultSchema
    from great_expectations.execution_engine.pandas_execution_engine import hash_pandas_dataframe

    result = ExpectationSuiteValidationResultSchema().loads(batch.stored.read_text(encoding="utf-8"))
    if result.meta.get("batch_markers", {}).get("pandas_data_fingerprint") != hash_pandas_dataframe(batch.frame):
        return None, "table changed"
    if _expectations(r.expectation_config for r in result.results) != \
            _expectations(e.configuration for e in definition.suite.expectations):
        return None, "suite changed"
    # A check's result is BASIC: a page lists each unexpected value with its count (DOCS_RESULT_FORMAT), BASIC keeps
    # a sample of them. Without any (the usual case) the two render the same page.
    if any(not r.success or (r.result or {}).get("unexpected_count") for r in result.results):
        return None, "unexpected values"
    return result, ""


def _expectations(configs: Iterable[Any]) -> list[str]:
    """What each expectation asserts (its type and arguments, not GX's per-context id or batch id), sorted: GX
    orders a result's expectations its own way."""
    return sorted(json.dumps([c.type, {k: v for k, v in c.kwargs.items() if k != "batch_id"}], sort_keys=True, default=str)
                  for c in configs)


def _index_shows(index: Path, validated_at: datetime.datetime) -> None:
    """The index lists each validation with the run time of its key (its path's :data:`DOCS_RUN_TIME`): show
    ``validated_at`` instead, as GX formats a run time there, and sort by it."""
    # heavy: Great Expectations (~9 s), only for the expectation suites
    from great_expectations.render.renderer.site_index_page_renderer import SiteIndexPageRenderer as R

    html = index.read_text(encoding="utf-8")
    fixed, real = R._get_formatted_datetime(DOCS_RUN_TIME), R._get_formatted_datetime(validated_at)
    html = html.replace(f"'run_time': '{fixed}'", f"'run_time': '{real}'").replace(
        f"'_run_time_sort': {DOCS_RUN_TIME.timestamp()}", f"'_run_time_sort': {validated_at.timestamp()}")
    write_text_atomic(index, html)


def _prune(folder: Path, keep: set[Path]) -> None:
    """Remove the validation pages of an earlier build that this one did not write (a partition gone, GX's
    timestamped paths), which the index no longer lists, and the folders they leave empty."""
    for path in sorted(folder.rglob("*"), reverse=True):
        if path.is_file() and path not in keep:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def _docs_batch(item: SuiteResult | DocsBatch | tuple[str, pd.DataFrame]) -> DocsBatch:
    if isinstance(item, DocsBatch):
        return item
    if isinstance(item, SuiteResult):
        if item._frame is None:
            raise ValueError(f"suite result {item.suite!r} carries no table (deserialized?): pass (name, table) instead")
        return DocsBatch(item.suite, item._frame)
    return DocsBatch(*item)
