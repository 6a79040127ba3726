"""Dagster software-defined assets, one module per stage of the DAG (SPEC §1)."""
