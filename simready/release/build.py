"""Build, name, verify and check out dataset releases through the artifact store.

Storage (keys from :class:`~simready.layout.ArtifactLayout`):

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
from typing import Any

from simready.atomic import json_bytes
from simready.errors import SimreadyError
from simready.hashing import content_hash, file_sha256
from simready.identifiers import is_identifier
from simready.layout import ArtifactLayout, SampleDir
from simready.release.checklist import CheckResult, SuiteSample, checklist
from simready.release.datasheet import datasheet, datasheet_html, datasheet_markdown
from simready.scenario.splits import SPLITS
from simready.store import Store

FORMAT = "simready-release-1"
DEFAULT_TAG = "latest"
#: Threads that copy, fetch and hash objects.
THREADS = 8


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
        return sum(f["bytes"] for s in self.samples() for f in s["files"].values()) \
            + sum(f["bytes"] for f in self.record["suite"].values())


def _layout() -> ArtifactLayout:
    return ArtifactLayout(Path())


def _read_json(store: Store, key: PurePath, what: str) -> Any:
    try:
        return store.read_json(key)
    except FileNotFoundError:
        raise ReleaseError(store.url(key), "", f"missing: {what}") from None


def _released_variants(validity: Mapping[str, Any], weight: float) -> tuple[bool, dict[str, dict[str, Any]]]:
    """Whether the base is released, and the branches released with it (accepted by the gate), by label."""
    base = validity["base"]
    base_ok = bool(base["accepted"]) and weight > 0
    branches = {label: r for label, r in sorted(validity.get("branches", {}).items()) if r["accepted"]} if base_ok else {}
    return base_ok, branches


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
                  catalog: Any, backend: str, tag: str = DEFAULT_TAG) -> tuple[Release, list[CheckResult]]:
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
    collisions: dict[str, Counter] = {}
    for row in sorted(split_rows, key=lambda r: (r["template"], r["batch"], r["sample"])):
        key = (str(row["template"]), str(row["batch"]))
        if key not in batches:
            batches[key] = store.local_dir(layout.batch(*key).root)
        sample = SampleDir(batches[key] / str(row["sample"]))
        if not sample.validity.is_file():
            ungated.append(str(row["sample"]))
            continue
        validity = json.loads(sample.validity.read_text())
        weight = float(weights.get(row["sample"], 0.0))
        base_ok, branches = _released_variants(validity, weight)
        skip = {f"{sample.branches_dir.name}/{label}" for label in validity.get("branches", {}) if label not in branches}
        files = _files(sample.root, skip if base_ok else set())
        hashes = {rel: file_sha256(str(p)) for rel, p in files.items()}
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
        entries.append({
            "sample": row["sample"], "template": row["template"], "batch": row["batch"], "split": row["split"],
            "intent": manifest.get("intent"), "cell": (manifest.get("coverage_cell") or {}).get("id"),
            "weight": weight, "validity": round(float(validity["base"]["validity"]), 4),
            "branches": {label: {"weight": float(r["weight"]), "validity": round(float(r["validity"]), 4)}
                         for label, r in branches.items()},
            "files": {rel: {"sha256": hashes[rel], "bytes": files[rel].stat().st_size} for rel in sorted(files)},
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
            staged.record.write_bytes(json_bytes(record))
            staged.datasheet.write_bytes(json_bytes(sheet))
            staged.checklist.write_bytes(json_bytes(items))
            staged.datasheet_page.write_text(datasheet_markdown(release.release_id, sheet, items), encoding="utf-8")
            staged.datasheet_html.write_text(datasheet_html(release.release_id, sheet, items), encoding="utf-8")
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


def _each(fn: Callable[[Any], Any], items: list) -> list:
    """``fn`` over ``items`` on a few threads, results in order: a remote store's requests wait on latency, not
    bandwidth (a local folder's links and hashes lose nothing)."""
    with ThreadPoolExecutor(THREADS) as pool:
        return list(pool.map(fn, items))


def _stored_objects(store: Store) -> set[str]:
    """The keys of every stored release object, listed once (one listing, not a request per object in S3)."""
    return set(store.list(_layout().release_objects_dir))


def tag_release(store: Store, release_id: str, tag: str) -> None:
    """Make ``tag`` name the release (a tag moves; a release never changes)."""
    if not is_identifier(tag) or tag.startswith("sha256"):
        raise ReleaseError("tag", "", f"{tag!r} is not a tag (ASCII letters, digits, '_', '-', '.'; not a hash)")
    store.write_bytes(_layout().release_tag(tag), f"{release_id}\n".encode())


def list_releases(store: Store) -> dict[str, list[str]]:
    """Every stored release id with the tags that name it, sorted."""
    layout = _layout()
    out: dict[str, list[str]] = {}
    for key in store.list(layout.releases_dir):
        parts = PurePath(key).parts
        if len(parts) == 3 and parts[2] == layout.release("x").record.name:
            out.setdefault(f"sha256:{parts[1]}", [])
    for key in store.list(layout.release_tags_dir):
        release_id = store.read_bytes(key).decode().strip()
        out.setdefault(release_id, []).append(PurePath(key).name)
    return {k: sorted(v) for k, v in sorted(out.items())}


def resolve(store: Store, name: str) -> str:
    """The release id a tag, an id (``sha256:<hex>``) or its hex names; one line naming what is there otherwise."""
    layout = _layout()
    hex_digits = name.removeprefix("sha256:")
    if len(hex_digits) == 64 and all(c in "0123456789abcdef" for c in hex_digits):
        if store.exists(layout.release(hex_digits).record):
            return f"sha256:{hex_digits}"
    elif is_identifier(name) and store.exists(layout.release_tag(name)):
        return store.read_bytes(layout.release_tag(name)).decode().strip()
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
    problems = []
    for name, f in entries:
        sha = f["sha256"]
        if not seen[sha]:
            problems.append(f"{name}: object {sha} missing or its bytes differ")
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
