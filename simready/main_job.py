"""``make run``: materialize the asset graph on the embedded default instance.

The instance is the project-local ``DAGSTER_HOME`` (SQLite storage), so the
runs, materializations and check results appear in ``make ui`` afterwards.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import dagster as dg

from simready import paths


def _instance() -> dg.DagsterInstance:
    home = Path(os.environ.setdefault("DAGSTER_HOME", str(paths.PROJECT_ROOT / ".dagster_home")))
    home.mkdir(parents=True, exist_ok=True)
    return dg.DagsterInstance.get()


QUIET_LOGS = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def run_main_job(quiet: bool = False) -> int:
    """Materialize every asset and partition; print a summary; 0 iff all runs and checks passed."""
    from simready.definitions import defs, world_templates

    t0 = time.perf_counter()
    instance = _instance()
    ok = True
    result = defs.resolve_job_def("catalog_job").execute_in_process(
        instance=instance, raise_on_error=False, run_config=QUIET_LOGS if quiet else {}
    )
    ok &= result.success
    template_ids = world_templates.partitions_def.get_partition_keys()
    if result.success:
        job = defs.resolve_job_def("templates_job")
        for template_id in template_ids:
            r = job.execute_in_process(
                instance=instance, partition_key=template_id, raise_on_error=False, run_config=QUIET_LOGS if quiet else {}
            )
            ok &= r.success
            ok &= all(e.passed for e in r.get_asset_check_evaluations())
    _print_summary(template_ids, time.perf_counter() - t0, instance)
    return 0 if ok else 1


def _print_summary(template_ids: list[str], wall_s: float, instance: dg.DagsterInstance) -> None:
    store = paths.artifacts_dir()
    cert_path = store / "catalog" / "certification.json"
    print("\nsimready — main job summary")
    if cert_path.exists():
        cert = json.loads(cert_path.read_text())
        print(f"  catalog     {cert['n_passed']}/{cert['n_entries']} entries certified   {cert_path}")
    for template_id in template_ids:
        vpath = store / "templates" / template_id / "validation.json"
        if not vpath.exists():
            print(f"  template    {template_id:<32} not built")
            continue
        v = json.loads(vpath.read_text())
        state = "valid  " if v["valid"] else "INVALID"
        print(f"  template    {template_id:<32} {state} {v['template_hash'][:19]}  {vpath.parent}")
        for err in v["errors"][:3]:
            print(f"                {err}")
    print(f"  artifacts   {store}")
    print(f"  dagster     {instance.root_directory} (SQLite; `make ui` to browse)")
    print(f"  wall time   {wall_s:.1f} s")
