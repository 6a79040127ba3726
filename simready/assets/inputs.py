"""Inputs: the hand-authored files the graph starts from, as external assets (group ``inputs``, SPEC §1).

Dagster never materializes them. Their *observations* carry a data version equal
to the content hash of the files, reported without a run (an event in the
instance, no process, milliseconds): by ``source_files_sensor`` when a file
changed and by ``simready run`` before it materializes anything. The lineage
then starts at the files, and an asset that read an older version shows
*unsynced* in the UI and stale in ``simready status``.

* ``template_sources`` — one partition per template: its YAML and, for a
  template imported from an OpenDRIVE map, that map (``data/maps/``), so a map
  edit reaches exactly the templates imported from it.
* ``catalog_contracts`` — the catalog's contracts (``data/catalog/contracts``).
* ``suite_file`` — the suite: intents, counts, observation plan. Its version
  leaves ``batches`` out: adding a batch adds partitions, it changes no
  existing one.
* ``program_sources`` — one partition per template: the content hashes of the
  program files (SPEC §19) whose intents the suite samples on it, so editing a
  program reaches exactly the manifests (and what follows them) of the
  templates that sample its intents. A template sampling only built-in intents
  has no observation (nothing to be stale against).

The automation condition downstream (``automation.EAGER``) ignores this group:
``source_files_sensor`` requests what a changed template or contract feeds, as
before, and a never-observed input (a test's fresh instance) blocks nothing.
"""
# No `from __future__ import annotations`: Dagster inspects annotations at runtime.

import warnings
from pathlib import Path

import dagster as dg

from simready import paths
from simready.assets.partitions import template_ids, template_partitions
from simready.hashing import content_hash, file_sha256
from simready.resources import SourceData
from simready.scenario.program_files import ProgramError, resolve_path
from simready.scenario.suite import SuiteError, load_suite, suite_plan
from simready.world.template_build import maps_dir, templates_imported_from

GROUP = "inputs"


def _files(*files: Path) -> dict[str, dg.CodeReferencesMetadataValue]:
    """The files an input stands for as its code references: the asset page opens them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)  # code references are beta in 1.13: chosen, not news
        refs = [dg.LocalFileCodeReference(file_path=str(f), label=f.name) for f in files]
        return {"dagster/code_references": dg.CodeReferencesMetadataValue(code_references=refs)}


#: The Dagster tag a data version travels in (what ``observable_source_asset`` writes).
DATA_VERSION_TAG = "dagster/data_version"

template_sources = dg.AssetSpec(
    "template_sources", group_name=GROUP, kinds={"yaml"}, partitions_def=template_partitions,
    metadata=_files(*sorted(paths.TEMPLATES_DIR.glob("*.yaml")), *sorted(maps_dir(paths.TEMPLATES_DIR).glob("*.xodr"))),
    description="A world template's YAML (`data/templates/ID.yaml`) and the OpenDRIVE map it was imported from, "
                "if any; observed (content hash) by source_files_sensor and simready run.",
)
catalog_contracts = dg.AssetSpec(
    "catalog_contracts", group_name=GROUP, kinds={"yaml"},
    metadata=_files(*sorted(paths.CATALOG_CONTRACTS_DIR.glob("*.yaml"))),
    description="The asset catalog's contracts (`data/catalog/contracts/*.yaml`); observed (content hash) by "
                "source_files_sensor and simready run.",
)
suite_file = dg.AssetSpec(
    "suite_file", group_name=GROUP, kinds={"yaml"}, metadata=_files(paths.SUITE_FILE),
    description="The suite (`data/suites/default.yaml` or `SIMREADY_SUITE`): intents and counts per template, the "
                "observation plan; its data version leaves the batch count out.",
)
program_sources = dg.AssetSpec(
    "program_sources", group_name=GROUP, kinds={"python"}, partitions_def=template_partitions,
    metadata=_files(*sorted((paths.DATA_DIR / "programs").glob("*.py"))),
    description="The program files (`programs:` in the suite, e.g. `data/programs/*.py`) whose intents the suite "
                "samples on a template; observed (content hash) by source_files_sensor and simready run.",
)


def _suite_programs(suite_file: Path) -> list[str]:
    """The program files a suite names (``programs:``), as written; none for a suite that does not parse."""
    try:
        plan = suite_plan(suite_file)
    except SuiteError:
        return []
    files = plan.get("programs") or []
    return [f for f in files if isinstance(f, str)] if isinstance(files, list) else []


def source_file_hashes(source: SourceData) -> dict[str, str]:
    """``{"templates/<f>" | "catalog/<f>" | "maps/<f>" | "suite/<f>": sha256}`` of every hand-authored input."""
    out = {f"templates/{p.name}": file_sha256(str(p)) for p in sorted(Path(source.templates_dir).glob("*.yaml"))}
    out.update({f"catalog/{p.name}": file_sha256(str(p)) for p in sorted(Path(source.catalog_contracts_dir).glob("*.yaml"))})
    out.update({f"maps/{p.name}": file_sha256(str(p)) for p in sorted(maps_dir(Path(source.templates_dir)).glob("*.xodr"))})
    suite = Path(source.suite_file)
    if suite.is_file():
        out[f"suite/{suite.name}"] = file_sha256(str(suite))
        for f in _suite_programs(suite):
            if resolve_path(f).is_file():
                out[f"programs/{f}"] = file_sha256(str(resolve_path(f)))
    return out


def _program_versions(source: SourceData, hashes: dict[str, str]) -> dict[str, str]:
    """``{template id: version}`` over the program files whose intents the suite samples on the template.

    Which file defines which intent is known by loading the files (through the suite); when that fails (a file
    that does not load), every template naming an intent that is not built in depends on every program file, and
    the stages that load it fail with the reason.
    """
    from simready.scenario.programs import PROGRAMS, provenance

    programs = {k.split("/", 1)[1]: v for k, v in hashes.items() if k.startswith("programs/")}
    if not programs:
        return {}
    try:
        suite = load_suite(source.suite_file, source.templates_dir)
    except (SuiteError, ProgramError):
        plan = suite_plan(source.suite_file).get("templates") or {}
        return {t: content_hash(programs) for t, intents in sorted(plan.items())
                if isinstance(intents, dict) and set(intents) - set(PROGRAMS)}
    out = {}
    for template_id, intents in sorted(suite.templates.items()):
        files = {}
        for intent in sorted(intents):
            origin = provenance(intent)
            if origin is not None and origin.file in programs:
                files[origin.file] = programs[origin.file]
        if files:
            out[template_id] = content_hash(files)
    return out


def input_versions(source: SourceData, hashes: dict[str, str]) -> dict[tuple[dg.AssetKey, str | None], str]:
    """``{(input asset key, partition or None): data version}`` from the files' hashes (``source_file_hashes``)."""
    maps_of: dict[str, list[str]] = {}
    for name in sorted(k.split("/", 1)[1] for k in hashes if k.startswith("maps/")):
        for template_id in templates_imported_from(Path(source.templates_dir), name):
            maps_of.setdefault(template_id, []).append(f"maps/{name}")
    out: dict[tuple[dg.AssetKey, str | None], str] = {}
    for template_id in template_ids():
        files = [f"templates/{template_id}.yaml", *maps_of.get(template_id, [])]
        if files[0] in hashes:
            out[(template_sources.key, template_id)] = content_hash({f: hashes[f] for f in files})
    contracts = {k: v for k, v in hashes.items() if k.startswith("catalog/")}
    if contracts:
        out[(catalog_contracts.key, None)] = content_hash(contracts)
    if any(k.startswith("suite/") for k in hashes):
        try:
            out[(suite_file.key, None)] = content_hash(suite_plan(source.suite_file))
        except (SuiteError, TypeError, ValueError):
            # A suite that does not parse still has a version; the stages that read it fail with the reason.
            out[(suite_file.key, None)] = file_sha256(source.suite_file)
    known = set(template_ids())
    for template_id, version in _program_versions(source, hashes).items():
        if template_id in known:
            out[(program_sources.key, template_id)] = version
    return out


def new_observations(instance: dg.DagsterInstance, versions: dict[tuple[dg.AssetKey, str | None], str]
                     ) -> list[dg.AssetObservation]:
    """An observation for every input whose data version differs from the one the instance last recorded."""
    out = []
    for (key, partition), version in sorted(versions.items(), key=lambda kv: (kv[0][0].to_user_string(), kv[0][1] or "")):
        record = instance.get_latest_data_version_record(key, is_source=True, partition_key=partition)
        last = record.asset_observation.tags.get(DATA_VERSION_TAG) if record and record.asset_observation else None
        if last != version:
            out.append(dg.AssetObservation(key, partition=partition, tags={DATA_VERSION_TAG: version}))
    return out


def _observer(spec: dg.AssetSpec) -> dg.AssetsDefinition:
    """The input as an observable source asset: the UI's "Observe sources" runs this (a run that hashes a few
    files); ``source_files_sensor`` and ``simready run`` record the same versions without one. Observable, not a
    bare spec, because Dagster's stale status reads observations of observable assets only."""

    @dg.multi_observable_source_asset(specs=[spec], name=f"observe_{spec.key.to_python_identifier()}",
                                      partitions_def=spec.partitions_def, required_resource_keys={"source"})
    def observe(context) -> dg.ObserveResult:
        source = context.resources.source
        partition = context.partition_key if context.has_partition_key else None
        # A template that samples no program file has no program version: it observes as such.
        version = input_versions(source, source_file_hashes(source)).get((spec.key, partition), "no-program-files")
        return dg.ObserveResult(asset_key=spec.key, data_version=dg.DataVersion(version))

    return observe


def observe_inputs(instance: dg.DagsterInstance, source: SourceData) -> int:
    """Record the inputs' current data versions in ``instance`` (no run); how many changed."""
    observations = new_observations(instance, input_versions(source, source_file_hashes(source)))
    for observation in observations:
        instance.report_runless_asset_event(observation)
    return len(observations)


#: The inputs as the definitions hold them (observable source assets, group ``inputs``).
INPUTS = [_observer(spec) for spec in (template_sources, catalog_contracts, suite_file, program_sources)]
