"""The production deployment's :class:`~simready.store.base.Store` (:class:`S3Store`): the interface's reads,
writes, copies, listings and links over the bucket's indexed folders, kept in this process's cache; a finished
folder published by its index written last (:mod:`.index`)."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO
from urllib.parse import quote

from simready.common.errors import IntegrityError
from simready.common.hashing import file_sha256, sha256_bytes
from simready.store.base import Key, Store, key_parts
from simready.store.s3.cache import FolderCache
from simready.store.s3.index import INDEX_NAME, hidden, indexed_entry
from simready.store.s3.objects import timed


class S3Store(FolderCache, Store):
    """Artifacts as objects of one S3 bucket under a prefix, with a local cache per process.

    Attributes:
        client: a boto3 S3 client (:func:`~simready.store.s3.client.s3_client`).
        bucket: the bucket name.
        prefix: the key prefix of this deployment's artifacts inside the bucket ("" for the bucket's root).
        cache_dir: this process's local cache folder.
        endpoint: the endpoint's URL, for messages (the AWS default when ``None``).
        transfer: what this store moved and how long its calls took, for the figures.
    """

    def __repr__(self) -> str:
        return f"S3Store(s3://{self.bucket}/{self.prefix})"

    def open(self, key: Key) -> BinaryIO:
        return self.local_path(key).open("rb")

    @timed
    def read_bytes(self, key: Key) -> bytes:
        parts = key_parts(key)
        text = "/".join(parts)
        above = self._index_above(parts[:-1])
        if above is None:
            return self._get(text)
        folder, index = above
        meta = index.get(text[len(folder) + 1:])
        if meta is None:
            raise FileNotFoundError(f"{self._s3_url(text)} (not in the index of {folder}/)")
        data = self._get(indexed_entry(folder, text[len(folder) + 1:], meta).location)
        if sha256_bytes(data) != meta["sha256"]:
            raise IntegrityError(self._s3_url(text), "", f"its bytes do not hash to the sha256 in {folder}/{INDEX_NAME}")
        return data

    @timed
    def write_bytes(self, key: Key, data: bytes) -> None:
        """One PUT; into an indexed folder (a template's rig beside its record) through the folder's index."""
        parts = key_parts(key)
        text = "/".join(parts)
        sha = sha256_bytes(data)
        with self._about("write", text):
            above = self._index_above(parts[:-1])
            if above is None:
                self._put(text, data)
            else:
                folder, old = above
                rel = text[len(folder) + 1:]
                self._commit(folder, old, {**old, rel: {"sha256": sha, "size": len(data)}}, {rel: data})
        self._keep(text, data, sha)

    @timed
    def copy(self, source: Key, target: Key) -> None:
        """A server-side copy of the object's bytes as its folder's index lists them (no download); the target
        is a lone object, atomic by S3's own semantics."""
        parts = key_parts(source)
        text = "/".join(parts)
        target_text = "/".join(key_parts(target))
        above = self._index_above(parts[:-1])
        location = text
        if above is not None:
            folder, index = above
            meta = index.get(text[len(folder) + 1:])
            if meta is None:
                raise FileNotFoundError(f"{self._s3_url(text)} (not in the index of {folder}/)")
            location = indexed_entry(folder, text[len(folder) + 1:], meta).location
        self._copy(location, target_text)

    @timed
    def exists(self, key: Key) -> bool:
        parts = key_parts(key, prefix=True)
        text = "/".join(parts)
        above = self._index_above(parts)
        if above is not None:
            folder, index = above
            if folder == text:
                return bool(index)
            rel = text[len(folder) + 1:]
            return rel in index or any(r.startswith(rel + "/") for r in index)
        if parts and not hidden(text):
            try:
                self._call("read", text, lambda: self.client.head_object(Bucket=self.bucket, Key=self._object(text)))
                return True
            except FileNotFoundError:
                pass
        return bool(self._entries(text))

    @timed
    def list(self, prefix: Key = "") -> list[str]:
        text = "/".join(key_parts(prefix, prefix=True))
        return sorted(self._entries(text))

    def url(self, key: Key) -> str:
        return self._s3_url("/".join(key_parts(key, prefix=True)))

    def share_url(self, key: Key, *, folder: bool = False, expires_s: int = 7 * 24 * 3600) -> str:
        """A link for a reviewer off the server: a presigned HTTPS URL of one object (valid ``expires_s``, at
        most S3's 7 days), or for a folder the AWS console's view of it (the endpoint's listing elsewhere)."""
        text = "/".join(key_parts(key, prefix=folder))
        if folder:
            listed = quote(self._object(text) + "/")
            if self.endpoint is None or self.endpoint.endswith(".amazonaws.com"):
                return f"https://s3.console.aws.amazon.com/s3/buckets/{self.bucket}?prefix={listed}"
            return f"{self.endpoint.rstrip('/')}/{self.bucket}?list-type=2&prefix={listed}"
        url: str = self._call("sign", text, lambda: self.client.generate_presigned_url(
            "get_object", Params={"Bucket": self.bucket, "Key": self._object(text)}, ExpiresIn=expires_s))
        return url

    @timed
    def remove(self, key: Key) -> None:
        text = "/".join(key_parts(key))
        raw = [e.key for e in self._list_objects(text)]
        self._delete([*raw, text])
        self._forget(text)

    @timed
    def local_path(self, key: Key) -> Path:
        """One object brought into the cache (verified against its index), for a library that reads files."""
        parts = key_parts(key)
        text = "/".join(parts)
        path = self.cache_dir / text
        if self._is_synced(parts):
            return path
        return self._keep(text, self.read_bytes(text))

    @timed
    def save(self, prefix: Key) -> None:
        """Upload what the stage changed in ``local_dir(prefix)`` and write the folder's index last."""
        parts = key_parts(prefix, prefix=True)
        if not parts:
            raise ValueError("save('') would index the whole store; save the folder a stage wrote")
        if not self._is_synced(parts):
            raise RuntimeError(f"save({'/'.join(parts)!r}) without local_dir() first: the cache may hold another step's files")
        with self._about("save", "/".join(parts)):
            self._publish_folder("/".join(parts), self.cache_dir.joinpath(*parts))

    def _publish_folder(self, folder: str, local: Path) -> None:
        """Commit the local folder as ``folder``'s new index, uploading the files whose sha256 it does not list."""
        files = sorted(p for p in local.rglob("*") if p.is_file() and not hidden(p.relative_to(local).as_posix())) \
            if local.is_dir() else []
        index = {p.relative_to(local).as_posix(): {"sha256": file_sha256(p), "size": p.stat().st_size} for p in files}
        old = self._read_index(folder) or {}
        changed = {rel: local / rel for rel, meta in index.items() if old.get(rel, {}).get("sha256") != meta["sha256"]}
        self._commit(folder, old, index, changed)

    @timed
    def publish(self, prefix: Key, staging_dir: Path) -> None:
        """Upload the finished folder, write its index last, and make it this process's cached copy."""
        parts = key_parts(prefix)
        text = "/".join(parts)
        staging_dir = Path(staging_dir)
        if not staging_dir.is_dir():
            raise NotADirectoryError(f"{staging_dir}: not a folder to publish as {self._s3_url(text)}")
        with self._about("publish", text):
            self._publish_folder(text, staging_dir)
        self._adopt(parts, staging_dir)
