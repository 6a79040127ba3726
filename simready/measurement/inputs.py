"""An observation from a scenario sample's inputs: :func:`observe_sample` from the loaded template, catalog,
manifest and trace (what a pipeline step calls), :func:`observe_files` from files (``simready sense``).

Both check every input before anything is written or built (the rig's overrides first, then the rest), build
the world (:func:`~simready.sensors_hw.scene_build.build_scene`), take the lighting, atmosphere and sensor
streams from the manifest, record what was read (hashes, the trace's path from the render job) as the run's
provenance, and call :func:`~simready.measurement.observe.observe`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from simready.artifacts.layout import ObservationDir
from simready.catalog.catalog import Catalog, ensure_catalog
from simready.common import paths
from simready.measurement.observe import ObserveResult, observe
from simready.measurement.options import ObserveOptions, Progress, check_output_dir, parse_passes
from simready.measurement.plan import resolve_overrides
from simready.scenario.manifest import ScenarioManifest, load_manifest, manifest_hash
from simready.sensors_hw.atmosphere import Atmosphere
from simready.sensors_hw.camera import Lighting
from simready.sensors_hw.models import parse_set_args
from simready.sensors_hw.scene_build import build_scene, load_rig_data, rig_from_sensor_rig, template_rig_data
from simready.sensors_hw.trace_input import TraceInput, read_trace_input
from simready.world.template import WorldTemplate, load_template, template_hash


def _relative_to_job(source: str, out_dir: str | Path) -> str:
    """The trace's path as seen from the render job's folder: the same bytes wherever the artifacts live (a
    local folder, a worker's cache of S3), and still the way to the trace from the job file."""
    if not source:
        return source
    job_dir = ObservationDir(Path(out_dir).absolute()).render_job.parent
    return Path(os.path.relpath(Path(source).absolute(), job_dir)).as_posix()


def observe_sample(template: WorldTemplate, catalog: Catalog, manifest: ScenarioManifest, trace: TraceInput,
                   out_dir: str | Path, *,
                   rig_data: Mapping[str, Any] | None = None, rig_source: str = "template",
                   options: ObserveOptions = ObserveOptions(), overrides: Mapping[str, Any] | Iterable[str] = (),
                   provenance: Mapping[str, Any] | None = None,
                   progress: Callable[[int], Progress] | None = None) -> ObserveResult:
    """Observe one sample from loaded inputs (what a pipeline step calls; :func:`observe_files` reads files).

    Args:
        template: the :class:`~simready.world.template.WorldTemplate`; catalog: the
            :class:`~simready.catalog.catalog.Catalog`; manifest: the
            :class:`~simready.scenario.manifest.ScenarioManifest`; trace: its :class:`TraceInput`.
        rig_data: a template-format rig (default: the template's ``sensor_rig``).
        provenance: extra inputs for job/render-job.json (merged over the template/manifest/geometry ones).
    """
    check_output_dir(out_dir)
    overrides = parse_set_args(overrides) if not isinstance(overrides, Mapping) else dict(overrides)
    rig = rig_from_sensor_rig(template_rig_data(template) if rig_data is None else rig_data, source=rig_source)
    environment = manifest.environment.model_dump()
    resolve_overrides(rig, Atmosphere.from_environment(environment), overrides)  # fails here, before the build
    built = build_scene(template, catalog, manifest, trace)
    t_hash = template_hash(template)
    inputs = {
        "trace": {"source": _relative_to_job(trace.source, out_dir), "sha256": trace.sha256, "header": trace.header},
        "manifest": {"sample_id": manifest.sample_id, "hash": manifest_hash(manifest)},
        "template": {"id": template.id, "hash": t_hash, "manifest_template_hash": manifest.template_hash},
        "rig_source": rig_source,
        "geometry": {e.entity_id: e.geometry_hash for e in built.entities.values()},
        **dict(provenance or {}),
    }
    warnings = [] if t_hash == manifest.template_hash else [
        f"template {template.id} hashes to {t_hash}, the manifest recorded {manifest.template_hash}"]
    return observe(built, rig, trace, out_dir, options=options, overrides=overrides,
                   lighting=Lighting.from_environment(environment), streams=manifest.streams,
                   provenance=inputs, warnings=warnings, progress=progress,
                   atmosphere=Atmosphere.from_environment(environment))


def observe_files(trace_path: str | Path, manifest_path: str | Path, out_dir: str | Path, *,
                  rig_spec: str | Path | None = None, passes: str | Iterable[str] | None = None,
                  overrides: Iterable[str] | Mapping[str, Any] = (), lidar_format: str = "ascii",
                  depth_format: str = "f32", lidar_time: bool = True, video: bool = True,
                  until_s: float | None = None, from_s: float | None = None, compressed: bool = False,
                  progress: Callable[[int], Progress] | None = None) -> ObserveResult:
    """``simready sense``: read the trace, manifest, template, catalog and rig; observe; write ``out_dir``.

    The manifest's template is read from ``data/templates/<template_id>.yaml``.
    Every input is checked before anything is written (one-line
    :class:`~simready.common.errors.SimreadyError` subclasses): unknown pass names,
    an output folder that exists and is not empty, malformed overrides, a
    rig whose sensor names a missing mount, a trace without twists. ``compressed`` writes each published
    file's opt-in compressed variant (:meth:`ObserveOptions.compressed`; the depth then as ``f32.zst``).
    """
    chosen = dict(passes=parse_passes(passes), lidar_format=lidar_format, depth_format=depth_format,
                  lidar_time_column=lidar_time, video=video, from_s=from_s, until_s=until_s)
    options = (ObserveOptions.compressed(**{**chosen, "depth_format": "f32.zst"}) if compressed
               else ObserveOptions(**chosen))
    check_output_dir(out_dir)
    overrides = parse_set_args(overrides) if not isinstance(overrides, Mapping) else dict(overrides)
    manifest = load_manifest(manifest_path)
    template_file = paths.TEMPLATES_DIR / f"{manifest.template_id}.yaml"
    template = load_template(template_file)
    if rig_spec is None:
        rig_data, rig_source = template_rig_data(template), str(template_file)
    else:
        rig_data, rig_source = load_rig_data(rig_spec)
    resolve_overrides(rig_from_sensor_rig(rig_data, source=rig_source), Atmosphere(), overrides)  # before the trace
    trace = read_trace_input(trace_path)
    catalog = ensure_catalog(paths.CATALOG_CONTRACTS_DIR, paths.CATALOG_GENERATED_DIR)
    return observe_sample(template, catalog, manifest, trace, out_dir, rig_data=rig_data, rig_source=rig_source,
                          options=options, overrides=overrides,
                          provenance={"files": {"trace": str(trace_path), "manifest": str(manifest_path)}},
                          progress=progress)
