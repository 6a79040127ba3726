"""Dagster asset checks, one module per stage like ``assets/`` (``world``, ``scenario``, ``simulation``,
``measurement``, ``suite``), plus ``expectations``: the Great Expectations suites as checks on tables of
several stages.

The domain validity gate is :mod:`simready.validity`, not here.
"""
