"""A batch key added by hand (the UI's "Add a partition" takes any text) is removed with its reason (issue 19)."""

from __future__ import annotations

import dagster as dg

from simready.assets.orchestration import batch_keys_sensor, invalid_batch_keys
from simready.assets.partitions import batch_partitions


def test_only_keys_of_the_form_b0000_are_kept():
    bad = invalid_batch_keys(["b0000", "b0012", "nightly", "b12x", "B0001", "b"])
    assert sorted(bad) == ["B0001", "b", "b12x", "nightly"]
    assert "is not of the form b0000" in bad["nightly"] and "\n" not in bad["nightly"]


def test_the_sensor_deletes_a_bad_key_and_says_why():
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(batch_partitions.name, ["b0000"])
        assert isinstance(batch_keys_sensor(dg.build_sensor_context(instance=instance)), dg.SkipReason)
        instance.add_dynamic_partitions(batch_partitions.name, ["tuesday"])
        result = batch_keys_sensor(dg.build_sensor_context(instance=instance))
        (request,) = result.dynamic_partitions_requests
        assert isinstance(request, dg.DeleteDynamicPartitionsRequest)
        assert (request.partitions_def_name, list(request.partition_keys)) == (batch_partitions.name, ["tuesday"])
        assert "tuesday" in result.skip_reason.skip_message and "b0000" in result.skip_reason.skip_message


# ------------------------------------------------------------------ refused when added (the instance, the UI's mutation)

import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from simready.assets.partitions import SimreadyInstance, check_batch_keys  # noqa: E402
from simready.scenario.suite import SuiteError, batch_index  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def test_a_batch_key_is_b_and_four_digits_only():
    assert [batch_index(k) for k in ("b0000", "b0012", "b9999")] == [0, 12, 9999]
    # b12 would be batch 12 again under a second name: the same samples in two partitions.
    for key in ("b12", "b00012", "b99999999", "b", "B0001", "b-001", "b０００１", "nightly", ""):
        with pytest.raises(SuiteError, match="is not of the form b0000"):
            batch_index(key)


def _deployed_instance(home: Path) -> dg.DagsterInstance:
    """The instance a DAGSTER_HOME holding ``deploy/dagster.yaml`` opens (what ``make ui`` / ``make run`` copy)."""
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "deploy" / "dagster.yaml", home / "dagster.yaml")
    return dg.DagsterInstance.from_config(str(home))


@pytest.mark.parametrize("deploy_file", ["dagster.yaml", "production/dagster.yaml"])
def test_the_deployments_name_the_checking_instance(deploy_file):
    assert "class: SimreadyInstance" in (ROOT / "deploy" / deploy_file).read_text()


def test_the_instance_refuses_a_bad_key_in_one_line_and_adds_nothing(tmp_path):
    instance = _deployed_instance(tmp_path / "home")
    assert isinstance(instance, SimreadyInstance)
    instance.add_dynamic_partitions(batch_partitions.name, ["b0000"])
    with pytest.raises(SuiteError) as refused:
        instance.add_dynamic_partitions(batch_partitions.name, ["b0001", "tuesday"])
    assert refused.value.one_line() == (
        "sample_batch: batch key 'tuesday' is not of the form b0000 (b and four digits, b0000 … b9999); "
        "nothing was added")
    assert instance.get_dynamic_partitions(batch_partitions.name) == ["b0000"]
    # Other dynamic partitions (none today) keep Dagster's rules.
    instance.add_dynamic_partitions("another", ["tuesday"])
    assert instance.get_dynamic_partitions("another") == ["tuesday"]
    check_batch_keys(["b0001", "b0002"])


ADD_PARTITION = """
mutation ($repositorySelector: RepositorySelector!, $partitionsDefName: String!, $partitionKey: String!) {
  addDynamicPartition(repositorySelector: $repositorySelector, partitionsDefName: $partitionsDefName,
                      partitionKey: $partitionKey) {
    __typename
    ... on AddDynamicPartitionSuccess { partitionKey }
    ... on PythonError { message }
  }
}
"""


@pytest.mark.slow
def test_the_uis_add_a_partition_is_refused_with_the_line(tmp_path, monkeypatch):
    """The UI's "Add a partition" dialog sends this mutation (dagster-webserver's bundle: a ``PythonError`` answer is
    shown as "Could not add partition" with its message); here against the code location ``workspace.yaml`` loads,
    in its own gRPC server process, as the webserver does."""
    from dagster_graphql.test.utils import define_out_of_process_context, execute_dagster_graphql, infer_repository_selector

    monkeypatch.chdir(ROOT)
    instance = _deployed_instance(tmp_path / "home")
    with define_out_of_process_context(str(ROOT / "workspace.yaml"), None, instance) as context:
        def add(key: str) -> dict:
            variables = {"repositorySelector": infer_repository_selector(context),
                         "partitionsDefName": batch_partitions.name, "partitionKey": key}
            return execute_dagster_graphql(context, ADD_PARTITION, variables).data["addDynamicPartition"]

        refused = add("tuesday")
        assert refused["__typename"] == "PythonError"
        assert ("sample_batch: batch key 'tuesday' is not of the form b0000 (b and four digits, b0000 … b9999); "
                "nothing was added") in refused["message"]
        assert add("b0003") == {"__typename": "AddDynamicPartitionSuccess", "partitionKey": "b0003"}
    assert instance.get_dynamic_partitions(batch_partitions.name) == ["b0003"]


@pytest.mark.slow
def test_the_dialog_in_the_ui_shows_the_line_and_adds_nothing(tmp_path, browser):
    """Dagster's own UI, in Debian's chromium (``make browser``): an asset page's Materialize → "Add a partition"
    for ``sample_batch``, the name typed and saved. A bad name: the alert shows the line, nothing is stored; a
    good one is added."""
    import os

    from playwright.sync_api import TimeoutError as NotShown

    from simready.testing.servers import dagster_webserver

    home = tmp_path / "home"
    _deployed_instance(home).add_dynamic_partitions(batch_partitions.name, ["b0000"])
    env = {**os.environ, "DAGSTER_HOME": str(home), "SIMREADY_ARTIFACTS": str(tmp_path / "artifacts")}
    env.pop("SIMREADY_DEPLOYMENT", None)
    with dagster_webserver(ROOT / "workspace.yaml", env, home / "webserver.log") as base:
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        try:
            page.goto(f"{base}/assets/scenario_manifests", wait_until="domcontentloaded")
            materialize = page.get_by_role("button", name="Materialize")
            materialize.first.wait_for(timeout=60_000)
            skip = page.get_by_role("button", name="Skip")  # Dagster's community dialog, on a new instance
            try:
                skip.click(timeout=5_000)
            except NotShown:
                pass
            materialize.first.click()
            page.get_by_role("button", name="Confirm").click(timeout=30_000)  # "upstream not materialized yet"
            page.get_by_text("Add a partition").click(timeout=30_000)
            page.get_by_placeholder("name").fill("tuesday")
            page.get_by_role("button", name="Save").click()
            alert = page.get_by_text("sample_batch: batch key 'tuesday' is not of the form b0000 (b and four digits, "
                                     "b0000 … b9999); nothing was added")
            alert.wait_for(timeout=30_000)
            page.get_by_role("button", name="OK").click()
            page.get_by_placeholder("name").fill("b0007")
            page.get_by_role("button", name="Save").click()
            page.get_by_placeholder("name").wait_for(state="detached", timeout=30_000)
        finally:
            page.close()
    assert dg.DagsterInstance.from_config(str(home)).get_dynamic_partitions(batch_partitions.name) == ["b0000", "b0007"]
