"""Checks: Dagster asset checks (``*_checks.py``) and, later, the domain validity gate.

This package's ``__init__`` imports nothing, so the domain gate can be used
without Dagster.
"""
