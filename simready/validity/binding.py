"""What binds a sample's files together, checked before the gate trusts them (issue 14).

A trace belongs to the manifest it was rolled out from: its header repeats
the manifest's ``sample_id``, ``template_id`` and ``template_hash`` and
carries the manifest's hash as ``input_hash`` (:func:`identity`). An
observation folder belongs to the sample its ``render.json`` names
(``sample_id``, ``template_id``). Each file is also the one recorded for it:
the trace's sha256 in ``verdict.json``, an observation file's in
``results.json``, the manifest's in the batch's ``batch.json``. A file that
disagrees is an :class:`IntegrityError` naming the file, the field and both
values, so a manifest beside another sample's trace, or a mutated template
id, is refused rather than scored.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simready.common.errors import IntegrityError
from simready.artifacts.layout import ObservationDir, SampleDir
from simready.artifacts.records import Render, Results
from simready.scenario.manifest import ScenarioManifest, manifest_hash
from simready.sim.batch import verify_manifest, verify_sha256, verify_trace


def identity(manifest: ScenarioManifest) -> dict[str, str]:
    """The trace-header fields that bind a trace to ``manifest``."""
    return {"sample_id": manifest.sample_id, "template_id": manifest.template_id,
            "template_hash": manifest.template_hash, "input_hash": manifest_hash(manifest)}


def check_trace(sample: SampleDir, manifest: ScenarioManifest, trace: Path, header: Mapping[str, Any]) -> None:
    """``trace``'s header names ``manifest`` (the sample's); the base trace is also the one ``verdict.json`` judged
    and the manifest the one ``batch.json`` recorded (where they exist)."""
    for key, want in identity(manifest).items():
        got = header.get(key)
        if got != want:
            raise IntegrityError(trace, f"header.{key}", f"is {got!r}, but {sample.manifest} gives {want!r}")
    if trace == sample.trace:
        verify_manifest(sample)
        if sample.verdict.is_file():
            verify_trace(sample)


def check_render(sample: SampleDir, manifest: ScenarioManifest, render: Render, source: Path) -> None:
    """An observation folder's ``render.json`` names the sample's manifest's sample and template."""
    for key, want in (("sample_id", manifest.sample_id), ("template_id", manifest.template_id)):
        got = getattr(render, key)
        if got != want:
            raise IntegrityError(source, key, f"is {got!r}, but {sample.manifest} gives {want!r}")


def check_listed(obs: ObservationDir, results: Results | None, path: Path) -> None:
    """``path`` (inside ``obs``) matches the sha256 ``results.json`` lists for it, when it lists one."""
    if results is None:
        return
    name = path.relative_to(obs.root).as_posix()
    entry = next((f for f in results.files if f.path == name), None)
    if entry is not None:
        verify_sha256(path, entry.sha256, obs.results)
