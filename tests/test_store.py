"""The artifact store (``simready.store``): LocalStore round trips, atomic writes, listing, publishing, and keys
that try to leave the root."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from simready.common.errors import SimreadyError, StoreKeyError
from simready.artifacts.layout import ArtifactLayout
from simready.store import LocalStore, Store, key_parts


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    return LocalStore(tmp_path / "artifacts")


def test_local_store_is_a_store(store: LocalStore) -> None:
    assert isinstance(store, Store)


def test_round_trip(store: LocalStore) -> None:
    store.write_bytes("samples/t/b0000/batch.json", b'{"accepted": 1}\n')
    assert store.read_bytes("samples/t/b0000/batch.json") == b'{"accepted": 1}\n'
    assert store.read_json("samples/t/b0000/batch.json") == {"accepted": 1}
    with store.open("samples/t/b0000/batch.json") as f:
        assert f.read() == b'{"accepted": 1}\n'
    assert (store.root / "samples" / "t" / "b0000" / "batch.json").read_bytes() == b'{"accepted": 1}\n'
    store.write_bytes("samples/t/b0000/batch.json", b"{}")
    assert store.read_bytes("samples/t/b0000/batch.json") == b"{}"


def test_layout_paths_are_keys(store: LocalStore) -> None:
    keys = ArtifactLayout(Path())
    store.write_bytes(keys.certification, b"{}")
    assert store.list("catalog") == ["catalog/certification.json"]
    assert store.url(keys.certification) == str(ArtifactLayout(store.root.absolute()).certification)
    assert store.local_dir(keys.batch("t", "b0000").root) == ArtifactLayout(store.root).batch("t", "b0000").root


def test_missing_object(store: LocalStore) -> None:
    with pytest.raises(FileNotFoundError):
        store.read_bytes("nothing/here.json")
    assert not store.exists("nothing/here.json")
    store.remove("nothing/here.json")


def test_write_is_atomic(store: LocalStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """While bytes are being written only the old object is visible under the key, and a failed write leaves it."""
    store.write_bytes("a/x.bin", b"old")
    seen: list[bytes] = []
    real_fsync = os.fsync

    def fsync_then_look(fd: int) -> None:
        real_fsync(fd)
        seen.append(store.read_bytes("a/x.bin"))
        seen.append(",".join(store.list("a")).encode())

    monkeypatch.setattr(os, "fsync", fsync_then_look)
    store.write_bytes("a/x.bin", b"new" * 1000)
    assert seen == [b"old", b"a/x.bin"]

    def fail(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OSError, match="disk full"):
        store.write_bytes("a/x.bin", b"partial")
    assert store.read_bytes("a/x.bin") == b"new" * 1000
    assert sorted(p.name for p in (store.root / "a").iterdir()) == ["x.bin"]


def test_concurrent_readers_never_see_part_of_an_object(store: LocalStore) -> None:
    big = [bytes([i]) * 2_000_000 for i in range(2)]
    store.write_bytes("k.bin", big[0])
    bad: list[int] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            data = store.read_bytes("k.bin")
            if data not in big:
                bad.append(len(data))

    reader = threading.Thread(target=read)
    reader.start()
    for i in range(20):
        store.write_bytes("k.bin", big[i % 2])
    stop.set()
    reader.join()
    assert bad == []


def test_list_and_exists(store: LocalStore) -> None:
    for key in ("s/t/b1/x.json", "s/t/b0/y.json", "s/t/b0/z/w.json", "c/c.json"):
        store.write_bytes(key, b"1")
    (store.root / "s" / "t" / ".x.json.123.tmp").write_bytes(b"in flight")
    (store.root / "s" / ".scratch-1").mkdir()
    (store.root / "s" / ".scratch-1" / "q.json").write_bytes(b"staged")
    assert store.list("s/t") == ["s/t/b0/y.json", "s/t/b0/z/w.json", "s/t/b1/x.json"]
    assert store.list("s/t/") == store.list("s/t")
    assert store.list() == ["c/c.json", *store.list("s")]
    assert store.list("s/t/b0/y.json") == ["s/t/b0/y.json"]
    assert store.list("nothing") == []
    assert store.exists("s/t/b0/y.json") and store.exists("s/t/b0") and store.exists("")
    assert not store.exists("s/t/b2") and not store.exists("s/t/b0/y")
    (store.root / "empty").mkdir()
    assert not store.exists("empty")


def test_url_is_the_local_path(store: LocalStore) -> None:
    store.write_bytes("coverage/coverage.json", b"{}")
    assert Path(store.url("coverage/coverage.json")).read_bytes() == b"{}"
    assert Path(store.url("coverage/coverage.json")).is_absolute()
    assert store.url("") == str(store.root.absolute())


def test_remove(store: LocalStore) -> None:
    store.write_bytes("r/a/1.json", b"1")
    store.write_bytes("r/a/2.json", b"2")
    store.write_bytes("r/b.json", b"3")
    store.remove("r/a/1.json")
    assert store.list("r") == ["r/a/2.json", "r/b.json"]
    store.remove("r/a")
    assert store.list("r") == ["r/b.json"]
    with pytest.raises(StoreKeyError):
        store.remove("")


def _folder(path: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_bytes(data)
    return path


def test_publish_replaces_the_folder_as_a_whole(store: LocalStore) -> None:
    store.write_bytes("templates/t/template.json", b"old")
    store.write_bytes("templates/t/rig.json", b"old rig")
    store.write_bytes("templates/u/template.json", b"other")
    with store.scratch() as scratch:
        staged = _folder(scratch / "t", {"template.json": b"new", "plot.png": b"png"})
        store.publish("templates/t", staged)
        assert not staged.exists()
    assert store.list("templates") == ["templates/t/plot.png", "templates/t/template.json", "templates/u/template.json"]
    assert store.read_bytes("templates/t/template.json") == b"new"
    assert sorted(p.name for p in (store.root / "templates").iterdir()) == ["t", "u"]
    assert [p.name for p in store.root.iterdir()] == ["templates"]


def test_publish_into_an_empty_place_and_from_another_filesystem(store: LocalStore, tmp_path: Path) -> None:
    elsewhere = _folder(tmp_path / "elsewhere", {"pool.json": b"{}", "s/trace.parquet": b"pq"})
    store.publish("reference/t", elsewhere)
    assert store.list("reference") == ["reference/t/pool.json", "reference/t/s/trace.parquet"]
    assert not elsewhere.exists()


def test_publish_copies_across_devices(store: LocalStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the staging folder is on another device it is copied beside the target first, then renamed in."""
    store.write_bytes("d/t/old.json", b"old")
    staged = _folder(tmp_path / "staged", {"new.json": b"new"})
    real_stat = os.stat

    def other_device(path, *args, **kwargs):
        st = real_stat(path, *args, **kwargs)
        if isinstance(path, (str, os.PathLike)) and Path(path) == staged:
            ns = {f: getattr(st, f) for f in ("st_atime_ns", "st_mtime_ns", "st_ctime_ns")}
            return os.stat_result((st.st_mode, st.st_ino, st.st_dev + 1, *tuple(st)[3:]), ns)
        return st

    copies: list[Path] = []
    real_copytree = shutil.copytree

    def copytree(src, dst, **kwargs):
        copies.append(Path(src))
        return real_copytree(src, dst, **kwargs)

    monkeypatch.setattr(os, "stat", other_device)
    monkeypatch.setattr(shutil, "copytree", copytree)
    store.publish("d/t", staged)
    monkeypatch.undo()
    assert copies == [staged]
    assert store.list("d") == ["d/t/new.json"]
    assert not staged.exists()
    assert [p.name for p in (store.root / "d").iterdir()] == ["t"]


def test_failed_publish_leaves_the_old_folder(store: LocalStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store.write_bytes("p/t/a.json", b"a")
    staged = _folder(tmp_path / "staged", {"b.json": b"b"})
    real_replace = os.replace

    def refuse_the_new(src, dst):
        if Path(src) == staged:
            raise OSError("no")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", refuse_the_new)
    with pytest.raises(OSError, match="no"):
        store.publish("p/t", staged)
    monkeypatch.undo()
    assert store.list("p") == ["p/t/a.json"]
    assert [p.name for p in (store.root / "p").iterdir()] == ["t"]
    with pytest.raises(NotADirectoryError):
        store.publish("p/t", tmp_path / "absent")
    with pytest.raises(StoreKeyError):
        store.publish("", staged)


@pytest.mark.parametrize("key", ["../outside.json", "a/../../outside.json", "/etc/passwd", "a/./b", "a//b",
                                 "a\\b", "..", ""])
def test_keys_that_leave_the_root_are_refused(store: LocalStore, key: str) -> None:
    for call in (store.read_bytes, store.exists, store.url, store.remove, store.open,
                 lambda k: store.write_bytes(k, b"x"), store.list, store.local_dir):
        if key == "" and call in (store.exists, store.url, store.list, store.local_dir):
            continue  # the empty key is the whole store, a valid prefix
        with pytest.raises(StoreKeyError) as exc:
            call(key)
        assert isinstance(exc.value, SimreadyError)
        assert "\n" not in exc.value.one_line() and "key" in exc.value.one_line()
    assert not (store.root.parent / "outside.json").exists()


def test_absolute_path_objects_are_refused() -> None:
    with pytest.raises(StoreKeyError, match="relative POSIX path"):
        key_parts(Path("/tmp/x.json"))
    assert key_parts(Path("samples/t/b0000")) == ("samples", "t", "b0000")
    assert key_parts(Path(), prefix=True) == ()


def test_from_environment_reads_simready_artifacts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIMREADY_ARTIFACTS", str(tmp_path / "elsewhere"))
    assert LocalStore.from_environment().root == tmp_path / "elsewhere"


def test_save_after_working_in_a_local_folder(store: LocalStore) -> None:
    """A stage writes files in ``local_dir(prefix)`` and saves the prefix: locally the files are the objects already."""
    folder = store.local_dir("samples/t/b0000")
    (folder / "s1").mkdir(parents=True)
    (folder / "s1" / "manifest.json").write_bytes(b"{}")
    store.save("samples/t/b0000")
    assert store.list("samples/t/b0000") == ["samples/t/b0000/s1/manifest.json"]
    with pytest.raises(StoreKeyError):
        store.save("../outside")


def test_copy_links_the_bytes_and_a_replaced_source_leaves_the_copy(store: LocalStore) -> None:
    store.write_bytes("samples/t/b/s/trace.parquet", b"first")
    store.copy("samples/t/b/s/trace.parquet", "releases/objects/ab/abc")
    copy = store.root / "releases/objects/ab/abc"
    assert copy.read_bytes() == b"first" and copy.stat().st_nlink == 2
    store.write_bytes("samples/t/b/s/trace.parquet", b"second")  # stages replace files; the link keeps its bytes
    assert copy.read_bytes() == b"first"
    assert store.list("releases") == ["releases/objects/ab/abc"]


def test_copy_onto_a_name_already_there_replaces_it_and_keeps_a_known_digest(store: LocalStore) -> None:
    from simready.common.hashing import file_sha256, remembered_sha256

    store.write_bytes("samples/t/b/s/a.bin", b"new bytes")
    store.write_bytes("releases/objects/ab/abc", b"old")
    digest = file_sha256(store.root / "samples/t/b/s/a.bin")
    store.copy("samples/t/b/s/a.bin", "releases/objects/ab/abc")
    target = store.root / "releases/objects/ab/abc"
    assert target.read_bytes() == b"new bytes" and target.stat().st_nlink == 2
    known = remembered_sha256(target)
    assert known is not None and known[1] == digest  # the link: the source's bytes, not hashed again
    assert store.list("releases") == ["releases/objects/ab/abc"]  # no sibling left behind
