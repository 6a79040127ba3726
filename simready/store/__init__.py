"""The artifact store (SPEC §16): keys in, bytes out, one interface for every deployment.

- :mod:`.base`: :class:`Store`, the interface, and the rules for keys (:func:`key_parts`).
- :mod:`.local`: :class:`LocalStore`, artifacts as files under one folder (the local deployment).
- :mod:`.s3`: :class:`~simready.store.s3.S3Store`, artifacts as S3 objects published per folder by an index
  written last (the production deployment, issue 15), and :func:`~simready.store.s3.s3_client`, the one place
  a boto3 client is made; a package by part (client, objects, index, cache, store).
- :mod:`.deployment`: which deployment is active (``SIMREADY_DEPLOYMENT``), its settings, and
  :func:`~simready.store.deployment.artifact_store`, the one switch from a deployment to its store.

None of it imports Dagster: the command line opens the same store as the code location, and
:mod:`simready.resources` only wraps it as a Dagster resource. The S3 modules load boto3 and are imported by
name, so a local reader never pays for them.
"""

from __future__ import annotations

from simready.store.base import Key, Store, key_parts
from simready.store.local import SERVED_AT_FILE, LocalStore, served_at

__all__ = ["SERVED_AT_FILE", "Key", "LocalStore", "Store", "key_parts", "served_at"]
