"""Build, name, verify and check out dataset releases through the artifact store.

Storage (keys from :class:`~simready.artifacts.layout.ArtifactLayout`):

- ``releases/objects/<aa>/<hex>``: every released file once, by its sha256 — made with
  :meth:`~simready.store.Store.copy`, a hard link in a local folder (the default suite's 3 GB are not stored
  twice) and a server-side copy in S3. Stages replace files rather than rewriting them, so an object keeps its
  bytes when a later run writes the sample again; :func:`verify_release` and every read prove it.
- ``releases/<hex>/``: ``release.json`` (per split, every sample with its weight, branches and files: name in
  the sample folder, sha256, bytes; and the suite's own records), ``datasheet.json``, ``datasheet.md`` and
  ``checklist.json``, published as one folder.
- ``releases/tags/<tag>``: one line, the release id a tag names. ``latest`` is moved by every build.

The release id is ``sha256:<hex>`` of the canonical JSON of ``{release, datasheet, checklist}``: no timestamps and
sorted everywhere, so the same stored inputs give the same id and building again changes nothing.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, NoReturn

from simready.common.atomic import json_bytes
from simready.common.errors import SimreadyError
from simready.common.hashing import content_hash, file_sha256
from simready.common.identifiers import is_identifier
from simready.common.parallel import map_samples
from simready.artifacts.layout import ArtifactLayout, SampleDir
from simready.release.checklist import CheckResult, SuiteSample, checklist
from simready.release.datasheet import datasheet, datasheet_html, datasheet_markdown
from simready.scenario.splits import SPLITS
from simready.store import Store

if TYPE_CHECKING:
    from simready.catalog.catalog import Catalog

FORMAT = "simready-release-1"
DEFAULT_TAG = "latest"
#: Threads that copy, fetch and hash objects.
THREADS = 8
#: Runs of items per thread in :func:`_each` (a slow item holds up only its run's rest).
RUNS_PER_THREAD = 4


class ReleaseError(SimreadyError):
    kind = "release"


@dataclass(frozen=True)
class Release:
    """A stored release: its id and its three records."""

    release_id: str
    record: dict[str, Any]
    datasheet: dict[str, Any]
    checklist: list[dict[str, Any]]

    @property
    def hex(self) -> str:
        return self.release_id.split(":", 1)[1]

    def samples(self) -> Iterator[dict[str, Any]]:
        """Every released sample's entry, by split then sample id."""
        for split in SPLITS:
            yield from self.record["splits"].get(split, [])

    @property
    def files(self) -> int:
        return sum(len(s["files"]) for s in self.samples()) + len(self.record["suite"])

    @property
    def bytes(self) -> int:
        total: int = sum(f["bytes"] for s in self.samples() for f in s["files"].values()) \
            + sum(f["bytes"] for f in self.record["suite"].values())
        return total


def _layout() -> ArtifactLayout:
    return ArtifactLayout(Path())


def _read_json(store: Store, key: PurePath, what: str) -> Any:
    try:
        return store.read_json(key)
    except FileNotFoundError:
        raise ReleaseError(store.url(key), "", f"missing: {what}") from None
    except (ValueError, IsADirectoryError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        reason = f"line {exc.lineno} column {exc.colno}: {exc.msg}" if isinstance(exc, json.JSONDecodeError) \
            else type(exc).__name__
        raise ReleaseError(store.url(key), "", f"{what} is not JSON ({reason})") from None


#: The most bytes a tag file may hold (``sha256:`` and 64 hex digits and a newline are 72).
TAG_BYTES = 128
_HEX = frozenset("0123456789abcdef")


def _is_hex64(text: str) -> bool:
    return len(text) == 64 and set(text) <= _HEX


def read_tag(store: Store, key: PurePath) -> str:
    """The release id a tag file holds. The tag must be a plain file (a symbolic link is refused and its target
    never read) of at most :data:`TAG_BYTES` holding ``sha256:<64 hex digits>``; one line otherwise, which never
    quotes the file's bytes."""
    where = store.url(key)
    if store.is_link(key):
        raise ReleaseError(where, "", "a tag is a plain file, and this is a symbolic link (its target is not read); "
                           "remove it and tag again (simready release tag)")
    try:
        with store.open(key) as f:
            data = f.read(TAG_BYTES + 1)
    except FileNotFoundError:
        raise ReleaseError(where, "", "missing: the tag file") from None
    except IsADirectoryError:
        raise ReleaseError(where, "", "a tag is a plain file, and this is a folder") from None
    text = data.decode("ascii", errors="replace").strip()
    if len(data) > TAG_BYTES or not text.startswith("sha256:") or not _is_hex64(text.removeprefix("sha256:")):
        raise ReleaseError(where, "", f"not a release id (one line sha256:<64 hex digits>, {len(data)}"
                           f"{'+' if len(data) > TAG_BYTES else ''} bytes found); remove it or tag again "
                           "(simready release tag)")
    return text


def _fail(url: str, field: str, reason: str) -> NoReturn:
    raise ReleaseError(url, field, reason)


def _check_file_entry(url: str, field: str, f: object) -> None:
    if not isinstance(f, dict) or not isinstance(f.get("sha256"), str) \
            or not _is_hex64(f["sha256"].removeprefix("sha256:")) \
            or not isinstance(f.get("bytes"), int) or isinstance(f["bytes"], bool) or f["bytes"] < 0:
        _fail(url, field, "not a file entry ({sha256: sha256:<64 hex digits>, bytes: a whole number >= 0})")


def _check_records(url: str, record: object, sheet: object, items: object) -> None:
    """The shape every reader of a release relies on; one line naming the first field that differs. (The id
    already proves the records are the ones published; this proves they are a release's.)"""
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        _fail(url, "release.json: format", f"not {FORMAT!r}")
    if not isinstance(record.get("suite"), dict):
        _fail(url, "release.json: suite", "not a mapping of key to file entry")
    for key, f in record["suite"].items():
        _check_file_entry(url, f"release.json: suite[{key!r}]", f)
    if not isinstance(record.get("splits"), dict):
        _fail(url, "release.json: splits", "not a mapping of split to samples")
    for split in SPLITS:
        entries = record["splits"].get(split, [])
        if not isinstance(entries, list):
            _fail(url, f"release.json: splits.{split}", "not a list of samples")
        for i, e in enumerate(entries):
            field = f"release.json: splits.{split}[{i}]"
            if not isinstance(e, dict) or any(not isinstance(e.get(k), str) or not is_identifier(e[k])
                                               for k in ("sample", "template", "batch")) or e.get("split") != split:
                _fail(url, field, f"not a sample entry (sample, template, batch identifiers; split {split!r})")
            if not isinstance(e.get("files"), dict) or not isinstance(e.get("branches"), dict):
                _fail(url, field, "not a sample entry (files and branches mappings)")
            for rel, f in e["files"].items():
                if not isinstance(rel, str) or not rel or rel.startswith("/") or \
                        any(p in ("", ".", "..") for p in rel.split("/")):
                    _fail(url, f"{field}.files", f"{rel!r} is not a relative path inside the sample folder")
                _check_file_entry(url, f"{field}.files[{rel!r}]", f)
    counts = sheet.get("counts") if isinstance(sheet, dict) else None
    for split in SPLITS:
        c = counts.get(split) if isinstance(counts, dict) else None
        if not isinstance(c, dict) or any(not isinstance(c.get(k), int | float) or isinstance(c.get(k), bool)
                                          for k in ("samples", "branches", "weight")):
            _fail(url, f"datasheet.json: counts.{split}", "not the counts of a split (samples, branches, weight)")
    if not isinstance(items, list) or any(
            not isinstance(item, dict) or not isinstance(item.get("item"), str) or not isinstance(item.get("passed"), bool)
            or not isinstance(item.get("checks"), list)
            or any(not isinstance(c, dict) or "check" not in c or "result" not in c for c in item["checks"])
            for item in items):
        _fail(url, "checklist.json", "not a QA checklist (items with item, passed and checks of check and result)")


def _released_variants(validity: Mapping[str, Any], weight: float) -> tuple[bool, dict[str, dict[str, Any]]]:
    """Whether the base is released, and the branches released with it (accepted by the gate), by label."""
    base = validity["base"]
    base_ok = bool(base["accepted"]) and weight > 0
    branches = {label: r for label, r in sorted(validity.get("branches", {}).items()) if r["accepted"]} if base_ok else {}
    return base_ok, branches


def _listing(folder: Path, skip: set[str]) -> list[tuple[str, str, int]]:
    """A sample folder's files (:func:`_files`) with their sha256 and size in bytes, in :func:`_files`' order."""
    files = _files(folder, skip)
    # On a few threads: hashlib lets go of the GIL while it hashes, so the cores share a sample's files.
    hashes = _each(lambda p: file_sha256(str(p)), list(files.values()))
    return [(rel, sha, p.stat().st_size) for (rel, p), sha in zip(files.items(), hashes)]


def _files(folder: Path, skip: set[str]) -> dict[str, Path]:
    """A sample folder's files by name in it (hidden ones and the rejected branches' folders left out)."""
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_file() and not any(part.startswith(".") for part in rel.split("/")) \
                and not any(rel.startswith(s + "/") for s in skip):
            out[rel] = p
    return out


def build_release(store: Store, *, suite_id: str, versions: Mapping[str, str], templates: Mapping[str, Any],
                  catalog: Catalog, backend: str, tag: str = DEFAULT_TAG) -> tuple[Release, list[CheckResult]]:
    """Snapshot the accepted samples of the stored suite as a release, tag it, and return it with the checks.

    ``versions``: the generator's, engine's and stages' code versions for the datasheet (the Dagster layer's
    ``code_version`` constants); ``templates`` (by id), ``catalog`` and ``backend`` are what the replay and
    restore checks simulate with. Refused (:class:`ReleaseError`, one line, nothing written) when a blocking
    check failed or no sample is accepted.
    """
    # Imported here: the checks simulate (PyBullet), which reading or verifying a release never needs.
    from simready.release.evidence import evaluate_suite

    layout = _layout()
    if not is_identifier(tag):
        raise ReleaseError("--tag", "", f"{tag!r} is not a tag (ASCII letters, digits, '_', '-', '.')")
    split_rows = _read_json(store, layout.split_assignments, "the split table (materialize split_assignments)")["rows"]
    suite_weights = _read_json(store, layout.suite_weights, "the suite weights (materialize coverage_report)")
    certification = _read_json(store, layout.certification, "the catalog's certification (materialize certified_assets)")
    template_ids = sorted({str(r["template"]) for r in split_rows})
    validations = {t: _read_json(store, layout.template_validation(t), f"template {t}'s validation") for t in template_ids}
    weights = suite_weights["policy"].get("weights", {})

    batches: dict[tuple[str, str], Path] = {}
    samples: list[SuiteSample] = []
    ungated: list[str] = []
    released: dict[str, dict[str, Any]] = {}
    entries: list[dict[str, Any]] = []
    collisions: dict[str, Counter[str]] = {}
    gated: list[tuple[dict[str, Any], SampleDir, dict[str, Any], float, bool, dict[str, dict[str, Any]]]] = []
    for row in sorted(split_rows, key=lambda r: (r["template"], r["batch"], r["sample"])):
        batch_key = (str(row["template"]), str(row["batch"]))
        if batch_key not in batches:
            batches[batch_key] = store.local_dir(layout.batch(*batch_key).root)
        sample = SampleDir(batches[batch_key] / str(row["sample"]))
        if not sample.validity.is_file():
            ungated.append(str(row["sample"]))
            continue
        validity = json.loads(sample.validity.read_text())
        weight = float(weights.get(row["sample"], 0.0))
        gated.append((row, sample, validity, weight, *_released_variants(validity, weight)))
    # Each sample's files listed, hashed and sized on the workers, one sample an item (a few thousand files' names
    # and versions each, which this process alone walked while the other core waited): the same names in the same
    # order, the same sha256 (those the stages wrote are remembered, and the workers inherit them).
    listings = map_samples(lambda job: _listing(*job), [
        (sample.root, {f"{sample.branches_dir.name}/{label}" for label in validity.get("branches", {})
                       if label not in branches} if base_ok else set())
        for _, sample, validity, _, base_ok, branches in gated])
    for (row, sample, validity, weight, base_ok, branches), listing in zip(gated, listings):
        hashes = {rel: sha for rel, sha, _ in listing}
        samples.append(SuiteSample(row, sample.root, hashes))
        if not base_ok:
            continue
        released[str(row["sample"])] = validity["base"]
        released.update({f"{row['sample']}#{label}": r for label, r in branches.items()})
        for b in (json.loads(sample.outcomes.read_text())["branches"] if sample.outcomes.is_file() else []):
            if b["label"] in branches and b.get("collision"):
                party = str(b.get("collision_with") or "another body").rsplit("actor:", 1)[-1]
                collisions.setdefault(b["label"], Counter())[party] += 1
        manifest = json.loads(sample.manifest.read_text())
        sizes = {rel: size for rel, _, size in listing}
        entries.append({
            "sample": row["sample"], "template": row["template"], "batch": row["batch"], "split": row["split"],
            "intent": manifest.get("intent"), "cell": (manifest.get("coverage_cell") or {}).get("id"),
            "weight": weight, "validity": round(float(validity["base"]["validity"]), 4),
            "branches": {label: {"weight": float(r["weight"]), "validity": round(float(r["validity"]), 4)}
                         for label, r in branches.items()},
            "files": {rel: {"sha256": hashes[rel], "bytes": sizes[rel]} for rel in sorted(hashes)},
        })
    if not entries:
        raise ReleaseError(store.url(layout.samples_dir), "", "no accepted sample to release")

    results = evaluate_suite(samples, released, certification=certification, validations=validations,
                             templates=templates, catalog=catalog, backend=backend)
    results.append(CheckResult("suite_gated", "every sample of the split table has the gate's report "
                               "(validity_reports materialized)", True, len(split_rows), tuple(sorted(ungated))))
    blocking = [r for r in results if r.blocking and not r.passed]
    if blocking:
        r = blocking[0]
        raise ReleaseError(store.url(layout.releases_dir), "",
                           f"no release: blocking check {r.check} {r.result} ({(r.failures or ('nothing evaluated',))[0]})"
                           + (f"; also failed: {', '.join(b.check for b in blocking[1:])}" if len(blocking) > 1 else ""))
    suite_keys = [layout.split_assignments, layout.suite_weights, layout.coverage, layout.certification,
                  *(k for t in template_ids for k in (layout.template_record(t), layout.template_validation(t),
                                                       layout.rig(t)))]
    suite_files = {}
    for key in suite_keys:
        if store.exists(key):
            path = store.local_path(key)
            suite_files[key.as_posix()] = {"sha256": file_sha256(str(path)), "bytes": path.stat().st_size}
    labelled = [e["sample"] for e in entries if e["split"] not in SPLITS or not e["cell"] or not e["intent"]]
    results.append(CheckResult("release_labelled", "every released sample has its split, intent and coverage cell",
                               True, len(entries), tuple(labelled)))
    results.append(CheckResult("release_objects", "every released file's object hashes to its recorded sha256 "
                               "(simready release verify)", True, sum(len(e["files"]) for e in entries) + len(suite_files)))

    record = {"format": FORMAT, "suite": suite_files, "suite_id": suite_id,
              "splits": {s: [e for e in entries if e["split"] == s] for s in SPLITS}}
    coverage = store.read_json(layout.coverage) if store.exists(layout.coverage) else None
    sheet = datasheet(record, suite_weights, released, versions, coverage=coverage, collisions=collisions)
    items = checklist(results)
    release = Release(content_hash({"release": record, "datasheet": sheet, "checklist": items}), record, sheet, items)

    _store_objects(store, release, batches)
    folder = layout.release(release.hex)
    if not store.exists(folder.record):
        with store.scratch() as scratch:
            staged = ArtifactLayout(scratch).release(release.hex)
            staged.root.mkdir(parents=True)
            for name, data in record_files(release).items():
                (staged.root / name).write_bytes(data)
            store.publish(folder.root, staged.root)
    tag_release(store, release.release_id, tag)
    return release, results


def _store_objects(store: Store, release: Release, batches: Mapping[tuple[str, str], Path]) -> None:
    """Every released file as a content-addressed object (those already stored are left as they are)."""
    layout = _layout()
    sources: dict[str, PurePath] = {}
    for s in release.samples():
        sample = layout.batch(s["template"], s["batch"]).sample(s["sample"]).root
        for rel, f in s["files"].items():
            sources.setdefault(f["sha256"], sample / rel)
    for key, f in release.record["suite"].items():
        sources.setdefault(f["sha256"], PurePath(key))
    stored = _stored_objects(store)
    missing = [(source, layout.release_object(sha)) for sha, source in sorted(sources.items())
               if layout.release_object(sha).as_posix() not in stored]
    _each(lambda pair: store.copy(*pair), missing)


def _each(fn: Callable[[Any], Any], items: list[Any]) -> list[Any]:
    """``fn`` over ``items`` on a few threads, results in order: a remote store's requests wait on latency, not
    bandwidth (a local folder's links and hashes lose nothing). The items go to the threads in runs of
    consecutive items (:data:`RUNS_PER_THREAD` per thread): a task's own cost, ~50 µs of futures and locks, was
    most of an item's once a run's files were hashed as they were written (:mod:`simready.common.hashing`)."""
    if not items:
        return []
    size = -(-len(items) // (THREADS * RUNS_PER_THREAD))
    runs = [items[i:i + size] for i in range(0, len(items), size)]
    with ThreadPoolExecutor(THREADS) as pool:
        return [out for run in pool.map(lambda run: [fn(item) for item in run], runs) for out in run]


def _stored_objects(store: Store) -> set[str]:
    """The keys of every stored release object, listed once (one listing, not a request per object in S3)."""
    return set(store.list(_layout().release_objects_dir))


def tag_release(store: Store, release_id: str, tag: str) -> None:
    """Make ``tag`` name the release (a tag moves; a release never changes)."""
    if not is_identifier(tag) or tag.startswith("sha256"):
        raise ReleaseError("tag", "", f"{tag!r} is not a tag (ASCII letters, digits, '_', '-', '.'; not a hash)")
    key = _layout().release_tag(tag)
    if store.is_link(key):  # the tag, or a folder above it: writing would follow the link out of the store
        raise ReleaseError(store.url(key), "", "a symbolic link lies on the tag's path; tags are plain files in the "
                           "store (remove the link)")
    store.write_bytes(key, f"{release_id}\n".encode())


def list_releases(store: Store) -> dict[str, list[str]]:
    """Every stored release id with the tags that name it, sorted."""
    layout = _layout()
    out: dict[str, list[str]] = {}
    for key in store.list(layout.releases_dir):
        parts = PurePath(key).parts
        if len(parts) == 3 and parts[2] == layout.release("x").record.name and _is_hex64(parts[1]):
            out.setdefault(f"sha256:{parts[1]}", [])
    for key in store.links(layout.release_tags_dir):
        read_tag(store, PurePath(key))  # refused: a tag is a plain file
    for key in store.list(layout.release_tags_dir):
        release_id = read_tag(store, PurePath(key))
        out.setdefault(release_id, []).append(PurePath(key).name)
    return {k: sorted(v) for k, v in sorted(out.items())}


def resolve(store: Store, name: str) -> str:
    """The release id a tag, an id (``sha256:<hex>``) or its hex names; one line naming what is there otherwise."""
    layout = _layout()
    hex_digits = name.removeprefix("sha256:")
    if _is_hex64(hex_digits):
        if store.exists(layout.release(hex_digits).record):
            return f"sha256:{hex_digits}"
    elif is_identifier(name) and (store.exists(layout.release_tag(name)) or store.is_link(layout.release_tag(name))):
        return read_tag(store, layout.release_tag(name))
    known = list_releases(store)
    tags = sorted(t for ts in known.values() for t in ts)
    raise ReleaseError(store.url(layout.releases_dir), "release",
                       f"no release {name!r} (tags: {', '.join(tags) or 'none'}; {len(known)} release(s); "
                       "materialize dataset_release or see `simready release list`)")


def load_release(store: Store, name: str) -> Release:
    """The release a tag or id names, its records read and its id checked against them."""
    release_id = resolve(store, name)
    folder = _layout().release(release_id.split(":", 1)[1])
    record = _read_json(store, folder.record, "the release record")
    sheet = _read_json(store, folder.datasheet, "the release's datasheet")
    items = _read_json(store, folder.checklist, "the release's checklist")
    actual = content_hash({"release": record, "datasheet": sheet, "checklist": items})
    if actual != release_id:
        raise ReleaseError(store.url(folder.root), "", f"its records hash to {actual}, not to the release id {release_id}")
    _check_records(store.url(folder.root), record, sheet, items)
    return Release(release_id, record, sheet, items)


def _entries(release: Release) -> Iterator[tuple[str, dict[str, Any]]]:
    for s in release.samples():
        for rel, f in s["files"].items():
            yield f"{s['split']}/{s['sample']}/{rel}", f
    for key, f in release.record["suite"].items():
        yield f"suite/{key}", f


def verify_release(store: Store, release: Release) -> list[str]:
    """Every object of the release, hashed: the files that are missing or whose bytes differ (empty: it verifies)."""
    stored = _stored_objects(store)
    entries = list(_entries(release))
    shas = sorted({f["sha256"] for _, f in entries})

    def intact(sha: str) -> bool:
        key = _layout().release_object(sha)
        return key.as_posix() in stored and file_sha256(str(store.local_path(key))) == sha

    seen = dict(zip(shas, _each(intact, shas)))
    problems = _record_problems(store, release)
    for name, f in entries:
        sha = f["sha256"]
        if not seen[sha]:
            problems.append(f"{name}: object {sha} missing or its bytes differ")
    return problems


def record_files(release: Release) -> dict[str, bytes]:
    """The bytes of the release folder's five files as published (name -> bytes): the three records in their
    canonical JSON and ``datasheet.md`` and ``datasheet.html`` rendered from them. The id names the records' content; these bytes follow
    from it, so a published file that differs from them (an edited datasheet page, a record rewritten) is found."""
    folder = ArtifactLayout(Path()).release(release.hex)
    sheet, items = json.loads(json_bytes(release.datasheet)), json.loads(json_bytes(release.checklist))
    return {folder.record.name: json_bytes(release.record), folder.datasheet.name: json_bytes(release.datasheet),
            folder.checklist.name: json_bytes(release.checklist),
            folder.datasheet_page.name: datasheet_markdown(release.release_id, sheet, items).encode("utf-8"),
            folder.datasheet_html.name: datasheet_html(release.release_id, sheet, items).encode("utf-8")}


def _record_problems(store: Store, release: Release) -> list[str]:
    """The release folder's own files (records and datasheet page) that are missing or differ from their bytes as
    published, or that are symbolic links."""
    folder = _layout().release(release.hex)
    problems = []
    try:
        expected_files = record_files(release)
    except (KeyError, TypeError, ValueError, AttributeError):  # records of the right shape for readers, not for a page
        return [f"{folder.datasheet_page.name}: the release's datasheet cannot be rendered from its records"]
    for name, expected in expected_files.items():
        key = folder.root / name
        try:
            same = not store.is_link(key) and store.read_bytes(key) == expected
        except (FileNotFoundError, IsADirectoryError):
            same = False
        if not same:
            problems.append(f"{name}: missing or its bytes differ from the release's")
    return problems


def checkout(store: Store, release: Release, out_dir: Path, samples: set[str] | None = None) -> list[tuple[str, SampleDir]]:
    """The released samples (all, or those named) as sample folders ``out_dir/<split>/<sample>/``, each object
    verified as it is read: linked where it lies on the same filesystem, copied otherwise.
    Returns ``(split, sample folder)`` in release order; a file whose bytes differ is a :class:`ReleaseError`."""
    out = []
    stored = _stored_objects(store)
    wanted = [s for s in release.samples() if samples is None or s["sample"] in samples]
    names = {f["sha256"]: f"{s['sample']}/{rel}" for s in reversed(wanted) for rel, f in s["files"].items()}

    def fetch(sha: str) -> Path:
        key = _layout().release_object(sha)
        if key.as_posix() not in stored:
            raise ReleaseError(store.url(key), "", f"missing: {names[sha]} of release {release.release_id}")
        path = store.local_path(key)
        if file_sha256(str(path)) != sha:
            raise ReleaseError(store.url(key), "sha256", f"{names[sha]}: bytes differ from release {release.release_id}")
        return path

    verified = dict(zip(sorted(names), _each(fetch, sorted(names))))
    for s in wanted:
        folder = SampleDir(Path(out_dir) / s["split"] / s["sample"])
        for rel, f in s["files"].items():
            sha = f["sha256"]
            target = folder.root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(verified[sha], target)
            except OSError:
                shutil.copyfile(verified[sha], target)
        out.append((s["split"], folder))
    if samples is not None and len(out) != len(samples):
        missing = sorted(samples - {f.sample_id for _, f in out})
        raise ReleaseError(release.release_id, "sample", f"not in the release: {', '.join(missing)}")
    return out
