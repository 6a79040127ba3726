"""Dataset releases (SPEC §17, issue 18 item 5): an immutable, content-addressed snapshot of the accepted samples
per split, with a datasheet and the world-trajectory QA checklist; the exports read releases.

A release is built from what the stages stored (:func:`~simready.release.build.build_release`), refused in one
line when a blocking check fails over the suite, addressed by its hash (``sha256:<hex>``) and named by tags
(``releases/tags/<tag>``). Plain Python over the :class:`~simready.store.Store`; the Dagster asset
``dataset_release`` only calls it.
"""

from simready.release.build import (
    Release,
    ReleaseError,
    build_release,
    checkout,
    list_releases,
    load_release,
    resolve,
    tag_release,
    verify_release,
)

__all__ = ["Release", "ReleaseError", "build_release", "checkout", "list_releases", "load_release", "resolve",
           "tag_release", "verify_release"]
