"""Great Expectations suites on the tabular artifacts, run with GX Core directly (not ``dagster-ge``).

Four suites (``SUITES``), each over a table this module can also build:

* ``trajectories`` — a trace's ticks (:func:`trajectory_frame` adds the limit class and
  each actor's time step): finite poses, unit-range quaternions, speed within the gate's
  class limits, time increasing per actor, one row per (tick, actor).
* ``rejection_log`` — the scenario ladder's rejection rows: every row names its stage
  and carries a non-empty reason and detail.
* ``manifests`` — one row per manifest actor (:func:`manifest_frame`): speeds within
  class limits, dims in (0, 50] m, clip and tick in range, a valid split.
* ``validity_reports`` — one row per report (:func:`validity_frame`): every score in
  [0, 1], weights equal to :func:`~simready.validity.gate.weight_policy`, the
  acceptance rule holding, one policy version.

``run_suite(name, df) -> SuiteResult`` returns plain, JSON-ready results (for Dagster
check metadata); ``build_data_docs(results, out_dir)`` writes the GX Data Docs HTML
site for reviewers (one validation per suite, data asset and partition, opening offline:
:mod:`simready.validity.docs_offline`) and returns its ``index.html``.

Why lazily imported and cached: ``import great_expectations`` costs ~3 s, so nothing
imports it until a suite runs, and one ephemeral context (with its suites and
validation definitions) is reused for the rest of the process. Data Docs use a fresh
ephemeral context per site (~10 ms) so that a site shows exactly the results it is given.
GX's anonymous usage analytics are off (``GX_ANALYTICS_ENABLED=false``) unless the
environment says otherwise: the gate runs offline.
"""

from __future__ import annotations

import datetime
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, PrivateAttr

from simready.common.atomic import write_text_atomic
from simready.validity import policy
from simready.validity.docs_offline import make_offline
from simready.validity.gate import CHECK_NAMES, ValidityReport, weight_policy

if TYPE_CHECKING:
    from simready.scenario.manifest import ScenarioManifest

SUITES = ("trajectories", "rejection_log", "manifests", "validity_reports")
DATASOURCE_NAME = "simready"
DOCS_SITE_NAME = "simready_reviewers"

#: Bounds shared with the manifest schema (SPEC §6).
MAX_COORD_M = 1.0e6
MAX_DIM_M = 50.0
MAX_CLIP_S = 3600.0
MIN_DT_S = 1.0e-4
MAX_DT_S = 1.0
SPLITS = ("train", "val", "test")
#: At most this many unexpected values are kept per expectation in a result.
MAX_OBSERVED_VALUES = 10


class ExpectationOutcome(BaseModel):
    """One expectation's result: what it asserts, whether it held, and what was observed."""

    model_config = ConfigDict(frozen=True)
    expectation: str
    success: bool
    observed: dict[str, Any]


class SuiteResult(BaseModel):
    """A suite run, serializable for Dagster metadata (``model_dump(mode="json")``)."""

    model_config = ConfigDict(frozen=True)
    suite: str
    success: bool
    evaluated: int
    successful: int
    results: list[ExpectationOutcome]
    _frame: pd.DataFrame | None = PrivateAttr(default=None)

    def failures(self) -> list[ExpectationOutcome]:
        return [r for r in self.results if not r.success]

    def table(self) -> list[dict[str, Any]]:
        """Rows ``{expectation, success, observed}`` for a metadata table."""
        return [{"expectation": r.expectation, "success": r.success, "observed": _short(r.observed)} for r in self.results]


# --- frames ----------------------------------------------------------------------


def trajectory_frame(ticks: pd.DataFrame, actor_classes: Mapping[str, str]) -> pd.DataFrame:
    """``ticks`` plus ``actor_class`` (the gate's limit class, or the declared class) and ``t_step_s``.

    ``t_step_s`` is each row's time minus the same actor's previous row's (NaN for the
    first), computed in tick order, so "time increases per actor" is ``t_step_s > 0``.
    """
    ids = ticks["actor_id"].astype(str)
    classes = {a: policy.limit_class(c) or c for a, c in actor_classes.items()}
    out = ticks.assign(actor_class=ids.map(classes).fillna("undeclared").to_numpy())
    if "speed_mps" not in out:
        out = out.assign(speed_mps=np.hypot(out["vx"].to_numpy(float), out["vy"].to_numpy(float)))
    order = np.lexsort((out["tick"].to_numpy(), ids.to_numpy()))
    t = out["t"].to_numpy(np.float64)[order]
    same = np.r_[False, ids.to_numpy()[order][1:] == ids.to_numpy()[order][:-1]]
    step = np.full(len(t), np.nan)
    step[1:] = t[1:] - t[:-1]
    step[~same] = np.nan
    t_step = np.empty(len(t))
    t_step[order] = step
    return out.assign(t_step_s=t_step)


def manifest_frame(manifests: Iterable[ScenarioManifest]) -> pd.DataFrame:
    """One row per actor of each manifest, with the manifest's clip, tick, warm-up and split."""
    rows = []
    for m in manifests:
        for a in m.actors:
            rows.append(
                {
                    "sample_id": m.sample_id,
                    "template_id": m.template_id,
                    "actor_id": a.id,
                    "kind": a.kind,
                    "role": a.role,
                    "length_m": a.dims.l,
                    "width_m": a.dims.w,
                    "height_m": a.dims.h,
                    "initial_speed_mps": a.initial.speed_mps,
                    "cruise_speed_mps": a.behavior.cruise_speed_mps if a.behavior.cruise_speed_mps is not None else math.nan,
                    "clip_s": m.clip_s,
                    "dt": m.dt,
                    "warmup_s": m.warmup_s,
                    "split": m.split,
                }
            )
    return pd.DataFrame(rows)


def validity_frame(reports: Sequence[ValidityReport]) -> pd.DataFrame:
    """One row per report: its scores, decision and weight, and what the policy says they should be."""
    rows = []
    for r in reports:
        row: dict[str, Any] = {
            "sample_id": r.sample_id,
            "policy_version": r.policy_version,
            "fidelity": r.fidelity,
            "realism": r.realism,
            "validity": r.validity,
            "accepted": r.accepted,
            "weight": r.weight,
            "capped": r.capped,
            "n_reasons": len(r.reasons),
        }
        for c in r.checks:
            row[f"score_{c.check}"] = c.score
            row[f"passed_{c.check}"] = c.passed
        expected_weight, expected_capped = weight_policy(r.accepted, r.fidelity)
        required = all(row.get(f"passed_{k}", False) for k in policy.REQUIRED_CHECKS)
        row["policy_weight"] = expected_weight
        row["policy_capped"] = expected_capped
        row["acceptance_rule_holds"] = r.accepted == (required and r.validity >= policy.ACCEPT_MIN_VALIDITY)
        row["rejected_has_reason"] = r.accepted or len(r.reasons) > 0
        rows.append(row)
    return pd.DataFrame(rows)


# --- suites -----------------------------------------------------------------------


def _trajectory_expectations(gxe: ModuleType) -> list[Any]:
    out = [gxe.ExpectTableRowCountToBeBetween(min_value=1, description="the trace has ticks")]
    out += [gxe.ExpectCompoundColumnsToBeUnique(column_list=["tick", "actor_id"], description="one row per (tick, actor)")]
    for c in ("t", "x", "y", "z", "qx", "qy", "qz", "qw", "vx", "vy", "speed_mps"):
        out.append(gxe.ExpectColumnValuesToNotBeNull(column=c, description=f"{c} is finite (not NaN)"))
    for c in ("x", "y", "z"):
        out.append(gxe.ExpectColumnValuesToBeBetween(column=c, min_value=-MAX_COORD_M, max_value=MAX_COORD_M,
                                                     description=f"{c} is finite and within ±{MAX_COORD_M:g} m"))
    for c in ("qx", "qy", "qz", "qw"):
        out.append(gxe.ExpectColumnValuesToBeBetween(column=c, min_value=-1.0, max_value=1.0,
                                                     description=f"quaternion component {c} in [-1, 1]"))
    out.append(gxe.ExpectColumnValuesToBeInSet(column="actor_class", value_set=sorted(policy.CLASS_LIMITS),
                                               description="every actor has a class the gate has limits for"))
    for cls, limit in sorted(policy.CLASS_LIMITS.items()):
        out.append(gxe.ExpectColumnValuesToBeBetween(
            column="speed_mps", min_value=0.0, max_value=limit.max_speed_mps, row_condition=f'actor_class=="{cls}"',
            condition_parser="pandas", description=f"{cls} speed within {limit.max_speed_mps:g} m/s ({policy.POLICY_VERSION})"))
    out.append(gxe.ExpectColumnValuesToBeBetween(column="t_step_s", min_value=0.0, strict_min=True,
                                                 description="time increases per actor"))
    return out


def _rejection_expectations(gxe: ModuleType) -> list[Any]:
    out = [gxe.ExpectColumnToExist(column=c, description=f"the log has a {c} column") for c in ("stage", "reason", "detail")]
    for c in ("stage", "reason", "detail"):
        out.append(gxe.ExpectColumnValuesToNotBeNull(column=c, description=f"every rejection has a {c}"))
        out.append(gxe.ExpectColumnValueLengthsToBeBetween(column=c, min_value=1, description=f"no empty {c}"))
    return out


def _manifest_expectations(gxe: ModuleType) -> list[Any]:
    out = [gxe.ExpectTableRowCountToBeBetween(min_value=1, description="at least one actor")]
    out.append(gxe.ExpectCompoundColumnsToBeUnique(column_list=["sample_id", "actor_id"], description="actor ids unique per manifest"))
    out.append(gxe.ExpectColumnValuesToBeInSet(column="kind", value_set=sorted(policy.CLASS_LIMITS), description="known actor kind"))
    for c in ("length_m", "width_m", "height_m"):
        out.append(gxe.ExpectColumnValuesToNotBeNull(column=c, description=f"{c} given"))
        out.append(gxe.ExpectColumnValuesToBeBetween(column=c, min_value=0.0, max_value=MAX_DIM_M, strict_min=True,
                                                     description=f"{c} in (0, {MAX_DIM_M:g}] m"))
    for cls, limit in sorted(policy.CLASS_LIMITS.items()):
        for c in ("initial_speed_mps", "cruise_speed_mps"):
            out.append(gxe.ExpectColumnValuesToBeBetween(
                column=c, min_value=0.0, max_value=limit.max_speed_mps, row_condition=f'kind=="{cls}"',
                condition_parser="pandas", description=f"{cls} {c} within {limit.max_speed_mps:g} m/s"))
    out.append(gxe.ExpectColumnValuesToBeBetween(column="clip_s", min_value=0.0, max_value=MAX_CLIP_S, strict_min=True,
                                                 description=f"clip in (0, {MAX_CLIP_S:g}] s"))
    out.append(gxe.ExpectColumnValuesToBeBetween(column="dt", min_value=MIN_DT_S, max_value=MAX_DT_S,
                                                 description=f"tick in [{MIN_DT_S:g}, {MAX_DT_S:g}] s"))
    out.append(gxe.ExpectColumnValuesToBeInSet(column="split", value_set=list(SPLITS), description="a valid split"))
    return out


def _validity_expectations(gxe: ModuleType) -> list[Any]:
    out = [gxe.ExpectColumnValuesToBeInSet(column="policy_version", value_set=[policy.POLICY_VERSION],
                                           description="scored under the current policy")]
    out.append(gxe.ExpectColumnValuesToBeUnique(column="sample_id", description="one report per sample"))
    for c in ["fidelity", "realism", "validity", "weight"] + [f"score_{k}" for k in CHECK_NAMES]:
        out.append(gxe.ExpectColumnValuesToNotBeNull(column=c, description=f"{c} given"))
        out.append(gxe.ExpectColumnValuesToBeBetween(column=c, min_value=0.0, max_value=1.0, description=f"{c} in [0, 1]"))
    out.append(gxe.ExpectColumnPairValuesToBeEqual(column_A="weight", column_B="policy_weight",
                                                   description="weight equals weight_policy(accepted, fidelity)"))
    out.append(gxe.ExpectColumnPairValuesToBeEqual(column_A="capped", column_B="policy_capped",
                                                   description="capped flag equals the policy's"))
    out.append(gxe.ExpectColumnValuesToBeInSet(column="acceptance_rule_holds", value_set=[True],
                                               description="accepted iff physical and temporal pass and validity ≥ 0.50"))
    out.append(gxe.ExpectColumnValuesToBeInSet(column="rejected_has_reason", value_set=[True],
                                               description="every rejected report gives a reason"))
    return out


_BUILDERS: dict[str, Callable[[Any], list[Any]]] = {
    "trajectories": _trajectory_expectations,
    "rejection_log": _rejection_expectations,
    "manifests": _manifest_expectations,
    "validity_reports": _validity_expectations,
}


class _Gx:
    """One ephemeral GX context with every suite registered once (see the module docstring)."""

    def __init__(self) -> None:
        gx = _import_gx()
        self.gx = gx
        self.context = _new_context(gx)
        self.datasource = self.context.data_sources.add_pandas(DATASOURCE_NAME)
        self.definitions: dict[str, Any] = {}

    def definition(self, name: str) -> Any:
        vd = self.definitions.get(name)
        if vd is None:
            vd = _register(self.gx, self.context, self.datasource, name)
            self.definitions[name] = vd
        return vd


def _import_gx() -> Any:
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    import great_expectations as gx  # heavy: Great Expectations (~9 s), only for the expectation suites

    return gx


def _new_context(gx: ModuleType) -> Any:
    # heavy: Great Expectations (~9 s), only for the expectation suites
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    return context


def _register(gx: ModuleType, context: Any, datasource: Any, name: str) -> Any:
    import great_expectations.expectations as gxe  # heavy: Great Expectations (~9 s), only for the expectation suites

    batch = datasource.add_dataframe_asset(name).add_batch_definition_whole_dataframe(f"{name}_whole")
    suite = context.suites.add(gx.ExpectationSuite(name=name))
    for expectation in _BUILDERS[name](gxe):
        suite.add_expectation(expectation)
    return context.validation_definitions.add(gx.ValidationDefinition(name=f"{name}_validation", data=batch, suite=suite))


_STATE: _Gx | None = None


def _gx_state() -> _Gx:
    global _STATE
    if _STATE is None:
        _STATE = _Gx()
    return _STATE


def _check_name(name: str) -> None:
    if name not in _BUILDERS:
        raise ValueError(f"unknown suite {name!r}; known: {', '.join(SUITES)}")


def run_suite(name: str, df: pd.DataFrame) -> SuiteResult:
    """Validate ``df`` against suite ``name`` (one of :data:`SUITES`)."""
    _check_name(name)
    result = _gx_state().definition(name).run(batch_parameters={"dataframe": df}, result_format="BASIC")
    out = _suite_result(name, result)
    out._frame = df
    return out


def _suite_result(name: str, result: Any) -> SuiteResult:
    outcomes = []
    for r in result.results:
        cfg = r.expectation_config
        observed = _observed(dict(r.result or {}))
        info = r.exception_info or {}
        if info.get("raised_exception"):
            observed["error"] = str(info.get("exception_message", "")).splitlines()[0] if info.get("exception_message") else "raised"
        elif not r.success and not observed:
            observed["error"] = "not evaluable (missing column?)"
        outcomes.append(ExpectationOutcome(expectation=_describe(cfg), success=bool(r.success), observed=observed))
    stats = result.statistics
    return SuiteResult(suite=name, success=bool(result.success), evaluated=int(stats["evaluated_expectations"]),
                       successful=int(stats["successful_expectations"]), results=outcomes)


def _describe(cfg: Any) -> str:
    kwargs = {k: v for k, v in cfg.kwargs.items() if k not in ("batch_id", "condition_parser") and v is not None}
    cond = kwargs.pop("row_condition", None)
    args = ", ".join(f"{k}={_plain(v)}" for k, v in kwargs.items())
    text = f"{cfg.type}({args})"
    if cond:
        text += f" where {cond.get('pass_through_filter', cond) if isinstance(cond, Mapping) else cond}"
    return text


def _plain(value: Any) -> Any:
    """JSON-ready copy: numpy scalars to Python, NaN/inf to None, tuples to lists."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _observed(result: Mapping[str, Any]) -> dict[str, Any]:
    keep = ("observed_value", "element_count", "unexpected_count", "unexpected_percent", "missing_count")
    out = {k: _plain(result[k]) for k in keep if k in result}
    if "partial_unexpected_list" in result:
        out["unexpected_values"] = _plain(list(result["partial_unexpected_list"])[:MAX_OBSERVED_VALUES])
    return out


def _short(observed: Mapping[str, Any]) -> str:
    """``k=v, …`` of what GX observed, floats to 4 decimals; a figure it could not compute (None: a condition
    left no row to test) is left out rather than shown as "None"."""
    return ", ".join(f"{k}={round(v, 4) if isinstance(v, float) else v}" for k, v in observed.items() if v is not None)


# --- Data Docs --------------------------------------------------------------------------

#: Every validation on a site is stored under this run time. GX puts the run time in a page's path; a fixed one
#: makes the path a function of (suite, asset, partition) alone, so a Dagster check can link the page of its
#: partition and a rebuild replaces it. What the pages and the index *show* is when the tables were validated
#: (``build_data_docs``' ``validated_at``): the site is a report, kept out of every fingerprint and data version.
DOCS_RUN_TIME = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
UNPARTITIONED = "unpartitioned"


class DocsBatch(NamedTuple):
    """One validation on a Data Docs site: suite ``suite`` over ``frame``, the table of data asset ``asset``
    (the Dagster asset it belongs to; the suite's name when None) in ``partition`` (a Dagster partition key;
    None for a table that is not one partition's)."""

    suite: str
    frame: pd.DataFrame
    asset: str | None = None
    partition: str | None = None

    @property
    def label(self) -> str:
        """The partition as GX's run name and a path segment: ``|`` between dimensions becomes ``.``."""
        if self.partition is None:
            return UNPARTITIONED
        label = self.partition.replace("|", ".")
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", label) or label in (".", ".."):
            raise ValueError(f"partition key {self.partition!r}: only letters, digits, '_', '-', '.' and '|' name a page")
        return label

    @property
    def data_asset(self) -> str:
        return self.asset or self.suite


def validation_page(suite: str, asset: str | None = None, partition: str | None = None) -> str:
    """The path of a validation's page in a site built by :func:`build_data_docs`, relative to its root."""
    batch = DocsBatch(suite, pd.DataFrame(), asset, partition)
    return f"validations/{suite}/{batch.label}/{DOCS_RUN_TIME:%Y%m%dT%H%M%S.%fZ}/{batch.data_asset}.{batch.label}.html"


def build_data_docs(results: Iterable[SuiteResult | DocsBatch | tuple[str, pd.DataFrame]], out_dir: str | Path,
                    validated_at: datetime.datetime | None = None) -> Path:
    """Write the GX Data Docs site for ``results`` under ``out_dir``, to open offline; return its ``index.html``.

    Each item is a :class:`DocsBatch`, a :class:`SuiteResult` from :func:`run_suite` in this process (it keeps
    its table) or a ``(suite name, table)`` pair. Each table is validated again and its result stored under its
    data asset and partition (GX's own dataframe batches name neither, and its pages say "Data asset: None"),
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

    gx = _import_gx()
    validated_at = (validated_at or datetime.datetime.now(datetime.timezone.utc)).replace(microsecond=0)
    if validated_at.tzinfo is None:
        raise ValueError(f"validated_at {validated_at} has no timezone")
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    context = _new_context(gx)
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
        _check_name(batch.suite)
        page = validation_page(batch.suite, batch.asset, batch.partition)
        if page in pages:
            raise ValueError(f"two tables for one page: suite {batch.suite!r}, asset {batch.data_asset!r}, "
                             f"partition {batch.partition!r}")
        pages[page] = batch
        if batch.suite not in registered:
            registered[batch.suite] = _register(gx, context, datasource, batch.suite)
        run_id = RunIdentifier(run_name=batch.label, run_time=DOCS_RUN_TIME)
        result = registered[batch.suite].run(batch_parameters={"dataframe": batch.frame}, run_id=run_id)
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
