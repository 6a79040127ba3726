"""The production deployment on loopback: Postgres, Redis, S3, Celery workers and the Dagster daemon.

What a team runs on several machines (``docs/deploy.md``), here as processes of one machine that share
nothing but the network: each worker has its own working directory, home, temporary folder and artifact
cache, and reaches the run only through Postgres (events), Redis (the step queue) and S3 (artifacts).
Used by the end-to-end tests (``tests/test_production.py``) and the scale figures of ``make bench``.

Runs are launched as a user launches them on a deployment: ``dagster job launch`` puts each run on the
instance's queue (``QueuedRunCoordinator``), the daemon starts it under the queue's tag limits, the run
process sends every step to the Celery workers.

The code location is one gRPC code server (``dagster api grpc``), as in the AWS layout (``docs/deploy.md``):
the daemon and every ``dagster`` command reach it through the stack's workspace file (a ``grpc_server``
entry), and it starts the run processes. A workspace that names the Python module instead would have each
command start a code server of its own and load the definitions again (seconds of CPU per launch).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg

from simready.common import paths
from simready.resources import ArtifactStore, SourceData
from simready.store.s3 import S3Store, s3_client
from simready.testing.servers import (
    HOST,
    ManagedProcess,
    PostgresServer,
    RedisServer,
    S3Server,
    postgres_server,
    redis_server,
    s3_server,
    sqlalchemy_url,
    start_on_free_port,
    stop_all,
)

BUCKET = "simready-artifacts"
PREFIX = "deploy"
PRODUCTION_INSTANCE = paths.PROJECT_ROOT / "deploy" / "production" / "dagster.yaml"
LOCATION = "simready"  # workspace.yaml's location name, the code server's too
TERMINAL = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED}


def _bin(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


@dataclass
class ProductionStack:
    """The servers, the environment every process of the deployment shares, and its processes."""

    root: Path
    postgres: PostgresServer
    redis: RedisServer
    s3: S3Server
    env: dict[str, str]
    workers: dict[str, ManagedProcess] = field(default_factory=dict)
    daemon: ManagedProcess | None = None
    code_server: ManagedProcess | None = None

    @property
    def dagster_home(self) -> Path:
        return Path(self.env["DAGSTER_HOME"])

    @property
    def workspace(self) -> Path:
        """The workspace file every Dagster process of the stack loads: the code server's address."""
        return self.root / "workspace.yaml"

    def start_code_server(self, timeout_s: float = 120) -> ManagedProcess:
        """``dagster api grpc`` serving ``simready.definitions`` on loopback, and the workspace file naming it."""
        log = self.root / "code_server.log"

        def launch(port: int) -> ManagedProcess:
            argv = [_bin("dagster"), "api", "grpc", "-h", HOST, "-p", str(port), "-m", "simready.definitions",
                    "--location-name", LOCATION]
            return ManagedProcess(argv, log_path=log, env=self.env, cwd=paths.PROJECT_ROOT, name="dagster-code-server")

        def ready(port: int) -> bool:  # logged once the definitions are loaded, then the port is served
            started = any("Started Dagster code server" in line and f" on port {port} " in line
                          for line in self.code_server_log().splitlines())
            if started:
                socket.create_connection((HOST, port), timeout=1).close()
            return started

        self.code_server, port = start_on_free_port(launch, ready, timeout_s)
        self.workspace.write_text(json.dumps(
            {"load_from": [{"grpc_server": {"host": HOST, "port": port, "location_name": LOCATION}}]}))
        return self.code_server

    def code_server_log(self) -> str:
        path = self.root / "code_server.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def instance(self) -> dg.DagsterInstance:
        """The production instance (Postgres) as this process sees it; close it after use."""
        saved = {k: os.environ.get(k) for k in self.env}
        os.environ.update(self.env)
        try:
            return dg.DagsterInstance.from_config(str(self.dagster_home))
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def s3_client(self):
        return s3_client(30, 3, endpoint_url=self.s3.endpoint_url, region_name="us-east-1",
                         aws_access_key_id=self.env["AWS_ACCESS_KEY_ID"],
                         aws_secret_access_key=self.env["AWS_SECRET_ACCESS_KEY"])

    def store(self, cache: Path):
        """The artifact store as a reader elsewhere sees it (its own cache folder)."""
        return S3Store(self.s3_client(), BUCKET, PREFIX, cache_dir=cache, endpoint=self.s3.endpoint_url)

    # -- processes ----------------------------------------------------------------------------------

    def start_worker(self, name: str) -> ManagedProcess:
        """A Celery worker with nothing on disk in common with the run or the other workers (one task at a time)."""
        proc = self._launch_worker(name)
        self._wait_worker(proc)
        return proc

    def start_operations(self, *worker_names: str) -> None:
        """What runs need besides the code server, in the order that waits least: the Celery workers start (each
        imports the code for seconds) while the automation is turned off (:meth:`stop_automation`), then the daemon
        once the sensors are off and the workers ready."""
        procs = [self._launch_worker(name) for name in worker_names]
        self.stop_automation()
        for proc in procs:
            self._wait_worker(proc)
        self.start_daemon()

    @staticmethod
    def _wait_worker(proc: ManagedProcess) -> None:
        proc.wait_ready(lambda: " ready." in proc.read_log(), 90)

    def _launch_worker(self, name: str) -> ManagedProcess:
        home = self.root / "workers" / name
        for sub in ("cwd", "home", "tmp", "cache", "dagster_home"):
            (home / sub).mkdir(parents=True, exist_ok=True)
        shutil.copy(PRODUCTION_INSTANCE, home / "dagster_home" / "dagster.yaml")
        env = {**self.env, "HOME": str(home / "home"), "TMPDIR": str(home / "tmp"), "SIMREADY_CACHE": str(home / "cache"),
               "DAGSTER_HOME": str(home / "dagster_home")}
        argv = [_bin("celery"), "-A", "simready.resources.celery_app", "worker", "-Q", "dagster", "--concurrency", "1",
                "--loglevel", "INFO", "-n", f"{name}@%h", "--without-gossip", "--without-mingle"]
        proc = ManagedProcess(argv, log_path=home / "worker.log", env=env, cwd=home / "cwd", name=f"celery-{name}")
        self.workers[name] = proc
        return proc

    def stop_automation(self) -> None:
        """Turn off the code location's sensors and schedule (``dagster sensor stop`` / ``schedule stop``), as an
        operator does, so that only the runs a test launches run: the eager cascade would otherwise launch its own
        runs of the same partitions at times of its choosing."""
        # Dagster definitions, only for the production stack
        from simready.assets.orchestration import automation_sensor, daily_batch_schedule, source_files_sensor

        commands = [["sensor", "stop", automation_sensor.name], ["sensor", "stop", source_files_sensor.name],
                    ["schedule", "stop", daily_batch_schedule.name]]
        procs = [subprocess.Popen([_bin("dagster"), *c, "-w", str(self.workspace)], env=self.env, cwd=paths.PROJECT_ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in commands]
        for command, proc in zip(commands, procs):
            out, err = proc.communicate(timeout=180)
            if proc.returncode != 0:
                raise RuntimeError(f"dagster {' '.join(command)} failed: {(err or out).strip().splitlines()[-1:]}")

    def start_daemon(self) -> ManagedProcess:
        """``dagster-daemon run``: drains the run queue, launches runs, retries failed ones."""
        log = self.root / "daemon.log"
        self.daemon = ManagedProcess([_bin("dagster-daemon"), "run", "-w", str(self.workspace)], log_path=log, env=self.env,
                                     cwd=paths.PROJECT_ROOT, name="dagster-daemon")
        self.daemon.wait_ready(lambda: "QueuedRunCoordinatorDaemon" in self.daemon.read_log(), 120)
        return self.daemon

    def launch(self, job: str, tags: dict[str, str] | None = None, op_selection: str | None = None) -> str:
        """Queue a run as a user does (``dagster job launch``); its id. ``op_selection`` runs part of the job
        (``dagster job launch -o``: ``"observations_and_truth*"`` is that step and what follows it)."""
        return self.launch_all(job, [tags or {}], op_selection)[0]

    def launch_all(self, job: str, tag_sets: list[dict[str, str]], op_selection: str | None = None) -> list[str]:
        """Queue one run per tag set at once (the launches run side by side: each loads the code location for
        seconds, so one after the other the first run could end before the last is queued); their ids."""
        run_ids = [str(uuid.uuid4()) for _ in tag_sets]
        selection = ["-o", op_selection] if op_selection else []
        procs = [subprocess.Popen(
            [_bin("dagster"), "job", "launch", "-w", str(self.workspace), "-j", job, "--run-id", run_id,
             "--tags", json.dumps(tags), *selection],
            env=self.env, cwd=paths.PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for run_id, tags in zip(run_ids, tag_sets)]
        for proc in procs:
            _, err = proc.communicate(timeout=180)
            if proc.returncode != 0:
                raise RuntimeError(f"dagster job launch {job} failed: {err.strip().splitlines()[-1:]}")
        return run_ids

    def wait(self, instance: dg.DagsterInstance, run_ids: list[str], timeout_s: float = 900) -> dict[str, dg.DagsterRun]:
        """Block until every run has ended; the runs."""
        deadline = time.monotonic() + timeout_s
        while True:
            # One query for all the runs: every query opens a Postgres connection (dagster-postgres pools none).
            found = {run.run_id: run for run in instance.get_runs(dg.RunsFilter(run_ids=list(run_ids)))}
            runs = {r: found.get(r) for r in run_ids}
            if all(run is not None and run.status in TERMINAL for run in runs.values()):
                return runs
            if time.monotonic() > deadline:
                states = {r: (run.status.value if run else "missing") for r, run in runs.items()}
                raise TimeoutError(f"runs still going after {timeout_s:.0f} s: {states}; daemon log: "
                                   f"{self.daemon.log_tail() if self.daemon else '-'}")
            time.sleep(0.5)


def local_definitions(artifacts: str | Path, suite_file: str | Path) -> dg.Definitions:
    """The jobs a production stack runs, on the local deployment (in-process, a local folder): the reference the
    production tests compare against and the floor the bench measures."""
    from simready import definitions as d  # Dagster definitions, only for the local stack

    resources = {"store": ArtifactStore(root=str(artifacts)), "source": SourceData(suite_file=str(suite_file))}
    return dg.Definitions(assets=d.ALL_ASSETS, asset_checks=d.ALL_CHECKS, resources=resources,
                          jobs=[d.catalog_job, d.templates_job, d.samples_job], executor=dg.in_process_executor)


def run_failures(instance: dg.DagsterInstance, run_id: str) -> list[str]:
    """What went wrong in a run (failed steps, retries, the run's failure, engine errors), one entry each."""
    out = []
    kinds = (dg.DagsterEventType.STEP_FAILURE, dg.DagsterEventType.STEP_UP_FOR_RETRY, dg.DagsterEventType.RUN_FAILURE,
             dg.DagsterEventType.ENGINE_EVENT)
    for entry in instance.all_logs(run_id):
        event = entry.dagster_event
        if event is None or event.event_type not in kinds:
            continue
        if event.event_type == dg.DagsterEventType.ENGINE_EVENT and "rror" not in (entry.message or ""):
            continue
        error = getattr(event.event_specific_data, "error", None)
        out.append(f"{event.event_type_value} {event.step_key}: {entry.message} {error.to_string() if error else ''}")
    return out


def partition_tags(template_id: str, batch: str | None = None) -> dict[str, str]:
    """The tags that make a run one partition's (what the UI sets when one launches a partition)."""
    if batch is None:
        return {"dagster/partition": template_id}
    key = dg.MultiPartitionKey({"template": template_id, "batch": batch})
    return {"dagster/partition": str(key), "dagster/partition/template": template_id, "dagster/partition/batch": batch}


@contextlib.contextmanager
def production_stack(root: str | Path, *, suite_file: str | Path | None = None,
                     extra_env: dict[str, str] | None = None) -> Iterator[ProductionStack]:
    """Start Postgres, Redis and S3 on loopback, write the production instance, create the bucket."""
    root = Path(root).resolve()
    root.mkdir(parents=True, exist_ok=True)
    with postgres_server(root / "postgres") as pg, redis_server(root / "redis") as redis, s3_server(root / "s3") as s3:
        home = root / "dagster_home"
        home.mkdir(exist_ok=True)
        shutil.copy(PRODUCTION_INSTANCE, home / "dagster.yaml")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SIMREADY_", "DAGSTER_", "AWS_"))}
        env.update(s3.env())
        env.update({
            "DAGSTER_HOME": str(home),
            "SIMREADY_DEPLOYMENT": "production",
            "SIMREADY_POSTGRES_URL": sqlalchemy_url(pg.create_database("simready")),
            "SIMREADY_CELERY_BROKER": redis.url,
            "SIMREADY_S3_BUCKET": BUCKET,
            "SIMREADY_S3_PREFIX": PREFIX,
            "PYTHONUNBUFFERED": "1",
        })
        if suite_file is not None:
            env["SIMREADY_SUITE"] = str(Path(suite_file).resolve())
        env.update(extra_env or {})
        stack = ProductionStack(root, pg, redis, s3, env)
        stack.s3_client().create_bucket(Bucket=BUCKET)
        try:
            stack.start_code_server()
            yield stack
        finally:
            stop_all([p for p in (stack.daemon, *stack.workers.values()) if p is not None], timeout_s=10)
            # The code server, once nothing calls it: after runs it may hold its RPCs' grace period (seconds) on SIGTERM
            # before it exits, and it keeps nothing.
            if stack.code_server is not None:
                stop_all([stack.code_server], timeout_s=2)
            # Then the servers, side by side (each `with` above finds its process stopped).
            stop_all([s3.process, redis.process, pg.process], timeout_s=10)
