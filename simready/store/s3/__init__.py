"""Artifacts in S3: the production deployment's :class:`~simready.store.base.Store` (issue 15).

Same keys and bytes as :class:`~simready.store.local.LocalStore`; an artifact key ``k``
is the object ``s3://<bucket>/<prefix>/k``.

**Publication is atomic per folder.** A stage writes a folder (a batch, a
template, a reference pool) locally, then :meth:`S3Store.save` uploads the
files that changed and writes the folder's *index* last: the object
``<folder>/.index.json`` listing every file of the folder with its sha256 and
size. Readers trust only the index: a file under an indexed folder that the
index does not list does not exist for them (it is the debris of a step that
failed before its index was written), and a file whose bytes do not hash to
the index's sha256 is an :class:`~simready.common.errors.IntegrityError`. So a step
killed half-way through an upload leaves the previous index — the previous,
complete folder — in place. Single objects written with :meth:`write_bytes`
are atomic by S3's own semantics (a PUT is all or nothing); one written into an
indexed folder is added to that folder's index after its PUT.

**Workers share no disk.** Every process keeps a private local cache
(``cache_dir``); :meth:`S3Store.local_dir` brings a folder's indexed objects
into it (only those whose bytes it does not already hold) and removes cached
files the index no longer lists, so a stage sees exactly the published folder.

Network failures become one line naming the object and the endpoint
(:class:`~simready.common.errors.StoreError`), never a botocore traceback from deep in
a step; the client's time limits are explicit so a stalled endpoint fails a
step in seconds rather than hanging it.

One module per part, each built on the ones below it:

- :mod:`.client`: :func:`s3_client`, the one place a boto3 client is made, and how a failed request reads.
- :mod:`.objects`: one bucket under a prefix, object by object (raw I/O, listing, parallel transfers, the
  transfer figures); :func:`check_bucket`.
- :mod:`.index`: a folder's index: reading it, what readers see, and the commit that publishes a folder.
- :mod:`.cache`: this process's local cache of the published folders.
- :mod:`.store`: :class:`S3Store`, the :class:`~simready.store.base.Store` interface over them.

Every name above is also imported from this package, its public face.
"""

from __future__ import annotations

from simready.store.s3.cache import cache_dir_from_environment, default_cache_dir
from simready.store.s3.client import s3_client
from simready.store.s3.index import INDEX_FORMAT, INDEX_NAME, PENDING
from simready.store.s3.objects import TRANSFER_THREADS, Entry, check_bucket
from simready.store.s3.store import S3Store

__all__ = ["INDEX_FORMAT", "INDEX_NAME", "PENDING", "TRANSFER_THREADS", "Entry", "S3Store", "cache_dir_from_environment",
           "check_bucket", "default_cache_dir", "s3_client"]
