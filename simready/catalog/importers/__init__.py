"""Bring your own assets (issue 16): glTF 2.0, OBJ (+MTL), COLLADA, URDF and USD into catalog geometry.

* :func:`~.registry.read_source` — a source file (by extension) → :class:`~.source.SourceScene`, in its own
  conventions (:mod:`.meshfiles` for glTF/OBJ/COLLADA/STL, :mod:`.urdf`, :mod:`.usd`).
* :func:`~.assemble.convert` — conventions resolved with the flags (:mod:`.conventions`), one recorded 4×4
  conversion into our body frame, parts, colliders (:mod:`.decompose`) → :class:`~.assemble.ImportedAsset`.
* :func:`~.registry.rebuild` — the same from a contract whose ``generator.kind`` is ``import`` (regeneration).

Writing the entry and the contract into a catalog is :mod:`simready.catalog.add`'s job. No Dagster here.
This package's own namespace is empty so that ``simready --help`` can read :mod:`.conventions` without loading
trimesh, CoACD and usd-core.
"""
