"""Releases and the settings the release and export commands read, under bad input (issue 27): a tag file holding
garbage or a symbolic link, a release record that is not JSON or not a release's, a datasheet page or record edited
after publishing, and ``SIMREADY_ARTIFACTS`` / ``DAGSTER_HOME`` naming no usable folder.

Each is one line on stderr naming the file (or setting) and the fact, exit 1, no traceback, nothing written, and a
file's bytes never quoted. The releases here are written by hand (records hashed as a build hashes them), so the
file runs in seconds; tests/test_release.py builds real ones.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simready.common import paths
from simready.common.atomic import json_bytes
from simready.cli import main
from simready.common.hashing import content_hash
from simready.artifacts.layout import ArtifactLayout
from simready.release import list_releases, load_release, verify_release
from simready.release.build import FORMAT, Release, record_files
from simready.release.datasheet import datasheet
from simready.scenario.splits import SPLITS
from simready.store import LocalStore

SECRET = "root:x:0:0:do-not-print-me"
COMMANDS = (["release", "list"], ["release", "show", "latest"], ["release", "show", "latest", "--json"],
            ["release", "verify", "latest"], ["release", "tag", "latest", "r2"])


def make_release(root: Path, suite_id: str = "s0", record: dict | None = None, sheet: dict | None = None,
                 items: list | None = None) -> Release:
    """A release folder (no samples) written as a build writes it, tagged latest."""
    record = record if record is not None else {"format": FORMAT, "suite": {}, "suite_id": suite_id,
                                                "splits": {s: [] for s in SPLITS}}
    sheet = sheet if sheet is not None else datasheet(record, {}, {}, {"generator": "test"})
    items = items if items is not None else []
    release = Release(content_hash({"release": record, "datasheet": sheet, "checklist": items}), record, sheet, items)
    folder = ArtifactLayout(root).release(release.hex)
    folder.root.mkdir(parents=True)
    try:
        files = record_files(release)
    except KeyError:  # crafted records: no page
        files = {n: json_bytes(v) for n, v in (("release.json", record), ("datasheet.json", sheet),
                                               ("checklist.json", items))}
    for name, data in files.items():
        (folder.root / name).write_bytes(data)
    tag = ArtifactLayout(root).release_tag("latest")
    tag.parent.mkdir(parents=True, exist_ok=True)
    tag.write_text(release.release_id + "\n")
    return release


def cli(argv: list[str], artifacts: Path | str | None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    saved = os.environ.get("SIMREADY_ARTIFACTS")
    try:
        if artifacts is None:
            os.environ.pop("SIMREADY_ARTIFACTS", None)
        else:
            os.environ["SIMREADY_ARTIFACTS"] = str(artifacts)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    finally:
        if saved is None:
            os.environ.pop("SIMREADY_ARTIFACTS", None)
        else:
            os.environ["SIMREADY_ARTIFACTS"] = saved
    return code, out.getvalue(), err.getvalue()


def refused(argv: list[str], artifacts: Path | str, *says: str) -> str:
    code, out, err = cli(argv, artifacts)
    assert code == 1, (argv, out, err)
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    for s in says:
        assert s in err, (s, err)
    assert SECRET not in out + err
    return err


def test_a_hand_made_release_lists_shows_and_verifies(tmp_path: Path) -> None:
    release = make_release(tmp_path)
    assert list_releases(LocalStore(tmp_path)) == {release.release_id: ["latest"]}
    for argv in COMMANDS:
        code, out, err = cli(argv, tmp_path)
        assert code == 0 and err == "", (argv, err)
    assert verify_release(LocalStore(tmp_path), load_release(LocalStore(tmp_path), "r2")) == []


GARBAGE_TAGS = {
    "empty": b"",
    "words": b"garbage\n",
    "not utf-8": b"\xff\xfe\x00\x01",
    "short id": b"sha256:abc\n",
    "id of uppercase hex": b"sha256:" + b"A" * 64 + b"\n",
    "two lines": b"sha256:" + b"a" * 64 + b"\nsha256:" + b"b" * 64 + b"\n",
    "a megabyte": b"sha256:" + b"a" * 1_000_000,
}


@pytest.mark.parametrize("content", GARBAGE_TAGS.values(), ids=GARBAGE_TAGS.keys())
@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(a) for a in COMMANDS])
def test_a_tag_file_holding_garbage_is_one_line(tmp_path: Path, content: bytes, argv: list[str]) -> None:
    """Was an IndexError in ``release verify|show`` (the id split on ':'), a wrong listing in ``release list``."""
    make_release(tmp_path)
    ArtifactLayout(tmp_path).release_tag("latest").write_bytes(content)
    refused(argv, tmp_path, "releases/tags/latest: not a release id")


def test_a_tag_naming_a_release_that_is_not_there_is_one_line(tmp_path: Path) -> None:
    make_release(tmp_path)
    ArtifactLayout(tmp_path).release_tag("latest").write_text("sha256:" + "0" * 64 + "\n")
    refused(["release", "show", "latest"], tmp_path, "release.json: missing: the release record")


@pytest.mark.parametrize("target", ["file", "folder", "nothing"])
@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(a) for a in COMMANDS])
def test_a_tag_that_is_a_symbolic_link_is_refused_and_its_target_never_read(tmp_path: Path, argv: list[str],
                                                                              target: str) -> None:
    """Was ``release list`` printing the target's contents (21 lines of a system file)."""
    store = tmp_path / "artifacts"
    make_release(store)
    secret = tmp_path / "passwd"
    if target == "file":
        secret.write_text("\n".join([SECRET] * 21) + "\n")
    elif target == "folder":
        secret.mkdir()
        (secret / "x").write_text(SECRET)
    tag = ArtifactLayout(store).release_tag("latest")
    tag.unlink()
    tag.symlink_to(secret)
    refused(argv, store, "releases/tags/latest: a tag is a plain file, and this is a symbolic link")


def test_a_tags_folder_that_is_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "artifacts"
    make_release(store)
    elsewhere = tmp_path / "etc"
    elsewhere.mkdir()
    (elsewhere / "passwd").write_text(SECRET)
    tags = ArtifactLayout(store).release_tags_dir
    (tags / "latest").unlink()
    tags.rmdir()
    tags.symlink_to(elsewhere)
    refused(["release", "list"], store, "releases/tags: a tag is a plain file, and this is a symbolic link")


BROKEN_RECORDS = {
    "{": (b"{", "release.json: the release record is not JSON (line 1 column 2"),
    "empty": (b"", "the release record is not JSON"),
    "not utf-8": (b"\xff\xfe{}", "the release record is not JSON"),
    "a list": (b"[]\n", "its records hash to"),
}


@pytest.mark.parametrize("content,says", BROKEN_RECORDS.values(), ids=BROKEN_RECORDS.keys())
@pytest.mark.parametrize("argv", COMMANDS[:4], ids=[" ".join(a) for a in COMMANDS[:4]])
def test_a_release_record_that_is_not_json_is_one_line(tmp_path: Path, content: bytes, says: str,
                                                       argv: list[str]) -> None:
    """Was a JSONDecodeError in ``release list`` (release.json holding ``{``)."""
    release = make_release(tmp_path)
    ArtifactLayout(tmp_path).release(release.hex).record.write_bytes(content)
    refused(argv, tmp_path, says)


@pytest.mark.parametrize("name", ["datasheet.json", "checklist.json"])
def test_the_other_records_not_json_are_one_line(tmp_path: Path, name: str) -> None:
    release = make_release(tmp_path)
    (ArtifactLayout(tmp_path).release(release.hex).root / name).write_bytes(b"{")
    refused(["release", "list"], tmp_path, f"{name}: ", "is not JSON")


CRAFTED = {
    "format": (lambda r, s, i: r.update(format="other"), "release.json: format: not 'simready-release-1'"),
    "splits a list": (lambda r, s, i: r.update(splits=[]), "release.json: splits: not a mapping"),
    "suite entry": (lambda r, s, i: r["suite"].update(x={"sha256": "nope", "bytes": 1}), "release.json: suite['x']"),
    "sample without files": (lambda r, s, i: r["splits"]["train"].append(
        {"sample": "s1", "template": "t", "batch": "b", "split": "train", "branches": {}}),
        "release.json: splits.train[0]: not a sample entry"),
    "file outside the sample": (lambda r, s, i: r["splits"]["val"].append(
        {"sample": "s1", "template": "t", "batch": "b", "split": "val", "branches": {},
         "files": {"../../x": {"sha256": "sha256:" + "a" * 64, "bytes": 1}}}),
        "release.json: splits.val[0].files: '../../x' is not a relative path"),
    "counts": (lambda r, s, i: s.update(counts={}), "datasheet.json: counts.train: not the counts"),
    "checklist": (lambda r, s, i: i.append({"item": 1}), "checklist.json: not a QA checklist"),
}


@pytest.mark.parametrize("edit,says", CRAFTED.values(), ids=CRAFTED.keys())
def test_crafted_records_that_hash_to_their_id_but_are_not_a_release_are_one_line(tmp_path: Path, edit,
                                                                                   says: str) -> None:
    """Records whose id matches (anyone can hash them) but whose shape a reader relies on is wrong: was a
    KeyError or TypeError in list/show/verify."""
    record = {"format": FORMAT, "suite": {}, "suite_id": "s0", "splits": {s: [] for s in SPLITS}}
    sheet = datasheet(record, {}, {}, {"generator": "test"})
    items: list = []
    edit(record, sheet, items)
    make_release(tmp_path, record=record, sheet=sheet, items=items)
    for argv in COMMANDS[:4]:
        refused(argv, tmp_path, says)


def test_a_folder_under_releases_that_is_not_a_release_is_not_listed(tmp_path: Path) -> None:
    release = make_release(tmp_path)
    stray = ArtifactLayout(tmp_path).releases_dir / "notes"
    stray.mkdir()
    (stray / "release.json").write_text("{")
    assert list_releases(LocalStore(tmp_path)) == {release.release_id: ["latest"]}


@pytest.mark.parametrize("name,edit", [
    ("datasheet.md", lambda b: b + b"<script>alert(1)</script>\n"),
    ("datasheet.md", lambda b: b""),
    ("release.json", lambda b: b + b"\n"),
    ("checklist.json", lambda b: b.replace(b"[]", b"[ ]")),
])
def test_verify_covers_the_datasheet_page_and_the_records_bytes(tmp_path: Path, name: str, edit) -> None:
    """Was "N files verify" after a script tag was appended to datasheet.md."""
    release = make_release(tmp_path)
    page = ArtifactLayout(tmp_path).release(release.hex).root / name
    page.write_bytes(edit(page.read_bytes()))
    code, out, err = cli(["release", "verify", "latest"], tmp_path)
    assert code == 1 and err == ""
    assert out.splitlines() == [f"{name}: missing or its bytes differ from the release's",
                                f"release {release.release_id}: 1 of 5 files FAIL"]


def test_verify_refuses_a_datasheet_page_that_is_a_symbolic_link(tmp_path: Path) -> None:
    release = make_release(tmp_path)
    page = ArtifactLayout(tmp_path).release(release.hex).datasheet_page
    copy = tmp_path / "page.md"
    copy.write_bytes(page.read_bytes())
    page.unlink()
    page.symlink_to(copy)
    assert verify_release(LocalStore(tmp_path), release) == ["datasheet.md: missing or its bytes differ from the release's"]


def _loop(tmp: Path) -> Path:
    (tmp / "loop").symlink_to(tmp / "loop")
    return tmp / "loop"


def _file(tmp: Path) -> Path:
    (tmp / "file").write_text("x")
    return tmp / "file"


def _dangling(tmp: Path) -> Path:
    (tmp / "dangling").symlink_to(tmp / "nothing")
    return tmp / "dangling"


ARTIFACTS = {
    "empty": (lambda tmp: "", "SIMREADY_ARTIFACTS: set but empty"),
    "a file": (_file, "is a file; name the artifacts folder"),
    "under a file": (lambda tmp: _file(tmp) / "sub", "lies under a file"),
    "missing": (lambda tmp: tmp / "missing", "does not exist"),
    "a symbolic link loop": (_loop, "is a symbolic link loop"),
    "a dangling symbolic link": (_dangling, "is a symbolic link to nothing"),
}
READERS = (*COMMANDS, ["export", "nuscenes", "--release", "latest", "--out", "OUT"],
           ["export", "mcap", "--release", "latest", "--out", "OUT"])


@pytest.mark.parametrize("setting,says", ARTIFACTS.values(), ids=ARTIFACTS.keys())
@pytest.mark.parametrize("argv", READERS, ids=[" ".join(a[:2]) + f"-{i}" for i, a in enumerate(READERS)])
def test_simready_artifacts_naming_no_folder_is_one_line(tmp_path: Path, setting, says: str, argv: list[str]) -> None:
    """Was "no releases in …" (rc 0) or the empty string read as the current folder."""
    out = tmp_path / "out"
    argv = [str(out) if a == "OUT" else a for a in argv]
    err = refused(argv, setting(tmp_path), says)
    assert err.startswith("error: SIMREADY_ARTIFACTS: ")
    assert not out.exists()


@pytest.mark.parametrize("setting,says", [v for k, v in ARTIFACTS.items() if k != "missing"],
                         ids=[k for k in ARTIFACTS if k != "missing"])
def test_status_and_run_refuse_a_bad_simready_artifacts_before_dagster(tmp_path: Path, setting, says: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    artifacts = setting(tmp_path)
    for argv in (["status"], ["run"]):
        refused(argv, artifacts, says)


@pytest.mark.parametrize("home,says", [
    (lambda tmp: _file(tmp), "is not a folder"),
    (lambda tmp: _file(tmp) / "sub", "cannot make the folder"),
    (lambda tmp: _loop(tmp), "cannot make the folder"),
    (lambda tmp: "", "is not an absolute folder path"),
    (lambda tmp: "relative/home", "is not an absolute folder path"),
], ids=["a file", "under a file", "a symbolic link loop", "empty", "relative"])
def test_dagster_home_naming_no_folder_is_one_line(tmp_path: Path, home, says: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Was a FileExistsError traceback (DAGSTER_HOME naming a file)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DAGSTER_HOME", str(home(tmp_path)))
    for argv in (["status"], ["run"]):
        err = refused(argv, tmp_path / "artifacts", says)
        assert err.startswith("error: DAGSTER_HOME: ")
    assert not (tmp_path / "relative").exists()
    with pytest.raises(Exception, match="DAGSTER_HOME"):
        paths.dagster_home()


# --- fuzz: any bytes in a tag or a record ------------------------------------------------------------------------

FUZZ = settings(max_examples=25, deadline=3000, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(which=st.sampled_from(["tag", "release.json", "datasheet.json", "checklist.json", "datasheet.md"]),
       data=st.binary(max_size=200), argv=st.sampled_from(COMMANDS))
def test_fuzz_release_files(which: str, data: bytes, argv: list[str]) -> None:
    """Any bytes in a tag file or a release's own file: the command succeeds or prints one line and exits 1."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "artifacts"
        release = make_release(root)
        layout = ArtifactLayout(root)
        target = layout.release_tag("latest") if which == "tag" else layout.release(release.hex).root / which
        target.write_bytes(data)
        before = sorted(p.relative_to(tmp).as_posix() for p in Path(tmp).rglob("*"))
        code, out, err = cli(argv, root)
        assert code in (0, 1) and err.count("\n") <= 1 and "Traceback" not in err, err
        after = sorted(p.relative_to(tmp).as_posix() for p in Path(tmp).rglob("*"))
        if argv[:2] != ["release", "tag"] or code != 0:
            assert after == before


def test_tagging_never_writes_through_a_symbolic_link(tmp_path: Path) -> None:
    store = tmp_path / "artifacts"
    release = make_release(store)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    tags = ArtifactLayout(store).release_tags_dir
    (tags / "latest").unlink()
    tags.rmdir()
    tags.symlink_to(elsewhere)
    refused(["release", "tag", release.release_id, "r2"], store, "releases/tags/r2: a symbolic link lies on the tag's path")
    assert list(elsewhere.iterdir()) == []
