"""The counterfactual validity gate (SPEC §12), domain code without Dagster.

``gate`` scores one sample (five checks, acceptance, weights) from the
evidence (``evidence``) that ``evidence_reader`` reads off disk; ``features`` and
``reference_pool`` are the realism reference; ``policy`` holds every threshold;
``batch`` runs the gate over a batch's samples and branches; ``suite`` applies the
suite-level weight policy and builds the Data Docs (``data_docs``); ``expectations``
are the Great Expectations suites; ``cli`` is ``simready validate``. The Dagster asset
checks that call it live in :mod:`simready.checks`.
"""
