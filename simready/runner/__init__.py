"""The commands that drive the asset graph on a Dagster instance, and the check they make first.

:mod:`.main_job` materializes the graph (``simready run``, ``make run``); :mod:`.status` reports fresh or
stale for every partition and the runs a killed process left unfinished (``simready status``); both first check
the suite against its templates, catalog and rigs (:mod:`.suite_check`, which imports no Dagster).
"""
