"""Remembered certification verdicts (simready.catalog.certified): a verdict holds only while every byte it was
reached on does; a changed entry is certified again, and the memo lives beside the DVC-pinned folder, not in it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from simready.common import paths
from simready.catalog.catalog import ensure_catalog, load_catalog
from simready.catalog import certified
from simready.catalog.certified import certified_ids

VAN = "asset:delivery_van/white"


def test_a_changed_entry_is_certified_again(tmp_path, monkeypatch):
    import simready.catalog.certify as certify

    monkeypatch.setattr(certified, "_VERDICTS", {})  # this process remembers nothing yet
    ensure_catalog(paths.CATALOG_CONTRACTS_DIR, paths.CATALOG_GENERATED_DIR)
    copy = tmp_path / "generated"
    shutil.copytree(paths.CATALOG_GENERATED_DIR, copy)
    catalog = load_catalog(copy)
    ids = [VAN, "asset:sedan/grey"]
    assert certified_ids(catalog, ids) == set(ids)
    memo = tmp_path / ".generated.certified.json"
    assert memo.is_file() and not list(copy.glob(".*"))
    calls = []
    real = certify.certify_entry
    monkeypatch.setattr(certify, "certify_entry", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    assert certified_ids(catalog, ids) == set(ids) and calls == []  # remembered: nothing certified again
    monkeypatch.setattr(certified, "_VERDICTS", {})  # another process: the file beside the folder remembers
    assert certified_ids(catalog, ids) == set(ids) and calls == []
    entry = copy / "delivery_van" / "white" / "entry.json"
    data = json.loads(entry.read_text())
    data["license"] = ""
    entry.write_text(json.dumps(data))
    assert certified_ids(load_catalog(copy), ids) == {"asset:sedan/grey"}  # the changed entry fails now
    assert [p.name for p in calls] == ["white"]


def test_a_copy_elsewhere_is_remembered_by_its_bytes_and_an_edit_in_it_certified_again(tmp_path, monkeypatch):
    """The process's own verdicts serve a copy of the catalog in another folder (no file beside it: keep=False
    writes none) until one of its bytes changes; every entry is the default set."""
    import simready.catalog.certify as certify

    monkeypatch.setattr(certified, "_VERDICTS", {})
    ensure_catalog(paths.CATALOG_CONTRACTS_DIR, paths.CATALOG_GENERATED_DIR)
    first, second = tmp_path / "a" / "generated", tmp_path / "b" / "generated"
    shutil.copytree(paths.CATALOG_GENERATED_DIR, first)
    shutil.copytree(paths.CATALOG_GENERATED_DIR, second)
    every = set(load_catalog(first).entries)
    assert certified_ids(load_catalog(first), keep=False) == every
    assert not (tmp_path / "a" / ".generated.certified.json").exists()
    calls = []
    real = certify.certify_entry
    monkeypatch.setattr(certify, "certify_entry", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    assert certified_ids(load_catalog(second), keep=False) == every and calls == []
    entry = second / "sedan" / "grey" / "entry.json"
    data = json.loads(entry.read_text())
    data["license"] = ""
    entry.write_text(json.dumps(data))
    assert certified_ids(load_catalog(second), keep=False) == every - {"asset:sedan/grey"}
    assert [p.name for p in calls] == ["grey"]


def test_the_catalog_certification_of_a_copy_repeats_every_reason_and_follows_an_edit(tmp_path, monkeypatch):
    """certify_catalog remembers whole certifications by content: a copy certified again gives the same reasons,
    entry by entry, under its own folder, without certifying; an entry changed in the copy is certified again."""
    import simready.catalog.certify as certify

    monkeypatch.setattr(certify, "_CERTIFIED", {})
    ensure_catalog(paths.CATALOG_CONTRACTS_DIR, paths.CATALOG_GENERATED_DIR)
    first, second = tmp_path / "a" / "generated", tmp_path / "b" / "generated"
    shutil.copytree(paths.CATALOG_GENERATED_DIR, first)
    entry = first / "sedan" / "grey" / "entry.json"
    data = json.loads(entry.read_text())
    data["license"] = ""
    entry.write_text(json.dumps(data))
    shutil.copytree(first, second)
    report = certify.certify_catalog(first)
    calls = []
    real = certify.certify_entry
    monkeypatch.setattr(certify, "certify_entry", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    again = certify.certify_catalog(second)
    assert calls == []
    assert [(e.id, e.passed, e.reasons) for e in again.entries] == [(e.id, e.passed, e.reasons) for e in report.entries]
    assert {e.id for e in again.entries if not e.passed} == {"asset:sedan/grey"}
    assert all(Path(e.entry_dir).is_relative_to(second) for e in again.entries)
    data["license"] = "CC0-1.0"
    (second / "sedan" / "grey" / "entry.json").write_text(json.dumps(data))
    assert certify.certify_catalog(second).all_passed
    assert [p.name for p in calls] == ["grey"]
