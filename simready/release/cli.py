"""``simready release list | show | verify | tag``: the dataset releases in the artifact store of the active
deployment (:func:`simready.store.deployment.artifact_store`: ``SIMREADY_ARTIFACTS`` locally, the S3 bucket in
production). Releases are built by the Dagster asset ``dataset_release`` (``make run``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from simready.artifacts.layout import ArtifactLayout
from simready.release import list_releases, load_release, resolve, tag_release, verify_release
from simready.release.build import record_files
from simready.scenario.splits import SPLITS
from simready.store.deployment import artifact_store

if TYPE_CHECKING:
    from simready.store import Store


def _store() -> Store:
    return artifact_store(must_exist=True)


def _list(args: argparse.Namespace) -> int:
    store = _store()
    found = list_releases(store)
    if not found:
        print(f"no releases in {store.url('')} (materialize dataset_release: make run)")
    for release_id, tags in found.items():
        counts = load_release(store, release_id).datasheet["counts"]
        split = ", ".join(f"{s} {counts[s]['samples']}" for s in SPLITS)
        print(f"{release_id}  {','.join(tags) or '-':<12} {split}")
    return 0


def _show(args: argparse.Namespace) -> int:
    store = _store()
    release = load_release(store, args.release)
    if args.json:
        print(json.dumps({"release": release.release_id, "datasheet": release.datasheet,
                          "checklist": release.checklist}, indent=1, sort_keys=True))
        return 0
    print(f"release {release.release_id}: {release.files} files, {release.bytes / 1e9:.2f} GB")
    for split in SPLITS:
        c = release.datasheet["counts"][split]
        print(f"  {split:<5} {c['samples']:3d} samples, {c['branches']:3d} branches, weight {c['weight']:.2f}")
    for item in release.checklist:
        # A check the release does not require (the gate's scored checks) says so beside its count: its failures
        # lower scores, they do not fail the item.
        checks = "; ".join(f"{c['check']} {c['result']}{'' if c['blocking'] else ' (scored, not required)'}"
                           for c in item["checks"])
        print(f"  {'pass' if item['passed'] else 'FAIL'} {item['item']:<24} {checks}")
    print(f"  datasheet {store.url(ArtifactLayout(Path()).release(release.hex).datasheet_page)}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    store = _store()
    release = load_release(store, args.release)
    problems = verify_release(store, release)
    for p in problems[:20]:
        print(p)
    total = release.files + len(record_files(release))
    print(f"release {release.release_id}: " + (f"{len(problems)} of {total} files FAIL" if problems
                                               else f"{total} files verify (the records and datasheet pages too)"))
    return 1 if problems else 0


def _tag(args: argparse.Namespace) -> int:
    store = _store()
    release_id = resolve(store, args.release)
    tag_release(store, release_id, args.tag)
    print(f"{args.tag} -> {release_id}")
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    release = subparsers.add_parser(
        "release", help="dataset releases: list, show (datasheet and QA checklist), verify, tag",
        description="Dataset releases in the artifact store: immutable, content-addressed snapshots of the accepted "
                    "samples per split, named by their sha256 id or by a tag (latest: the last built).")
    actions = release.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="every release with its tags and samples per split").set_defaults(handler=_list)
    show = actions.add_parser("show", help="a release's counts and QA checklist")
    show.add_argument("release", metavar="TAG", help="a tag (latest) or a release id (sha256:...)")
    show.add_argument("--json", action="store_true", help="print the datasheet and checklist as JSON")
    show.set_defaults(handler=_show)
    verify = actions.add_parser("verify", help="hash every object of a release; exit 1 when one differs")
    verify.add_argument("release", metavar="TAG", help="a tag (latest) or a release id (sha256:...)")
    verify.set_defaults(handler=_verify)
    tag = actions.add_parser("tag", help="name a release with a tag (a tag moves, a release never changes)")
    tag.add_argument("release", metavar="RELEASE", help="a release id or an existing tag")
    tag.add_argument("tag", metavar="TAG", help="the new tag (letters, digits, '_', '-', '.')")
    tag.set_defaults(handler=_tag)
