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
check metadata); :mod:`simready.validity.data_docs` writes them as the GX Data Docs site
for reviewers.

Why lazily imported and cached: ``import great_expectations`` costs ~3 s, so nothing
imports it until a suite runs, and one ephemeral context (with its suites and
validation definitions) is reused for the rest of the process. Data Docs use a fresh
ephemeral context per site (~10 ms) so that a site shows exactly the results it is given.
GX's anonymous usage analytics are off (``GX_ANALYTICS_ENABLED=false``) unless the
environment says otherwise: the gate runs offline.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, PrivateAttr

from simready.validity import policy
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
#: The result format of the validations the Data Docs pages render (GX's default): their pages show each unexpected
#: value with its count, where BASIC (:func:`run_suite`'s) keeps a sample of the values; without an unexpected value
#: the two render the same page.
DOCS_RESULT_FORMAT = "SUMMARY"
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
    _validation: Any = PrivateAttr(default=None)  # GX's ExpectationSuiteValidationResult, in the process that ran it

    def gx_result(self) -> Any:
        """GX's own result of this run (an ``ExpectationSuiteValidationResult``; None once deserialized), for
        :func:`simready.validity.data_docs.result_json`."""
        return self._validation

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
        gx = import_gx()
        self.gx = gx
        self.context = new_context(gx)
        self.datasource = self.context.data_sources.add_pandas(DATASOURCE_NAME)
        self.definitions: dict[str, Any] = {}

    def definition(self, name: str) -> Any:
        vd = self.definitions.get(name)
        if vd is None:
            vd = register_suite(self.gx, self.context, self.datasource, name)
            self.definitions[name] = vd
        return vd


def import_gx() -> Any:
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    import great_expectations as gx  # heavy: Great Expectations (~9 s), only for the expectation suites

    return gx


def new_context(gx: ModuleType) -> Any:
    # heavy: Great Expectations (~9 s), only for the expectation suites
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    return context


def register_suite(gx: ModuleType, context: Any, datasource: Any, name: str) -> Any:
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


def warm_suites() -> None:
    """The GX context made and every suite registered here, once, and each run once over an empty table of the
    columns it names (its result dropped): GX builds its metric providers and caches on a suite's first validation
    in a process. The processes forked after it (the main job's runs, whose checks validate with them) inherit
    all of it instead of each doing it again: a sample batch's three suites 1.33 → 0.60 CPU-s in a forked process,
    for ~1.1 CPU-s here once."""
    state = _gx_state()
    for name in _BUILDERS:
        definition = state.definition(name)
        columns: set[str] = set()
        for expectation in definition.suite.expectations:
            kwargs = expectation.configuration.kwargs
            columns.update(str(kwargs[k]) for k in ("column", "column_A", "column_B") if kwargs.get(k))
            columns.update(str(c) for c in kwargs.get("column_list") or ())
        empty = pd.DataFrame({c: pd.Series([], dtype=float) for c in sorted(columns)})
        definition.run(batch_parameters={"dataframe": empty}, result_format="BASIC")


def check_suite_name(name: str) -> None:
    if name not in _BUILDERS:
        raise ValueError(f"unknown suite {name!r}; known: {', '.join(SUITES)}")


def run_suite(name: str, df: pd.DataFrame, result_format: str = "BASIC") -> SuiteResult:
    """Validate ``df`` against suite ``name`` (one of :data:`SUITES`); ``result_format``: GX's (the
    :class:`SuiteResult` is the same under BASIC and :data:`DOCS_RESULT_FORMAT`; BASIC costs ~40 % less CPU)."""
    check_suite_name(name)
    result = _gx_state().definition(name).run(batch_parameters={"dataframe": df}, result_format=result_format)
    out = _suite_result(name, result)
    out._frame = df
    out._validation = result
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
