"""Canonical hashing: key order and float spelling never change the hash."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simready.common.hashing import canonical_json, content_hash

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                         st.floats(allow_nan=False, allow_infinity=False, width=64), st.text(max_size=8))
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(st.text(max_size=6), children, max_size=4)),
    max_leaves=20,
)


def _reverse_keys(value):
    if isinstance(value, dict):
        return {k: _reverse_keys(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reverse_keys(v) for v in value]
    return value


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_key_order_does_not_change_hash(value):
    assert content_hash(value) == content_hash(_reverse_keys(value))


def test_float_spelling_does_not_change_hash():
    assert content_hash({"x": 1}) == content_hash({"x": 1.0}) == content_hash({"x": float("1.000")})
    assert content_hash({"x": 0.1 + 0.2}) == content_hash({"x": 0.3})


def test_one_centimetre_changes_hash():
    assert content_hash({"x": 12.30}) != content_hash({"x": 12.31})


def test_non_finite_refused():
    with pytest.raises(ValueError):
        canonical_json({"x": math.nan})


def _counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files :func:`file_sha256` opens from now on."""
    import builtins

    from simready.common import hashing

    opened: list[str] = []
    real_open = builtins.open

    def counting_open(path, *args, **kwargs):
        opened.append(str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(hashing, "open", counting_open, raising=False)
    return opened


def test_a_file_version_is_hashed_once_and_any_write_hashes_it_again(tmp_path, monkeypatch) -> None:
    import hashlib
    import time

    from simready.common.hashing import file_sha256

    opened = _counting_reads(monkeypatch)
    p = tmp_path / "f.bin"
    p.write_bytes(b"abc")
    assert file_sha256(p) == "sha256:" + hashlib.sha256(b"abc").hexdigest()
    assert file_sha256(p) == "sha256:" + hashlib.sha256(b"abc").hexdigest()
    assert len(opened) == 1
    # Past one tick of a coarse file-system clock (1-10 ms on kernels before 6.13; a same-size rewrite in place
    # within one tick is the stated limit of simready.common.hashing.FileVersion).
    time.sleep(0.05)
    with open(p, "r+b") as f:  # in place, the same size: the file's change time moves
        f.write(b"x")
    assert file_sha256(p) == "sha256:" + hashlib.sha256(b"xbc").hexdigest()
    time.sleep(0.05)
    p.write_bytes(b"xbd")
    assert file_sha256(p) == "sha256:" + hashlib.sha256(b"xbd").hexdigest()
    assert len(opened) == 3


def test_a_written_digest_and_a_links_are_remembered_and_learned_from_a_worker(tmp_path, monkeypatch) -> None:
    import hashlib
    import os

    from simready.common.hashing import (file_sha256, file_version, known_count, learn_digests, learned_digests,
                                         remember_link, remember_sha256, remembered_sha256)

    opened = _counting_reads(monkeypatch)
    p, q = tmp_path / "written.bin", tmp_path / "link.bin"
    p.write_bytes(b"payload")
    mark = known_count()
    remember_sha256(p, "sha256:as-written")  # the writer hashed the bytes it wrote
    assert file_sha256(p) == "sha256:as-written" and not opened
    source = remembered_sha256(p)
    os.link(p, q)  # the inode's change time moves
    assert remembered_sha256(q) is None
    remember_link(source, q)
    assert file_sha256(q) == file_sha256(p) == "sha256:as-written" and not opened
    learned = learned_digests(mark)
    assert {d for _, d in learned} == {"sha256:as-written"} and len(learned) == 3  # p, then q and p re-linked
    r = tmp_path / "other.bin"
    r.write_bytes(b"other")
    learn_digests([(list(file_version(r)), "sha256:from-a-worker")])  # as JSON brings it: lists
    assert file_sha256(r) == "sha256:from-a-worker" and not opened
    # A version is the file under its name: another name with the same inode, size and times (a deleted file's inode
    # given to a new one within a tick of the clock) is read, not answered from memory.
    s = tmp_path / "same-inode-elsewhere.bin"
    s.write_bytes(b"fresh")
    learn_digests([([str(tmp_path / "gone.bin"), *file_version(s)[1:]], "sha256:a-deleted-file")])
    assert file_sha256(s) == "sha256:" + hashlib.sha256(b"fresh").hexdigest() and len(opened) == 1


def test_a_folder_renamed_into_place_keeps_its_files_remembered(tmp_path, monkeypatch) -> None:
    """atomic_directory builds a folder under a temporary name and renames it: the digests its writer remembered are
    known under the final names (and learned by the caller of a worker), so the checks and the release read none of
    the files again; a file written after the rename, or never remembered, is read."""
    import hashlib

    from simready.common.atomic import atomic_directory
    from simready.common.hashing import file_sha256, known_count, learned_digests, remember_sha256

    opened = _counting_reads(monkeypatch)
    final = tmp_path / "observations"
    mark = known_count()
    for round_ in (1, 2):  # a new folder, then one that replaces it (the old one renamed aside)
        with atomic_directory(final) as tmp:
            (tmp / "cam").mkdir()
            for name in ("a.bin", "cam/b.bin"):
                (tmp / name).write_bytes(f"{name} {round_}".encode())
                remember_sha256(tmp / name, f"sha256:{name}-{round_}")
            (tmp / "unhashed.bin").write_bytes(b"never remembered")
        assert file_sha256(final / "a.bin") == f"sha256:a.bin-{round_}"
        assert file_sha256(final / "cam" / "b.bin") == f"sha256:cam/b.bin-{round_}"
        assert len(opened) == round_ - 1  # only the earlier round's unremembered file
        assert file_sha256(final / "unhashed.bin") == "sha256:" + hashlib.sha256(b"never remembered").hexdigest()
        assert len(opened) == round_
    learned = {v[0]: d for v, d in learned_digests(mark)}
    assert learned[str(final / "cam" / "b.bin")] == "sha256:cam/b.bin-2"
