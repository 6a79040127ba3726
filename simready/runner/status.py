"""``simready status``: fresh or stale for every asset partition, with the upstream reason.

Why: Dagster's own stale status is not transitive — after a template changes
only its direct children show *stale*; grandchildren look fresh until the
children are rematerialized. Reviewers need the whole cascade, so this walks
the graph in topological order and marks a partition stale when Dagster says
so *or* when any partition it depends on is (transitively) stale, naming the
root cause.

It also names the runs that were interrupted: a process killed hard (``kill
-9``, a crash) leaves its runs STARTED in the instance forever. ``simready
run`` tags each run with its owner process (:func:`owner_tags`); a run still
STARTING, STARTED or CANCELING whose owner on this host is gone was
interrupted.

A CLI entry point that reads Dagster's instance and asset graph, so it
imports Dagster (its internal stale-status API too) — with
:mod:`simready.runner.main_job` the only module besides ``definitions.py``,
``assets/``, ``checks/`` and ``resources/`` that does.
"""

import datetime as _dt
import os
import socket
from dataclasses import dataclass

import dagster as dg
from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
from dagster._core.definitions.events import AssetKeyPartitionKey
from dagster._core.definitions.partitions.context import partition_loading_context
from dagster._core.events import DagsterEventType
from dagster._core.storage.tags import PARTITION_NAME_TAG
from dagster._utils.caching_instance_queryer import CachingInstanceQueryer

from simready.common.atomic import pid_alive

#: The run tag naming the process that executes a run in-process: ``<host>:<pid>``.
OWNER_TAG = "simready/owner"
_UNFINISHED = [dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]


@dataclass(frozen=True)
class PartitionStatus:
    asset: str
    partition: str | None
    status: str  # fresh | stale | missing
    reason: str

    def line(self) -> str:
        part = self.partition or "-"
        return f"{self.status:<8} {self.asset:<22} {part:<52} {self.reason}"


class _PartitionsReadPerAsset(CachingInstanceQueryer):
    """Dagster's queryer, except that the latest materialization of every partition of the given assets is read
    with two queries per asset (the latest storage id per partition, then those records) instead of one query per
    partition: the default suite's 57 partitions cost ~150 queries, most of the status's time (issue 19 item 6)."""

    def latest_storage_id(self, asset_partition: AssetKeyPartitionKey) -> int | None:
        """The partition's latest materialization's storage id, when its asset was read ahead; else ``None``."""
        record = self._latest.get(asset_partition.asset_key, {}).get(asset_partition.partition_key)
        return record.storage_id if record is not None else None

    def __init__(self, instance: dg.DagsterInstance, asset_graph, loading_context, asset_keys) -> None:
        super().__init__(instance, asset_graph, loading_context)
        self._latest: dict[dg.AssetKey, dict[str, object]] = {}
        for key in asset_keys:
            ids = sorted(instance.get_latest_storage_id_by_partition(key, DagsterEventType.ASSET_MATERIALIZATION).values())
            records = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=key, storage_ids=ids),
                                                      limit=len(ids)).records if ids else []
            self._latest[key] = {r.partition_key: r for r in records}

    def _get_latest_materialization_or_observation_record(self, *, asset_partition: AssetKeyPartitionKey,
                                                          before_cursor: int | None = None):
        latest = self._latest.get(asset_partition.asset_key)
        if latest is None or asset_partition.partition_key is None or before_cursor is not None:
            return super()._get_latest_materialization_or_observation_record(asset_partition=asset_partition,
                                                                             before_cursor=before_cursor)
        return latest.get(asset_partition.partition_key)


class _StaleStatusReadAhead(CachingStaleStatusResolver):
    """Dagster's stale-status resolver, except that a partitioned dependency whose latest materialization (read
    ahead by :class:`_PartitionsReadPerAsset`) is not newer than the one a partition was computed from is known
    unchanged without Dagster's query per dependency: most of what a fresh graph asks."""

    def _is_dep_updated(self, provenance, dep_key: AssetKeyPartitionKey) -> bool:
        cursor = provenance.input_storage_ids.get(dep_key.asset_key) if dep_key.partition_key is not None else None
        latest = self.instance_queryer.latest_storage_id(dep_key) if cursor is not None else None
        if latest is not None and latest <= cursor:
            return False
        return super()._is_dep_updated(provenance, dep_key)


def _view(instance: dg.DagsterInstance, asset_graph) -> AssetGraphView:
    return AssetGraphView(
        temporal_context=TemporalContext(effective_dt=_dt.datetime.now(_dt.timezone.utc), last_event_id=None),
        instance=instance,
        asset_graph=asset_graph,
    )


def _resolver(defs: dg.Definitions, instance: dg.DagsterInstance) -> tuple[CachingStaleStatusResolver, object]:
    asset_graph = defs.resolve_asset_graph()
    view = _view(instance, asset_graph)
    partitioned = [key for key in asset_graph.toposorted_asset_keys
                   if asset_graph.get(key).is_materializable and asset_graph.get(key).is_partitioned
                   and not asset_graph.get(key).is_observable]
    queryer = _PartitionsReadPerAsset(instance, asset_graph, view, partitioned)
    # Every asset's record in one query, not one per asset as the walk first asks for it.
    queryer.prefetch_asset_records(asset_graph.toposorted_asset_keys)
    return (_StaleStatusReadAhead(instance=instance, asset_graph=asset_graph, loading_context=view,
                                  instance_queryer=queryer), asset_graph)


def _partition_keys(asset_graph, key: dg.AssetKey, instance: dg.DagsterInstance) -> list[str | None]:
    partitions_def = asset_graph.get(key).partitions_def
    if partitions_def is None:
        return [None]
    return sorted(partitions_def.get_partition_keys(dynamic_partitions_store=instance))


def _parents(asset_graph, key: dg.AssetKey, partition: str | None) -> list[AssetKeyPartitionKey]:
    result = asset_graph.get_parents_partitions(key, partition)
    return sorted(result.parent_partitions, key=lambda p: (p.asset_key.to_user_string(), p.partition_key or ""))


def _describe_causes(resolver: CachingStaleStatusResolver, key: dg.AssetKey, partition: str | None) -> str:
    causes = resolver.get_stale_causes(key, partition)
    if not causes:
        return "stale (no cause reported)"
    c = causes[0]
    dep = c.dependency.asset_key.to_user_string() if c.dependency else ""
    dep_part = f"[{c.dependency.partition_key}]" if c.dependency and c.dependency.partition_key else ""
    # Some of Dagster's reasons name the dependency already ("has a new dependency on x").
    named = dep and c.reason.endswith(f" {dep}")
    return f"{c.category.name.lower()}: {c.reason}{dep_part if named else f' {dep}{dep_part}'}".strip()


def graph_status(defs: dg.Definitions, instance: dg.DagsterInstance) -> list[PartitionStatus]:
    """Status of every asset partition in topological order (parents before children)."""
    resolver, asset_graph = _resolver(defs, instance)
    out: dict[AssetKeyPartitionKey, PartitionStatus] = {}
    with partition_loading_context(dynamic_partitions_store=instance):
        for key in asset_graph.toposorted_asset_keys:
            if not asset_graph.get(key).is_materializable:
                continue
            for partition in _partition_keys(asset_graph, key, instance):
                out[AssetKeyPartitionKey(key, partition)] = _status_of(resolver, asset_graph, key, partition, out)
    return list(out.values())


def _status_of(resolver, asset_graph, key, partition, known) -> PartitionStatus:
    name = key.to_user_string()
    own = resolver.get_status(key, partition)
    if own == StaleStatus.MISSING:
        return PartitionStatus(name, partition, "missing", "never materialized")
    for parent in _parents(asset_graph, key, partition):
        upstream = known.get(parent)
        if upstream is not None and upstream.status != "fresh":
            where = parent.asset_key.to_user_string() + (f"[{parent.partition_key}]" if parent.partition_key else "")
            root = upstream.reason if upstream.reason.startswith("upstream") else f"{where}: {upstream.reason}"
            return PartitionStatus(name, partition, "stale", root if root.startswith("upstream") else f"upstream {root}")
    if own == StaleStatus.STALE:
        return PartitionStatus(name, partition, "stale", _describe_causes(resolver, key, partition))
    return PartitionStatus(name, partition, "fresh", "")


def owner_tags() -> dict[str, str]:
    """Tags that name this process as the owner of the runs it executes."""
    return {OWNER_TAG: f"{socket.gethostname()}:{os.getpid()}"}


@dataclass(frozen=True)
class InterruptedRun:
    run_id: str
    job: str
    partition: str | None
    status: str
    owner: str

    def line(self) -> str:
        part = f"[{self.partition}]" if self.partition else ""
        return (f"interrupted {self.job}{part} run {self.run_id}: left {self.status} by process {self.owner}, "
                "which is gone")


def interrupted_runs(instance: dg.DagsterInstance) -> list[InterruptedRun]:
    """Runs left unfinished whose owner process (on this host) no longer exists, oldest first."""
    host = socket.gethostname()
    out = []
    for record in instance.get_run_records(filters=dg.RunsFilter(statuses=_UNFINISHED), ascending=True):
        run = record.dagster_run
        owner_host, _, pid = run.tags.get(OWNER_TAG, "").rpartition(":")
        if owner_host != host or not pid.isdigit() or pid_alive(int(pid)):
            continue
        out.append(InterruptedRun(run.run_id, run.job_name, run.tags.get(PARTITION_NAME_TAG), run.status.value,
                                  run.tags[OWNER_TAG]))
    return out


def status_lines(rows: list[PartitionStatus], interrupted: list[InterruptedRun], where: str,
                 everything: bool = False, observed: list[str] = ()) -> list[str]:
    """What ``simready status`` prints: a header naming the instance, the inputs whose new observation it has just
    recorded (``observed``: :func:`simready.assets.inputs.record_observations`) with the files that changed, the
    partitions that are not fresh (every one with ``everything``) under column titles, a summary line, then the
    interrupted runs."""
    shown = [r for r in rows if everything or r.status != "fresh"]
    assets = len({r.asset for r in rows})
    lines = [f"simready status: {len(rows)} partitions of {assets} assets in {where}"
             f"{'' if everything else ' (not fresh only; --all lists every one)'}"]
    lines += [f"observed {line}" for line in observed]
    if shown:
        lines.append(PartitionStatus(asset="asset", partition="partition", status="status", reason="reason").line())
    lines += [row.line() for row in shown]
    counts = {s: sum(1 for r in rows if r.status == s) for s in ("fresh", "stale", "missing")}
    lines.append(f"{counts['fresh']} fresh, {counts['stale']} stale, {counts['missing']} missing")
    lines += [run.line() for run in interrupted]
    if interrupted:
        lines.append(f"{len(interrupted)} run(s) interrupted: their partitions are as the run left them; rerun them")
    return lines


def print_status(defs: dg.Definitions, instance: dg.DagsterInstance, everything: bool = False,
                 observed: list[str] = ()) -> int:
    """Print :func:`status_lines` for the instance; 0: the report is complete, whatever it says."""
    lines = status_lines(graph_status(defs, instance), interrupted_runs(instance),
                         instance.root_directory or "the instance", everything, observed)
    print("\n".join(lines))
    return 0
