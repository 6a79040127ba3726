"""Every deployment's Dagster configuration, validated by Dagster itself (docs/deploy.md).

For each ``deploy/**/dagster.yaml`` (local, production, AWS, Kubernetes):

- the whole file through ``dagster_instance_config`` — the function
  ``DagsterInstance`` loads ``$DAGSTER_HOME/dagster.yaml`` with — so an unknown or
  misspelled top-level key, or a wrong ``storage.postgres`` field, fails;
- each configured class (run launcher, compute log manager, storages, the run
  queue's ``QueuedRunCoordinator``...) is imported from its module path and its
  ``config`` section processed against that class's own ``config_type()``, with
  every ``{env: ...}`` resolved — the instance schema accepts any mapping there;
- the run launcher, run queue and compute log manager are then built the way
  Dagster builds them (``ConfigurableClassData.rehydrate``), which runs their own
  checks (``EcsRunLauncher``: ``run_task_kwargs`` keys against botocore's
  ``RunTask`` model, the task-definition prefix length);
- the ECS run task definition is registered, as ``EcsRunLauncher`` registers it
  for a samples run, against botocore's stubbed ECS client: botocore validates the
  request against the ECS API model, without a request leaving the process.

``deploy/k8s/executor.yaml`` is validated as run config of the real samples job
with ``k8s_job_executor``; its ``per_step_k8s_config`` keys must name ops of that
job (Dagster silently ignores unknown ones), and each step's Kubernetes Job is
built with ``construct_dagster_k8s_job``, which checks the raw Kubernetes fields
against the Kubernetes client's models.

Nothing contacts AWS or Kubernetes: socket connections fail during these tests,
the environment variables the files read are set here, the K8s launcher reads a
throwaway kubeconfig instead of in-cluster credentials, and the ECS launcher is
kept from reading its own task's metadata endpoint. The negative tests feed each
check a copy with one misspelled key and require the failure to name it.
"""

from __future__ import annotations

import copy
import re
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml

import dagster as dg
from dagster._config import process_config
from dagster._core.instance.config import dagster_instance_config
from dagster._core.remote_origin import GrpcServerCodeLocationOrigin, RemoteJobOrigin, RemoteRepositoryOrigin
from dagster._core.storage.dagster_run import DagsterRun
from dagster._serdes import class_from_code_pointer
from dagster._serdes.config_class import ConfigurableClassData

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
DOCS = ROOT / "docs" / "deploy.md"
EXECUTOR_YAML = DEPLOY / "k8s" / "executor.yaml"

#: Every instance file, found rather than listed: a new deployment is validated when it appears.
INSTANCE_FILES = sorted([*DEPLOY.glob("dagster.yaml"), *DEPLOY.glob("*/dagster.yaml")])

#: Values for every environment variable a deployment file may read (placeholders; nothing connects).
ENV = {
    "SIMREADY_S3_BUCKET": "simready-artifacts",
    "SIMREADY_S3_PREFIX": "datasets/v1",
    "SIMREADY_POSTGRES_URL": "postgresql://dagster:secret@postgres.invalid:5432/dagster",
    "SIMREADY_POSTGRES_URL_SECRET_ARN": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:simready/pg-AbCdEf",
    "SIMREADY_CELERY_BROKER": "redis://redis.invalid:6379/0",
    "SIMREADY_ECS_EXECUTION_ROLE_ARN": "arn:aws:iam::123456789012:role/simready-ecs-execution",
    "SIMREADY_ECS_TASK_ROLE_ARN": "arn:aws:iam::123456789012:role/simready-run",
    "SIMREADY_ECS_LOG_GROUP": "/ecs/simready-runs",
    "SIMREADY_K8S_NAMESPACE": "simready",
    "AWS_DEFAULT_REGION": "eu-west-1",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    # One registration attempt: a request botocore refuses fails at once, not after backoff.
    "REGISTER_TASK_DEFINITION_RETRIES": "0",
}

#: Instance sections that name a configurable class (``module``, ``class``, ``config``).
CLASS_SECTIONS = (
    "run_launcher",
    "run_coordinator",
    "compute_logs",
    "local_artifact_storage",
    "run_storage",
    "event_log_storage",
    "schedule_storage",
    "scheduler",
    "defs_state_storage",
)
#: Classes built here (their constructors make clients but open no connection); storages would connect.
BUILT_SECTIONS = ("run_launcher", "run_coordinator", "compute_logs")

#: Fargate's valid task sizes: CPU units -> memory MiB (AWS ECS developer guide, "Task CPU and memory").
FARGATE_MEMORY = {
    "256": {512, 1024, 2048},
    "512": set(range(1024, 4096 + 1, 1024)),
    "1024": set(range(2048, 8192 + 1, 1024)),
    "2048": set(range(4096, 16384 + 1, 1024)),
    "4096": set(range(8192, 30720 + 1, 1024)),
    "8192": set(range(16384, 61440 + 1, 4096)),
    "16384": set(range(32768, 122880 + 1, 8192)),
}


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """The deployment environment, with every outgoing connection refused."""
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    # The code location is imported as the local deployment: its op names are the same
    # everywhere, and production definitions check their Postgres at load (through
    # libpq, which the socket guard below cannot see).
    monkeypatch.delenv("SIMREADY_DEPLOYMENT", raising=False)

    def refuse(*args, **kwargs):
        raise AssertionError(f"deployment-config tests must not connect anywhere: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "https://kubernetes.invalid:6443"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    return kubeconfig


# --------------------------------------------------------------------------- the checks


def env_names(value: Any, *, set_here: bool = True) -> set[str]:
    """Names of the environment variables a config reads or sets.

    ``{env: NAME}`` and the ``env_vars`` entries of launchers and executors (``NAME``
    is copied from the launching process; ``NAME=value`` is set by the file itself,
    and counted only with ``set_here``).
    """
    found: set[str] = set()
    if isinstance(value, dict):
        if set(value) == {"env"} and isinstance(value["env"], str):
            return {value["env"]}
        for key, item in value.items():
            if key == "env_vars" and isinstance(item, list):
                found |= {e.split("=", 1)[0] for e in item if isinstance(e, str) and (set_here or "=" not in e)}
            else:
                found |= env_names(item, set_here=set_here)
    elif isinstance(value, list):
        for item in value:
            found |= env_names(item, set_here=set_here)
    return found


def process_or_fail(config_type: Any, value: Any, where: str) -> Any:
    result = process_config(config_type, value)
    if not result.success:
        reasons = "; ".join(error.message for error in result.errors or [])
        raise AssertionError(f"{where}: {reasons}")
    return result.value


def check_instance_file(path: Path, kubeconfig: Path) -> dict[str, Any]:
    """Validate one instance file as Dagster loads it; return Dagster's validated config."""
    config, _ = dagster_instance_config(str(path.parent), path.name)

    # storage: the instance schema checks pg_config(); process it again so every {env: ...} resolves.
    if "postgres" in config.get("storage", {}):
        from dagster_postgres import DagsterPostgresStorage, PostgresRunStorage

        for storage_class in (DagsterPostgresStorage, PostgresRunStorage):
            process_or_fail(storage_class.config_type(), config["storage"]["postgres"], f"{path}: storage.postgres")

    for section in CLASS_SECTIONS:
        if section not in config:
            continue
        entry = config[section]
        klass = class_from_code_pointer(entry["module"], entry["class"])
        process_or_fail(klass.config_type(), entry.get("config") or {}, f"{path}: {section} ({entry['class']})")

    if "run_queue" in config:
        from dagster._core.run_coordinator import QueuedRunCoordinator

        process_or_fail(QueuedRunCoordinator.config_type(), config["run_queue"], f"{path}: run_queue")
        check_tag_limits(config["run_queue"].get("tag_concurrency_limits", []), path)

    if config.get("run_coordinator", {}).get("class") == "QueuedRunCoordinator":
        check_tag_limits((config["run_coordinator"].get("config") or {}).get("tag_concurrency_limits", []), path)

    for section in BUILT_SECTIONS:
        if section in config:
            build_class(config[section], kubeconfig)
    if "run_queue" in config:
        ConfigurableClassData(
            "dagster._core.run_coordinator", "QueuedRunCoordinator", yaml.safe_dump(dict(config["run_queue"]))
        ).rehydrate()
    return config


def check_tag_limits(limits: list[dict[str, Any]], path: Path) -> None:
    """A limit on a tag no run carries limits nothing, and Dagster accepts it without a word.

    Our own tags (``simready/...``) must be carried by a job of the code location, with
    the value the limit names; Dagster's own (``dagster/...``) are set by Dagster.
    """
    from simready import definitions

    carried = {(key, value) for job in definitions.defs.jobs for key, value in (job.tags or {}).items()}
    for limit in limits:
        key, value = limit["key"], limit.get("value")
        assert key.startswith(("dagster/", "simready/")), f"{path}: a limit on the tag {key!r}, which no run carries"
        if key.startswith("simready/"):
            wanted = {(key, value)} if isinstance(value, str) else {(k, v) for k, v in carried if k == key}
            assert wanted & carried, f"{path}: a limit on {key}={value!r}, which no job carries"


def build_class(entry: dict[str, Any], kubeconfig: Path) -> Any:
    """Build a configured class through Dagster's own loader, offline."""
    config = dict(entry.get("config") or {})
    if entry["class"] == "K8sRunLauncher":
        # In-cluster credentials do not exist here: the same launcher, from a throwaway kubeconfig.
        config |= {"load_incluster_config": False, "kubeconfig_file": str(kubeconfig)}
    return ConfigurableClassData(entry["module"], entry["class"], yaml.safe_dump(config)).rehydrate()


def register_ecs_run_task(launcher: Any) -> dict[str, Any]:
    """Register the run task definition and start a run task, as EcsRunLauncher does for a samples run.

    The ECS client is botocore's Stubber: every request is validated against the ECS
    API model and answered in-process. ``use_current_ecs_task_config`` is turned off
    for the call because its cluster and network come from the ECS task metadata
    endpoint, which exists only inside ECS.
    """
    from botocore.stub import Stubber

    from dagster_aws.ecs.container_context import EcsContainerContext

    origin = RemoteJobOrigin(
        repository_origin=RemoteRepositoryOrigin(
            code_location_origin=GrpcServerCodeLocationOrigin(host="code", port=4000, location_name="simready"),
            repository_name="__repository__",
        ),
        job_name="samples_job",
    )
    run = DagsterRun(
        job_name="samples_job", run_id="0" * 32, tags={"simready/stage": "samples"}, remote_job_origin=origin
    )
    registered: dict[str, Any] = {}
    with Stubber(launcher.ecs) as stub:
        stub.add_client_error("describe_task_definition", service_error_code="ClientException")

        def capture(params: dict[str, Any], **kwargs: Any) -> None:
            registered.update(params)

        launcher.ecs.meta.events.register("provide-client-params.ecs.RegisterTaskDefinition", capture)
        stub.add_response("register_task_definition", {"taskDefinition": {"taskDefinitionArn": "arn:x"}})
        # run_task's parameters are not compared; botocore still validates them against the model.
        stub.add_response("run_task", {"tasks": [{"taskArn": "arn:task"}], "failures": []})
        launcher.use_current_ecs_task_config = False
        try:
            kwargs = launcher._run_task_kwargs(run, "simready:1", EcsContainerContext.create_for_run(run, launcher))
        finally:
            launcher.use_current_ecs_task_config = True
        launcher.ecs.run_task(**kwargs, count=1)
        stub.assert_no_pending_responses()
    return registered


def samples_job_with(executor_def: Any) -> dg.JobDefinition:
    """The project's samples job, resolved with another executor (as the K8s layout runs it)."""
    from simready import definitions

    defs = dg.Definitions(
        assets=definitions.ALL_ASSETS,
        asset_checks=definitions.ALL_CHECKS,
        jobs=[definitions.samples_job],
        resources=definitions.defs.resources,
        executor=executor_def,
    )
    return defs.resolve_job_def("samples_job")


def check_executor_file(path: Path, instance_path: Path, kubeconfig: Path) -> dict[str, Any]:
    """Validate the k8s_job_executor run config and build every step's Kubernetes Job from it."""
    from dagster_k8s import k8s_job_executor
    from dagster_k8s.container_context import K8sContainerContext
    from dagster_k8s.job import UserDefinedDagsterK8sConfig, construct_dagster_k8s_job

    run_config = yaml.safe_load(path.read_text())
    job = samples_job_with(k8s_job_executor)
    dg.validate_run_config(job, run_config)  # raises DagsterInvalidConfigError
    exc_cfg = process_or_fail(k8s_job_executor.config_schema.config_type, run_config["execution"]["config"], str(path))

    op_names = {node.name for node in job.graph.node_defs}
    unknown = set(exc_cfg["per_step_k8s_config"]) - op_names
    assert not unknown, f"{path}: per_step_k8s_config names no op of samples_job: {sorted(unknown)}"

    instance_config, _ = dagster_instance_config(str(instance_path.parent), instance_path.name)
    launcher = build_class(instance_config["run_launcher"], kubeconfig)
    # As k8s_job_executor and its step handler merge them (dagster_k8s/executor.py).
    executor_context = K8sContainerContext(
        namespace=exc_cfg.get("job_namespace"),
        resources=exc_cfg.get("resources"),
        labels=exc_cfg.get("labels"),
        run_k8s_config=UserDefinedDagsterK8sConfig.from_dict(exc_cfg.get("step_k8s_config", {})),
    )
    jobs = {}
    for op_name in sorted(op_names):
        run_context = K8sContainerContext.create_for_run(
            DagsterRun(job_name="samples_job", run_id="0" * 32), launcher, include_run_tags=False
        )
        context = run_context.merge(executor_context).merge(
            K8sContainerContext(
                run_k8s_config=UserDefinedDagsterK8sConfig.from_dict(exc_cfg["per_step_k8s_config"].get(op_name, {}))
            )
        )
        job_config = context.get_k8s_job_config("simready:1", launcher)
        jobs[op_name] = construct_dagster_k8s_job(
            job_config=job_config,
            args=["dagster", "api", "execute_step"],
            job_name=f"dagster-step-{op_name.replace('_', '-')}"[:63],
            user_defined_k8s_config=context.run_k8s_config,
            component="step_worker",
        )
    return jobs


# --------------------------------------------------------------------------- the deployments


def test_every_deployment_is_found():
    found = {path.relative_to(DEPLOY).as_posix() for path in INSTANCE_FILES}
    assert {"dagster.yaml", "aws/dagster.yaml", "k8s/dagster.yaml"} <= found


@pytest.mark.parametrize("path", INSTANCE_FILES, ids=lambda p: p.relative_to(DEPLOY).as_posix())
def test_instance_config_is_valid(path, offline):
    check_instance_file(path, offline)


@pytest.mark.parametrize("path", INSTANCE_FILES, ids=lambda p: p.relative_to(DEPLOY).as_posix())
def test_every_environment_variable_is_documented(path):
    """Each variable a deployment reads is explained in docs/deploy.md (and given a value above)."""
    document = yaml.safe_load(path.read_text()) or {}
    names = env_names(document)
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", DOCS.read_text()))
    assert names - documented == set(), f"{path}: not in docs/deploy.md: {sorted(names - documented)}"
    read = env_names(document, set_here=False)
    assert read - set(ENV) == set(), f"{path}: give these a value in ENV: {sorted(read - set(ENV))}"


def test_aws_layout(offline):
    config = check_instance_file(DEPLOY / "aws" / "dagster.yaml", offline)
    assert config["storage"]["postgres"]["postgres_url"] == {"env": "SIMREADY_POSTGRES_URL"}
    assert config["run_launcher"]["class"] == "EcsRunLauncher"
    assert config["compute_logs"]["class"] == "S3ComputeLogManager"
    assert config["run_retries"]["enabled"]

    launcher = build_class(config["run_launcher"], offline)
    task_definition = register_ecs_run_task(launcher)
    (container,) = task_definition["containerDefinitions"]
    assert container["name"] == "run" and container["image"] == "simready:1"
    check_ecs_task_definition(task_definition)
    environment = {item["name"]: item["value"] for item in container["environment"]}
    assert environment["SIMREADY_DEPLOYMENT"] == "production"
    assert environment["SIMREADY_S3_BUCKET"] == ENV["SIMREADY_S3_BUCKET"]
    assert "SIMREADY_POSTGRES_URL" not in environment, "the URL holds the password: a secret, not plain environment"
    secrets = {item["name"]: item["valueFrom"] for item in container["secrets"]}
    assert secrets == {"SIMREADY_POSTGRES_URL": ENV["SIMREADY_POSTGRES_URL_SECRET_ARN"]}
    # Every variable the run's own instance file reads reaches the run task.
    needed = env_names(yaml.safe_load((DEPLOY / "aws" / "dagster.yaml").read_text())["storage"])
    assert needed <= set(environment) | set(secrets), sorted(needed - set(environment) - set(secrets))


def test_k8s_layout(offline):
    config = check_instance_file(DEPLOY / "k8s" / "dagster.yaml", offline)
    assert config["run_launcher"]["class"] == "K8sRunLauncher"
    assert config["compute_logs"]["class"] == "S3ComputeLogManager"
    jobs = check_executor_file(EXECUTOR_YAML, DEPLOY / "k8s" / "dagster.yaml", offline)

    def resources(op_name):
        (container,) = jobs[op_name].spec.template.spec.containers
        return container.resources

    assert resources("observations_and_truth").requests == {"cpu": "2", "memory": "8Gi"}
    assert resources("trajectories").requests == {"cpu": "1", "memory": "2Gi"}
    pod = jobs["trajectories"].spec.template.spec
    assert pod.service_account_name == "simready-dagster"
    assert {source.config_map_ref.name for source in pod.containers[0].env_from if source.config_map_ref} == {
        "simready-env"
    }
    assert jobs["trajectories"].spec.backoff_limit == 0


# --------------------------------------------------------------------------- the checks can fail


def with_typo(document: dict[str, Any], path: tuple[str, ...], typo: str) -> dict[str, Any]:
    """A copy of ``document`` with the key at ``path`` renamed to ``typo``."""
    changed = copy.deepcopy(document)
    parent = changed
    for key in path[:-1]:
        parent = parent[key]
    assert path[-1] in parent, f"{path} is not in the file any more: pick another key for this test"
    parent[typo] = parent.pop(path[-1])
    return changed


INSTANCE_TYPOS = [
    # (file, key path, misspelling): top level, the storage schema, and inside each class's own config.
    ("aws/dagster.yaml", ("run_retries",), "run_retires"),
    ("aws/dagster.yaml", ("storage", "postgres", "postgres_url"), "postgres_uri"),
    ("aws/dagster.yaml", ("run_launcher", "config", "run_resources"), "run_resource"),
    ("aws/dagster.yaml", ("run_launcher", "config", "task_definition", "execution_role_arn"), "execution_role"),
    ("aws/dagster.yaml", ("run_launcher", "config", "run_task_kwargs", "enableECSManagedTags"), "enableEcsManagedTags"),
    ("aws/dagster.yaml", ("compute_logs", "config", "upload_interval"), "upload_intervall"),
    ("aws/dagster.yaml", ("run_queue", "max_concurrent_runs"), "max_concurrent_run"),
    ("k8s/dagster.yaml", ("run_launcher", "config", "job_namespace"), "job_namspace"),
    ("k8s/dagster.yaml", ("run_launcher", "config", "run_k8s_config", "container_config"), "containerconfig"),
    ("k8s/dagster.yaml", ("compute_logs", "config", "bucket"), "bucekt"),
    ("dagster.yaml", ("run_retries", "max_retries"), "max_retry"),
]


@pytest.mark.parametrize(("name", "path", "typo"), INSTANCE_TYPOS, ids=lambda v: v if isinstance(v, str) else None)
def test_instance_typo_fails(name, path, typo, offline, tmp_path):
    document = with_typo(yaml.safe_load((DEPLOY / name).read_text()), path, typo)
    (tmp_path / "dagster.yaml").write_text(yaml.safe_dump(document))
    with pytest.raises(Exception) as failure:
        check_instance_file(tmp_path / "dagster.yaml", offline)
    assert typo in str(failure.value) or typo in repr(getattr(failure.value, "errors", "")), failure.value


def test_tag_limit_no_job_carries_fails(offline, tmp_path):
    """A misspelled tag value is valid config to Dagster, and limits nothing: the check refuses it."""
    document = yaml.safe_load((DEPLOY / "aws" / "dagster.yaml").read_text())
    (limit,) = [item for item in document["run_queue"]["tag_concurrency_limits"] if item.get("value") == "samples"]
    limit["value"] = "sample"
    (tmp_path / "dagster.yaml").write_text(yaml.safe_dump(document))
    with pytest.raises(AssertionError, match="simready/stage='sample'"):
        check_instance_file(tmp_path / "dagster.yaml", offline)


def test_k8s_container_field_typo_fails(offline, tmp_path):
    """Raw Kubernetes fields pass Dagster's schema (it is permissive there); the Kubernetes model refuses them."""
    document = yaml.safe_load(EXECUTOR_YAML.read_text())
    step = ("execution", "config", "per_step_k8s_config", "observations_and_truth", "container_config", "resources")
    (tmp_path / "executor.yaml").write_text(yaml.safe_dump(with_typo(document, step, "resource")))
    with pytest.raises(Exception, match="resource"):
        check_executor_file(tmp_path / "executor.yaml", DEPLOY / "k8s" / "dagster.yaml", offline)


@pytest.mark.parametrize(
    ("path", "typo"),
    [
        (("execution", "config", "max_concurrent"), "max_concurent"),
        (("execution", "config", "step_k8s_config"), "step_k8s_conf"),
        # An op that does not exist: Dagster would ignore its resources without a word.
        (("execution", "config", "per_step_k8s_config", "observations_and_truth"), "observation_and_truth"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_executor_typo_fails(path, typo, offline, tmp_path):
    document = yaml.safe_load(EXECUTOR_YAML.read_text())
    (tmp_path / "executor.yaml").write_text(yaml.safe_dump(with_typo(document, path, typo)))
    with pytest.raises(Exception) as failure:
        check_executor_file(tmp_path / "executor.yaml", DEPLOY / "k8s" / "dagster.yaml", offline)
    assert typo in str(failure.value) or typo in repr(getattr(failure.value, "errors", "")), failure.value


def test_non_fargate_task_size_is_caught(offline):
    """The run task's size is checked as Fargate would: 0.5 vCPU with 8 GiB is not a Fargate size."""
    document = yaml.safe_load((DEPLOY / "aws" / "dagster.yaml").read_text())
    document["run_launcher"]["config"]["run_resources"]["memory"] = "8192"
    task_definition = register_ecs_run_task(build_class(document["run_launcher"], offline))
    with pytest.raises(AssertionError, match="not a Fargate task size"):
        check_ecs_task_definition(task_definition)


def test_checks_refuse_to_connect(offline):
    with pytest.raises(AssertionError, match="must not connect"):
        socket.create_connection(("127.0.0.1", 5432))


# --------------------------------------------------------------------------- the Celery workers on ECS

WORKER_TASK = DEPLOY / "aws" / "worker-task-definition.json"


def check_ecs_task_definition(params: dict[str, Any]) -> None:
    """A RegisterTaskDefinition request as botocore validates it, offline; and a Fargate size."""
    import botocore.session
    from botocore.validate import ParamValidator

    shape = botocore.session.get_session().get_service_model("ecs").operation_model("RegisterTaskDefinition").input_shape
    report = ParamValidator().validate(params, shape)
    assert not report.has_errors(), report.generate_report()
    assert int(params["memory"]) in FARGATE_MEMORY.get(params["cpu"], set()), "not a Fargate task size"


def test_celery_worker_task_definition():
    import importlib.util
    import json

    from simready.resources import PRODUCTION_ENV

    params = json.loads(WORKER_TASK.read_text())
    check_ecs_task_definition(params)
    (container,) = params["containerDefinitions"]
    given = {item["name"] for item in container["environment"]} | {item["name"] for item in container["secrets"]}
    # The worker imports the production code location: everything it checks at load must be set.
    assert set(PRODUCTION_ENV) | {"SIMREADY_DEPLOYMENT"} <= given, sorted(set(PRODUCTION_ENV) - given)
    assert "SIMREADY_POSTGRES_URL" not in {item["name"] for item in container["environment"]}, "a secret"
    app = container["command"][container["command"].index("-A") + 1]
    assert importlib.util.find_spec(app) is not None, f"no Celery app module {app}"


@pytest.mark.parametrize(("key", "typo"), [("memory", "memroy"), ("taskRoleArn", "taskRole")])
def test_worker_task_definition_typo_fails(key, typo):
    import json

    params = with_typo(json.loads(WORKER_TASK.read_text()), (key,), typo)
    with pytest.raises(AssertionError, match=typo):
        check_ecs_task_definition(params)
