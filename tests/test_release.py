"""Dataset releases (issue 18 item 5, SPEC §17) over a small real suite: the fingerprint's two samples taken through
every stage (manifest, trace, checkpoint and branches, observations with truth, the gate), with the catalog's
certification, the templates' validation, the split table and the suite weights the stages write.

What is checked: the same stored inputs give the same release id (also from another folder and from S3); a blocking
check that fails refuses the release in one line and writes nothing; a tampered object fails verify and the export;
a release is not changed when a later run writes its samples again; the exports read releases (one MCAP per sample
and branch; a nuScenes dataset); a release that does not exist is one line and leaves no output behind.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from simready.common import paths
from simready.common.atomic import write_bytes_atomic, write_json_atomic
from simready.catalog.build import build_certified_catalog
from simready.catalog.catalog import load_catalog
from simready.cli import main
from simready.export.release import export_release_mcap
from simready.artifacts.layout import ArtifactLayout
from simready.release import (Release, ReleaseError, build_release, checkout, list_releases, load_release,
                              verify_release)
from simready.scenario.manifest import load_manifest
from simready.scenario.splits import split_assignment_row, write_split_assignments
from simready.sim.core.constants import DEFAULT_BACKEND
from simready.store import LocalStore
from simready.store.s3 import S3Store, s3_client
from simready.testing.servers import free_port, s3_env, s3_server
from simready.validity.suite import suite_validity
from simready.world.template import load_template
from simready.world.template_build import build_template_version
from tests.fingerprint import SAMPLES

pytestmark = pytest.mark.xdist_group("release")

BATCH = "b0000"
VERSIONS = {"generator": "test"}
S3_BUCKET, S3_PREFIX = "artifacts", "deploy"


@pytest.fixture(scope="module")
def suite(tmp_path_factory, fingerprinted) -> Iterator[Path]:
    """An artifacts folder holding the two samples as the stages leave them (never changed by a test: copy it). The
    samples are the fingerprint's (tests/conftest.py: built once per run, shared with test_fingerprint)."""
    root = tmp_path_factory.mktemp("suite") / "artifacts"
    layout = ArtifactLayout(root)
    staging, _ = fingerprinted
    build_certified_catalog(layout.catalog_dir)
    catalog = load_catalog(paths.CATALOG_GENERATED_DIR)
    certified = {e["id"] for e in json.loads(layout.certification.read_text())["entries"] if e["passed"]}
    for template_id, _ in SAMPLES:
        build_template_version(paths.TEMPLATES_DIR / f"{template_id}.yaml", layout.template(template_id), certified,
                               catalog.contracts(), catalog.footprints())
    rows = []
    for d in sorted(staging.iterdir()):
        m = load_manifest(d / "manifest.json")
        target = layout.batch(m.template_id, BATCH).sample(m.sample_id).root
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(d, target)
        rows.append(split_assignment_row(m, m.template_id, BATCH))
    layout.split_assignments.parent.mkdir(parents=True)
    write_split_assignments(rows, layout.split_assignments)
    write_json_atomic(layout.suite_weights, suite_validity([layout.batch(r["template"], BATCH).sample(r["sample"]).root
                                                            for r in rows]))
    yield root
    shutil.rmtree(root.parent, ignore_errors=True)


@pytest.fixture(scope="module")
def released(suite, tmp_path_factory) -> Iterator[tuple[LocalStore, Release]]:
    """A copy of the suite and its release, built once (never changed by a test): the release the same inputs give
    in another folder, in S3 and through the asset."""
    folder = tmp_path_factory.mktemp("released")
    store = _copy(suite, folder)
    release, _ = _build(store)
    yield store, release
    shutil.rmtree(folder, ignore_errors=True)


def _copy(suite: Path, tmp_path: Path) -> LocalStore:
    target = tmp_path / "artifacts"
    shutil.copytree(suite, target)
    return LocalStore(target)


def _build(store, **kw):
    templates = {t: load_template(paths.TEMPLATES_DIR / f"{t}.yaml") for t, _ in SAMPLES}
    return build_release(store, suite_id="test", versions=VERSIONS, templates=templates,
                         catalog=load_catalog(paths.CATALOG_GENERATED_DIR), backend=DEFAULT_BACKEND, **kw)


@pytest.mark.slow
def test_same_inputs_give_the_same_release_and_every_item_names_its_checks(suite, released, tmp_path):
    a = _copy(suite, tmp_path / "a")
    release, results = _build(a)
    again, _ = _build(a, tag="r1")
    other = released[1]  # built in another folder
    assert release.release_id == again.release_id == other.release_id
    assert list_releases(a) == {release.release_id: ["latest", "r1"]}
    assert verify_release(a, load_release(a, "r1")) == []
    counts = release.datasheet["counts"]
    assert sum(c["samples"] for c in counts.values()) == 2 and sum(c["branches"] for c in counts.values()) == 4
    items = {i["item"]: i for i in release.checklist}
    assert len(items) == 10 and all(i["passed"] and i["checks"] for i in items.values())
    restore = next(r for r in results if r.check == "checkpoint_restore_reproduces")
    assert restore.result == "2/2 passed"
    # Every file of every released sample, stored once by its sha256, as hard links of the samples' files.
    sample = next(release.samples())
    f = sample["files"]["trace.parquet"]
    obj = a.root / ArtifactLayout(Path()).release_object(f["sha256"])
    assert obj.stat().st_nlink >= 2 and obj.stat().st_size == f["bytes"]
    page = (a.root / ArtifactLayout(Path()).release(release.hex).datasheet_page).read_text()
    assert "coverage and leakage" in page and "checkpoint_restore_reproduces 2/2 passed" in page
    assert "(scored, not required)" in page and "## What a weight means" in page and "## Collisions" in page
    html = (a.root / ArtifactLayout(Path()).release(release.hex).datasheet_html).read_text()
    assert html.startswith("<!DOCTYPE html>") and "<table>" in html and "Collisions</h2>" in html
    assert release.datasheet["coverage_gap"] is None  # this suite has no coverage record (tests/test_datasheet_page.py)


@pytest.mark.slow
def test_a_failing_blocking_check_refuses_the_release_in_one_line(suite, tmp_path):
    store = _copy(suite, tmp_path)
    layout = ArtifactLayout(store.root)
    row = json.loads(layout.split_assignments.read_text())["rows"][0]
    parity = layout.batch(row["template"], BATCH).sample(row["sample"]).observations.parity
    record = json.loads(parity.read_text())
    parity.write_text(json.dumps({**record, "passed": False}))
    with pytest.raises(ReleaseError) as err:
        _build(store)
    line = err.value.one_line()
    # parity.json's bytes are no longer those results.json recorded, and its verdict failed: both checks say so.
    assert "\n" not in line and row["sample"] in line
    assert "blocking check observations_complete 1/2 passed" in line and "also failed: observations_parity" in line
    assert not layout.releases_dir.exists()


@pytest.mark.slow
def test_a_rewritten_sample_leaves_the_release_and_a_tampered_object_fails_verify(suite, tmp_path):
    store = _copy(suite, tmp_path)
    release, _ = _build(store)
    sample = next(release.samples())
    folder = ArtifactLayout(store.root).batch(sample["template"], BATCH).sample(sample["sample"])
    write_bytes_atomic(folder.validity, b"{}")  # a later run writes the sample again, as stages do
    assert verify_release(store, release) == []
    obj = store.root / ArtifactLayout(Path()).release_object(sample["files"]["trace.parquet"]["sha256"])
    os.chmod(obj, 0o644)
    with open(obj, "r+b") as f:
        f.write(b"X")
    problems = verify_release(store, release)
    assert len(problems) == 1 and "trace.parquet" in problems[0]
    with pytest.raises(ReleaseError, match="bytes differ"):
        checkout(store, release, tmp_path / "out")


@pytest.mark.slow
def test_exports_read_the_release(suite, tmp_path, monkeypatch, capsys):
    store = _copy(suite, tmp_path)
    release, _ = _build(store)
    monkeypatch.setenv("SIMREADY_ARTIFACTS", str(store.root))
    assert main(["export", "mcap", "--release", "latest", "--out", str(tmp_path / "mcap")]) == 0
    written = sorted(p.relative_to(tmp_path / "mcap").as_posix() for p in (tmp_path / "mcap").rglob("*.mcap"))
    expected = sorted(f"{s['split']}/{s['sample']}{suffix}.mcap" for s in release.samples()
                      for suffix in ["", *(f".{b}" for b in s["branches"])])
    assert written == expected
    layout = json.loads((tmp_path / "mcap" / "foxglove-layout.json").read_text())  # Foxglove's layout beside them
    assert layout["configById"]["3D!scene"]["followTf"] == "actor:ego"
    assert main(["export", "nuscenes", "--release", release.release_id, "--out", str(tmp_path / "nusc")]) == 0
    tables = next((tmp_path / "nusc").glob("v1.0-*/scene.json"))
    scenes = json.loads(tables.read_text())
    assert len(scenes) == 6  # two bases and their four branches
    assert main(["release", "verify", "latest"]) == 0
    assert "files verify" in capsys.readouterr().out


@pytest.mark.slow
def test_a_release_that_does_not_exist_is_one_line_and_nothing_is_written(suite, tmp_path, monkeypatch, capsys):
    store = _copy(suite, tmp_path)
    monkeypatch.setenv("SIMREADY_ARTIFACTS", str(store.root))
    for argv in (["export", "nuscenes", "--release", "r9", "--out", str(tmp_path / "nusc")],
                 ["export", "mcap", "--release", "r9", "--out", str(tmp_path / "mcap")],
                 ["release", "show", "r9"]):
        assert main(argv) == 1
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "no release 'r9'" in err
    assert not (tmp_path / "nusc").exists() and not (tmp_path / "mcap").exists()
    assert main(["export", "mcap", "--out", str(tmp_path / "x")]) == 1
    assert "--release" in capsys.readouterr().err


def _suite_in_s3(suite: Path, server, tmp_path: Path):
    """The suite's folders published into the bucket ``artifacts`` under ``deploy/`` as the stages publish them;
    a client of the endpoint."""
    client = s3_client(30, 3, endpoint_url=server.endpoint_url, region_name="us-east-1",
                       aws_access_key_id="testing", aws_secret_access_key="testing")
    client.create_bucket(Bucket=S3_BUCKET)
    s3 = S3Store(client, S3_BUCKET, S3_PREFIX, cache_dir=tmp_path / "cache")
    layout = ArtifactLayout(Path())
    for prefix in ["catalog", "splits", "coverage", *(str(layout.template_dir(t)) for t, _ in SAMPLES),
                   *(str(layout.batch(t, BATCH).root) for t, _ in SAMPLES)]:
        staged = tmp_path / "up" / prefix
        shutil.copytree(suite / prefix, staged)
        s3.publish(prefix, staged)
    return client


@pytest.fixture(scope="module")
def in_s3(suite, tmp_path_factory):
    """One S3 server for the module's two S3 tests: the suite published into the bucket, and its release built there
    through a reader of the bucket. The first test only reads it; the second (after it, in file order) tags a
    release and tampers with an object."""
    root = tmp_path_factory.mktemp("s3")
    with s3_server(root / "moto") as server:
        client = _suite_in_s3(suite, server, root)
        release, _ = _build(S3Store(client, S3_BUCKET, S3_PREFIX, cache_dir=root / "builder"))
        yield server, client, release
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.slow
def test_a_release_in_s3_has_the_same_id_and_verifies(in_s3, released, tmp_path):
    _, client, release = in_s3  # built through a reader of the bucket
    assert release.release_id == released[1].release_id
    fresh = S3Store(client, S3_BUCKET, S3_PREFIX, cache_dir=tmp_path / "cache3")
    assert verify_release(fresh, load_release(fresh, "latest")) == []
    assert len(checkout(fresh, release, tmp_path / "out")) == 2


@pytest.mark.slow
def test_the_release_commands_read_a_release_in_the_production_bucket(in_s3, released, tmp_path):
    """``simready release`` and ``simready export --release`` as a user runs them in the production deployment
    (SIMREADY_DEPLOYMENT=production, the bucket and boto3's environment; no artifacts folder): each a process of its
    own, reading the release through S3 over HTTP into its cache (SIMREADY_CACHE)."""
    local, expected = released
    export_release_mcap(local, load_release(local, "latest"), tmp_path / "local-mcap")
    server, client, release = in_s3  # the module's bucket, its release built through a reader of it
    assert release.release_id == expected.release_id
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIMREADY_", "AWS_", "DAGSTER_"))}
    env.update(server.env(), SIMREADY_DEPLOYMENT="production", SIMREADY_S3_BUCKET=S3_BUCKET,
               SIMREADY_S3_PREFIX=S3_PREFIX, SIMREADY_CACHE=str(tmp_path / "cli-cache"),
               SIMREADY_ARTIFACTS=str(tmp_path / "no-artifacts"), SIMREADY_S3_TIMEOUT_S="5",
               HOME=str(tmp_path / "home"), AWS_EC2_METADATA_DISABLED="true")

    def simready(*argv: str, **changes: str | None) -> subprocess.CompletedProcess:
        run_env = {k: v for k, v in {**env, **changes}.items() if v is not None}
        return subprocess.run([str(Path(sys.executable).with_name("simready")), *argv], env=run_env,
                              capture_output=True, text=True, timeout=300)

    listed = simready("release", "list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split()[:2] == [release.release_id, "latest"]
    tagged = simready("release", "tag", "latest", "r1")
    assert tagged.returncode == 0 and tagged.stdout.strip() == f"r1 -> {release.release_id}", tagged.stderr
    tag_key = f"{S3_PREFIX}/{ArtifactLayout(Path()).release_tag('r1').as_posix()}"
    assert client.get_object(Bucket=S3_BUCKET, Key=tag_key)["Body"].read().decode().strip() == release.release_id
    verified = simready("release", "verify", "r1")
    assert verified.returncode == 0 and verified.stdout.strip() == \
        f"release {release.release_id}: {release.files + 5} files verify (the records and datasheet pages too)", \
        verified.stderr
    shown = simready("release", "show", "r1")
    assert shown.returncode == 0 and f"s3://{S3_BUCKET}/{S3_PREFIX}/releases/{release.hex}/datasheet.md" in shown.stdout
    exported = simready("export", "mcap", "--release", "r1", "--out", str(tmp_path / "mcap"))
    assert exported.returncode == 0, exported.stderr
    mcaps = sorted(p.relative_to(tmp_path / "mcap").as_posix() for p in (tmp_path / "mcap").rglob("*.mcap"))
    assert mcaps == sorted(p.relative_to(tmp_path / "local-mcap").as_posix()
                           for p in (tmp_path / "local-mcap").rglob("*.mcap")) and len(mcaps) == 6
    for name in mcaps:  # the same bytes as the export of the same release from a local folder
        assert (tmp_path / "mcap" / name).read_bytes() == (tmp_path / "local-mcap" / name).read_bytes(), name
    # The objects came through the process's cache; nothing was written where a local deployment keeps artifacts.
    sample = next(release.samples())
    trace = ArtifactLayout(Path()).release_object(sample["files"]["trace.parquet"]["sha256"])
    assert (tmp_path / "cli-cache" / trace).is_file() and not (tmp_path / "no-artifacts").exists()

    # A tampered object in the bucket: verify names its file and fails; the export refuses in one line.
    client.put_object(Bucket=S3_BUCKET, Key=f"{S3_PREFIX}/{trace.as_posix()}", Body=b"not a trace")
    tampered = simready("release", "verify", "r1")
    problems = tampered.stdout.strip().splitlines()
    assert tampered.returncode == 1 and len(problems) == 2, tampered.stdout + tampered.stderr
    assert problems[0].startswith(f"{sample['split']}/{sample['sample']}/trace.parquet: object ")
    assert problems[1] == f"release {release.release_id}: 1 of {release.files + 5} files FAIL"
    refused = simready("export", "mcap", "--release", "r1", "--out", str(tmp_path / "mcap2"))
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1 and "bytes differ" in refused.stderr
    assert not (tmp_path / "mcap2").exists()

    # Missing release, bucket, credentials, setting: one line each on stderr, exit 1.
    for changes, says in (({}, "no release 'r9' (tags: latest, r1; 1 release(s)"),
                          ({"SIMREADY_S3_BUCKET": "no-such-bucket"}, "bucket 'no-such-bucket' does not exist at"),
                          ({"AWS_ACCESS_KEY_ID": None, "AWS_SECRET_ACCESS_KEY": None}, "no AWS credentials"),
                          ({"SIMREADY_S3_BUCKET": None}, "SIMREADY_S3_BUCKET: not set")):
        failed = simready("release", "show", "r9", **changes)
        assert failed.returncode == 1 and failed.stderr.count("\n") == 1 and says in failed.stderr, failed.stderr


def test_the_release_commands_open_the_production_store_without_dagster(tmp_path):
    """In production the commands build the S3 store from the environment alone (no Dagster, no dagster-aws: about
    3 s of imports); an endpoint that does not answer is one line naming it."""
    endpoint = f"http://127.0.0.1:{free_port()}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIMREADY_", "AWS_", "DAGSTER_"))}
    env.update(s3_env(endpoint), SIMREADY_DEPLOYMENT="production", SIMREADY_S3_BUCKET=S3_BUCKET,
               SIMREADY_S3_TIMEOUT_S="1", SIMREADY_S3_MAX_ATTEMPTS="1", SIMREADY_CACHE=str(tmp_path / "cache"))
    code = "import sys; from simready.cli import main; rc = main(['release', 'list']); " \
           "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dagster', 'dagster_aws'))); sys.exit(rc)"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stdout.strip() == "[]", done.stdout + done.stderr
    assert done.stderr.strip() == f"error: s3://{S3_BUCKET}/releases/.index.json: read failed: the S3 endpoint " \
        f"{endpoint} did not answer (EndpointConnectionError); is it up? (AWS_ENDPOINT_URL)"


@pytest.mark.slow
def test_the_dataset_release_asset_and_its_check(suite, released, tmp_path):
    import dagster as dg

    from simready.assets.release import dataset_release
    from simready.checks.release import release_verifies
    from simready.resources import ArtifactStore, SourceData

    store = _copy(suite, tmp_path)
    expected = released[1]
    resources = {"store": ArtifactStore(root=str(store.root)), "source": SourceData()}
    with dg.instance_for_test() as instance:
        result = dg.materialize([dataset_release, release_verifies], instance=instance, resources=resources)
        assert result.success
        meta = result.asset_materializations_for_node("dataset_release")[0].metadata
        assert meta["files"].value == expected.files and meta["release"].value.startswith("sha256:")
        assert [e.passed for e in result.get_asset_check_evaluations()] == [True]
        # A tampered object: the check fails, naming it.
        release = load_release(store, "latest")
        obj = store.root / ArtifactLayout(Path()).release_object(next(release.samples())["files"]["manifest.json"]["sha256"])
        obj.write_bytes(b"{}")
        check = dg.materialize([dataset_release, release_verifies], instance=instance, resources=resources,
                               selection=dg.AssetSelection.checks(release_verifies))
        assert [e.passed for e in check.get_asset_check_evaluations()] == [False]


@pytest.mark.slow
def test_a_sample_the_gate_has_not_judged_refuses_the_release(suite, tmp_path):
    store = _copy(suite, tmp_path)
    layout = ArtifactLayout(store.root)
    row = json.loads(layout.split_assignments.read_text())["rows"][1]
    layout.batch(row["template"], BATCH).sample(row["sample"]).validity.unlink()
    with pytest.raises(ReleaseError, match=f"blocking check suite_gated 1/2 passed \\({row['sample']}\\)"):
        _build(store)
