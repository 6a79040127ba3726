"""Dagster software-defined assets, one module per stage of the DAG (SPEC §1).

The domain modules that pull the numeric and geometry stacks (PyBullet, trimesh, SciPy, Matplotlib, Great
Expectations, Jinja2 …) are imported inside the functions that run them, not at the top of these modules:
loading the definitions (the webserver, the daemon, each run, ``simready status``) then costs about a second
instead of three (issue 19 item 6; ``python -m simready.bench status``). Constants the decorators need stay at
the top.

Besides the stages: ``partitions.py`` (the partitions, defined once), ``stage_io.py`` (what every stage reads and
writes around its domain call: the batch folder, the template and catalog), ``inputs.py`` (the observed input
files), ``metadata.py`` (the UI's tables and links), ``automation.py`` and ``orchestration.py`` (when runs start).
"""
