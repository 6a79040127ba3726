"""The S3 artifact store (``simready.store.s3``) against a real S3 endpoint over HTTP (moto's server mode).

What is checked: the Store contract as LocalStore keeps it (same keys, same bytes), publication by folder index
(readers trust only the index, a failed save leaves the previous folder), verification on read, and one-line
errors when the endpoint or the bucket is not there.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from simready.common.errors import IntegrityError, StoreError
from simready.store import LocalStore
from simready.store.s3 import INDEX_NAME, TRANSFER_THREADS, S3Store, check_bucket, s3_client
from simready.testing.servers import s3_server

pytestmark = pytest.mark.slow

BUCKET = "artifacts"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with s3_server(tmp_path_factory.mktemp("moto")) as srv:
        yield srv


def _client(endpoint: str, timeout_s: int = 5, attempts: int = 2):
    return s3_client(timeout_s, attempts, endpoint_url=endpoint, region_name="us-east-1",
                     aws_access_key_id="testing", aws_secret_access_key="testing")


@pytest.fixture
def client(server):
    c = _client(server.endpoint_url)
    c.create_bucket(Bucket=BUCKET)
    yield c
    for page in c.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
        for obj in page.get("Contents", []):
            c.delete_object(Bucket=BUCKET, Key=obj["Key"])
    c.delete_bucket(Bucket=BUCKET)


def _store(client, tmp_path: Path, name: str = "cache") -> S3Store:
    return S3Store(client, BUCKET, "deploy/a", cache_dir=tmp_path / name)


def _write_batch(folder: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)


BATCH = "samples/t/b0000"
FILES = {"batch.json": b'{"accepted": 2}\n', "s1/manifest.json": b"{}", "s1/trace.parquet": b"PAR1" * 100,
         "s2/manifest.json": b'{"x": 1}'}


def test_same_keys_and_bytes_as_the_local_store(client, tmp_path: Path) -> None:
    s3, local = _store(client, tmp_path), LocalStore(tmp_path / "local")
    for store in (s3, local):
        _write_batch(store.local_dir(BATCH), FILES)
        store.save(BATCH)
        store.write_bytes("samples/t/rejection_log.parquet", b"rows")
    assert s3.list("") == local.list("") == sorted(
        [f"{BATCH}/{k}" for k in FILES] + ["samples/t/rejection_log.parquet"])
    assert s3.list(f"{BATCH}/s1") == local.list(f"{BATCH}/s1")
    for key in local.list(""):
        assert s3.read_bytes(key) == local.read_bytes(key)
        assert s3.exists(key) and local.exists(key)
    assert s3.exists(BATCH) and s3.exists("samples") and not s3.exists("samples/t/b0001")
    assert s3.url(f"{BATCH}/batch.json") == f"s3://{BUCKET}/deploy/a/{BATCH}/batch.json"
    # The objects live under the store's prefix, with the folder's index beside them.
    index = json.loads(client.get_object(Bucket=BUCKET, Key=f"deploy/a/{BATCH}/{INDEX_NAME}")["Body"].read())
    assert sorted(index["objects"]) == sorted(FILES)


def test_another_process_cache_gets_the_published_bytes(client, tmp_path: Path) -> None:
    writer = _store(client, tmp_path, "writer")
    _write_batch(writer.local_dir(BATCH), FILES)
    writer.save(BATCH)
    reader = _store(client, tmp_path, "reader")
    folder = reader.local_dir(BATCH)
    got = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert got == FILES
    # A stage changes one file and removes another: the index, and the next reader, follow.
    folder2 = writer.local_dir(BATCH)
    (folder2 / "s1/manifest.json").write_bytes(b'{"changed": true}')
    (folder2 / "s2/manifest.json").unlink()
    writer.save(BATCH)
    fresh = _store(client, tmp_path, "reader2")
    assert fresh.list(BATCH) == sorted(f"{BATCH}/{k}" for k in ("batch.json", "s1/manifest.json", "s1/trace.parquet"))
    assert fresh.read_bytes(f"{BATCH}/s1/manifest.json") == b'{"changed": true}'
    # The old reader's cache is brought up to date by a new store on the same cache folder.
    again = _store(client, tmp_path, "reader").local_dir(BATCH)
    assert not (again / "s2/manifest.json").exists()
    assert (again / "s1/manifest.json").read_bytes() == b'{"changed": true}'


def test_readers_trust_only_the_index(client, tmp_path: Path) -> None:
    """An object a failed step uploaded under an indexed folder, but whose index it never wrote, does not exist."""
    store = _store(client, tmp_path)
    _write_batch(store.local_dir(BATCH), FILES)
    store.save(BATCH)
    client.put_object(Bucket=BUCKET, Key=f"deploy/a/{BATCH}/s3/manifest.json", Body=b"half a step")
    reader = _store(client, tmp_path, "reader")
    assert f"{BATCH}/s3/manifest.json" not in reader.list(BATCH)
    assert not reader.exists(f"{BATCH}/s3/manifest.json")
    with pytest.raises(FileNotFoundError):
        reader.read_bytes(f"{BATCH}/s3/manifest.json")
    assert not (reader.local_dir(BATCH) / "s3").exists()


def test_a_failed_save_leaves_the_previous_folder(client, tmp_path: Path) -> None:
    store = _store(client, tmp_path)
    _write_batch(store.local_dir(BATCH), FILES)
    store.save(BATCH)
    before = {k: store.read_bytes(k) for k in store.list(BATCH)}

    broken = _store(client, tmp_path, "broken")
    folder = broken.local_dir(BATCH)
    (folder / "s1/trace.parquet").write_bytes(b"new trace")
    (folder / "s9/manifest.json").parent.mkdir()
    (folder / "s9/manifest.json").write_bytes(b"new sample")
    uploads = []
    real_upload = broken._upload

    def upload_then_die(key, path):
        if uploads:
            raise StoreError(f"s3://{BUCKET}/{key}", "", "the worker died here")
        uploads.append(key)
        real_upload(key, path)

    broken._upload = upload_then_die
    with pytest.raises(StoreError):
        broken.save(BATCH)
    assert uploads  # one new object reached S3 ...
    reader = _store(client, tmp_path, "reader")
    assert {k: reader.read_bytes(k) for k in reader.list(BATCH)} == before  # ... and no reader sees it


def test_a_commit_sweeps_what_a_killed_step_left_pending(client, tmp_path: Path) -> None:
    """A step killed between its intermediate and final index leaves a ``.pending/`` object; the next save removes it."""
    store = _store(client, tmp_path)
    _write_batch(store.local_dir(BATCH), FILES)
    store.save(BATCH)
    leftover = f"deploy/a/{BATCH}/.pending/deadbeef/s1/trace.parquet"
    client.put_object(Bucket=BUCKET, Key=leftover, Body=b"a killed step's upload")
    folder = store.local_dir(BATCH)
    (folder / "batch.json").write_bytes(b'{"accepted": 3}\n')
    store.save(BATCH)
    keys = [o["Key"] for o in client.list_objects_v2(Bucket=BUCKET, Prefix=f"deploy/a/{BATCH}/")["Contents"]]
    assert leftover not in keys and not any("/.pending/" in k for k in keys)
    assert _store(client, tmp_path, "reader").read_bytes(f"{BATCH}/batch.json") == b'{"accepted": 3}\n'


def test_a_changed_object_is_an_integrity_error(client, tmp_path: Path) -> None:
    store = _store(client, tmp_path)
    _write_batch(store.local_dir(BATCH), FILES)
    store.save(BATCH)
    client.put_object(Bucket=BUCKET, Key=f"deploy/a/{BATCH}/s1/manifest.json", Body=b'{"tampered": 1}')
    reader = _store(client, tmp_path, "reader")
    with pytest.raises(IntegrityError, match=f"s3://{BUCKET}/deploy/a/{BATCH}/s1/manifest.json"):
        reader.read_bytes(f"{BATCH}/s1/manifest.json")
    with pytest.raises(IntegrityError):
        reader.local_dir(BATCH)


def test_write_bytes_into_an_indexed_folder_extends_its_index(client, tmp_path: Path) -> None:
    store = _store(client, tmp_path)
    with store.scratch() as scratch:
        _write_batch(scratch, {"template.json": b"{}", "plot.png": b"png"})
        store.publish("templates/t", scratch)
    store.write_bytes("templates/t/rig.json", b'{"rig": 1}')
    reader = _store(client, tmp_path, "reader")
    assert reader.list("templates/t") == ["templates/t/plot.png", "templates/t/rig.json", "templates/t/template.json"]
    assert reader.read_bytes("templates/t/rig.json") == b'{"rig": 1}'
    # Publishing again replaces the folder as a whole: what the new folder lacks is gone for readers.
    with store.scratch() as scratch:
        _write_batch(scratch, {"template.json": b'{"v": 2}'})
        store.publish("templates/t", scratch)
    assert _store(client, tmp_path, "reader3").list("templates/t") == ["templates/t/template.json"]


def test_remove_and_local_path(client, tmp_path: Path) -> None:
    store = _store(client, tmp_path)
    _write_batch(store.local_dir(BATCH), FILES)
    store.save(BATCH)
    store.write_bytes("coverage/coverage.json", b"{}")
    reader = _store(client, tmp_path, "reader")
    assert reader.local_path("coverage/coverage.json").read_bytes() == b"{}"
    assert reader.local_path(f"{BATCH}/s1/trace.parquet").read_bytes() == FILES["s1/trace.parquet"]
    store.remove(BATCH)
    assert not _store(client, tmp_path, "reader4").exists(BATCH)
    assert store.list("") == ["coverage/coverage.json"]


def test_share_url_works_off_the_server(client, tmp_path: Path) -> None:
    store = _store(client, tmp_path)
    store.write_bytes("coverage/coverage.json", b'{"cells": 3}')
    url = store.share_url("coverage/coverage.json")
    assert url.startswith("http") and "Signature" in url
    with urllib.request.urlopen(url, timeout=5) as response:
        assert response.read() == b'{"cells": 3}'
    assert "prefix=deploy/a/samples/" in store.share_url("samples", folder=True)
    assert LocalStore(tmp_path).share_url("coverage/coverage.json") is None


def test_save_without_local_dir_is_refused(client, tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="local_dir"):
        _store(client, tmp_path).save(BATCH)


def test_missing_bucket_is_one_line(server, tmp_path: Path) -> None:
    store = S3Store(_client(server.endpoint_url), "no-such-bucket", cache_dir=tmp_path)
    with pytest.raises(StoreError) as err:
        check_bucket(store)
    assert "no-such-bucket" in str(err.value) and "SIMREADY_S3_BUCKET" in str(err.value)
    assert "\n" not in str(err.value)


def test_an_endpoint_that_does_not_answer_is_one_line_naming_the_object(server, client, tmp_path: Path) -> None:
    store = S3Store(_client(server.endpoint_url, timeout_s=1, attempts=1), BUCKET, cache_dir=tmp_path)
    server.pause()
    try:
        with pytest.raises(StoreError) as err:
            store.write_bytes("samples/t/b0000/batch.json", b"{}")
    finally:
        server.resume()
    message = str(err.value)
    assert message.startswith(f"s3://{BUCKET}/samples/t/b0000/batch.json: write failed") and "did not answer" in message
    assert "\n" not in message
    store.write_bytes("samples/t/b0000/batch.json", b"{}")  # the same call works once the server is back
    assert store.read_bytes("samples/t/b0000/batch.json") == b"{}"


def test_transfers_stop_starting_once_one_has_failed(tmp_path: Path) -> None:
    """A folder's objects move :data:`TRANSFER_THREADS` at a time. On an endpoint that does not answer, the requests
    under way fail together after their time limits: the failure is raised then, and no thread starts the folder's
    next object (each would wait out its own time limits first, holding the step for another round)."""
    from simready.testing.servers import free_port

    store = S3Store(_client(f"http://127.0.0.1:{free_port()}"), BUCKET, cache_dir=tmp_path)
    started, lock = [], threading.Lock()

    def stalled(i: int) -> None:
        with lock:
            started.append(i)
        time.sleep(0.3)  # the request's time limit
        raise StoreError(f"s3://{BUCKET}/x/{i}", "", "the S3 endpoint did not answer")

    with pytest.raises(StoreError, match="did not answer"):
        store._parallel(stalled, list(range(5 * TRANSFER_THREADS)))
    assert sorted(started) == list(range(TRANSFER_THREADS))


def test_a_closed_port_is_one_line(tmp_path: Path) -> None:
    from simready.testing.servers import free_port

    store = S3Store(_client(f"http://127.0.0.1:{free_port()}", timeout_s=1, attempts=1), BUCKET, cache_dir=tmp_path)
    with pytest.raises(StoreError, match="did not answer"):
        store.read_bytes("a/b.json")


def test_copy_is_a_server_side_copy_of_the_indexed_bytes(client, tmp_path: Path) -> None:
    store = _store(client, tmp_path)
    staged = tmp_path / "staged"
    big = bytes(range(256)) * 400
    _write_batch(staged, {**FILES, "s1/trace.parquet": big})
    store.publish(BATCH, staged)
    before = dict(store.transfer)
    store.copy(f"{BATCH}/s1/trace.parquet", "releases/objects/ab/abc")
    # Only the folder's index comes down; nothing goes up: S3 copied the bytes.
    assert store.transfer["bytes_down"] - before["bytes_down"] < 2000 and store.transfer["bytes_up"] == before["bytes_up"]
    assert _store(client, tmp_path, "other").read_bytes("releases/objects/ab/abc") == big
    with pytest.raises(FileNotFoundError):
        store.copy(f"{BATCH}/s1/missing.bin", "releases/objects/ab/abd")
