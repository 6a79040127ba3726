"""Primitives every package of simready builds on; none of them knows a stage.

:mod:`.errors` (the typed errors a user can cause, printed as one line), :mod:`.identifiers` and
:mod:`.loading` (names that become path components; bounded, strict reads of the files a user hands us),
:mod:`.atomic` (writes that never leave half a file), :mod:`.hashing` (canonical content hashes),
:mod:`.paths` (where the project's inputs and outputs live) and :mod:`.outdir` (the one rule for a command's
``--out``). Import the modules (``from simready.common import paths``); this package imports nothing.
"""
