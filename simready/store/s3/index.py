"""A folder's index, the object that publishes the folder (:class:`IndexedFolders`): ``<folder>/.index.json``
lists every file of the folder with its sha256 and size, and readers trust only it.

Reading: what readers see under a folder (:meth:`IndexedFolders._entries`) is the files of the nearest index at
or above it, or, with none, the lone objects there and the files of the indexes below. Writing: a new index
becomes the folder's only after every object it lists is in place (:meth:`IndexedFolders._commit`), so a step
killed at any point leaves an index whose every entry hashes right.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simready.common.errors import IntegrityError
from simready.store.base import key_parts
from simready.store.s3.objects import Entry, S3Objects, join

#: The index object of an indexed folder (hidden: a dot name is the store's own, never an artifact).
INDEX_NAME = ".index.json"
INDEX_FORMAT = "simready-index-1"
#: Where a changed object waits (hidden, under its folder) until the index that points at it is written.
PENDING = ".pending"


def indexed_entry(folder: str, rel: str, meta: dict[str, Any]) -> Entry:
    """The entry of ``rel`` in ``folder``'s index, whose bytes are at its pending object while ``at`` names one."""
    at = meta.get("at")
    return Entry(join(folder, rel), int(meta["size"]), sha256=meta["sha256"], source=join(folder, at) if at else None)


def hidden(rel: str) -> bool:
    """Whether a name is the store's own (a dot name at any level: an index, a pending object), never an artifact."""
    return any(p.startswith(".") for p in rel.split("/"))


class IndexedFolders(S3Objects):
    """The bucket's folders as their indexes publish them: reading an index, the entries readers see, and the
    commit that makes a new index the folder's."""

    def _read_index(self, folder: str) -> dict[str, dict[str, Any]] | None:
        """The folder's index (relative name -> sha256, size), or ``None`` when the folder has none."""
        key = join(folder, INDEX_NAME)
        try:
            record: dict[str, Any] = json.loads(self._get(key))
        except FileNotFoundError:
            return None
        except ValueError as exc:
            raise IntegrityError(self._s3_url(key), "", f"not a JSON index ({exc})") from exc
        if record.get("format") != INDEX_FORMAT or not isinstance(record.get("objects"), dict):
            raise IntegrityError(self._s3_url(key), "format", f"not a {INDEX_FORMAT} index")
        objects: dict[str, dict[str, Any]] = record["objects"]
        return objects

    def _write_index(self, folder: str, objects: dict[str, dict[str, Any]]) -> None:
        record = {"format": INDEX_FORMAT, "folder": folder, "objects": dict(sorted(objects.items()))}
        self._put(join(folder, INDEX_NAME), json.dumps(record, indent=1, sort_keys=True).encode("utf-8"))

    def _index_above(self, parts: tuple[str, ...]) -> tuple[str, dict[str, dict[str, Any]]] | None:
        """The nearest indexed folder among ``parts`` and its ancestors (longest first), with its index."""
        for n in range(len(parts), 0, -1):
            folder = "/".join(parts[:n])
            index = self._read_index(folder)
            if index is not None:
                return folder, index
        return None

    def _entries(self, prefix: str) -> dict[str, Entry]:
        """What readers see under the folder ``prefix``: indexed files by their index, lone objects as they are."""
        parts = key_parts(prefix, prefix=True)
        above = self._index_above(parts)
        if above is not None:
            folder, index = above
            out = {}
            for rel, meta in index.items():
                key = join(folder, rel)
                if not prefix or key.startswith(prefix + "/"):
                    out[key] = indexed_entry(folder, rel, meta)
            return out
        raw = self._list_objects(prefix)
        folders = sorted(e.key[: -len(INDEX_NAME) - 1] for e in raw if e.key.rsplit("/", 1)[-1] == INDEX_NAME)
        out = {}
        for folder in folders:
            for rel, meta in (self._read_index(folder) or {}).items():
                out[join(folder, rel)] = indexed_entry(folder, rel, meta)
        for e in raw:
            if hidden(e.key) or any(e.key.startswith(f + "/") for f in folders):
                continue
            out[e.key] = e
        return dict(sorted(out.items()))

    def _commit(self, folder: str, old: dict[str, dict[str, Any]], index: dict[str, dict[str, Any]],
                sources: Mapping[str, Path | bytes]) -> None:
        """Make ``index`` the folder's index, uploading ``sources`` (relative name -> file or bytes) first.

        Readers hold the old index until the new one is written, so no object it lists may change before then:
        a new name is uploaded to its key directly (no index lists it yet), a changed one to a pending key
        (``.pending/<token>/<name>``) that an intermediate index points at (``at``), and only then copied onto
        its key. A step that dies at any point leaves an index whose every entry hashes right.
        """
        token = uuid.uuid4().hex
        pending = {rel: f"{PENDING}/{token}/{rel}" for rel in sources if rel in old}

        def upload(rel: str) -> None:
            key = join(folder, pending.get(rel, rel))
            source = sources[rel]
            if isinstance(source, bytes):
                self._put(key, source)
            else:
                self._upload(key, source)

        self._parallel(upload, sorted(sources))
        if pending:
            self._write_index(folder, {rel: {**meta, **({"at": pending[rel]} if rel in pending else {})}
                                       for rel, meta in index.items()})
            self._parallel(lambda rel: self._copy(join(folder, pending[rel]), join(folder, rel)), sorted(pending))
        self._write_index(folder, index)
        stale = [join(folder, rel) for rel in sorted(set(old) - set(index))]
        # Every pending object goes: this commit's, and those a step killed between its two indexes left behind
        # (the index just written points at none of them).
        stale += sorted({join(folder, at) for at in pending.values()}
                        | {e.key for e in self._list_objects(join(folder, PENDING))})
        if stale:
            self._delete(stale)
