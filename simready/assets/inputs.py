"""Inputs: the hand-authored files the graph starts from, as external assets (group ``inputs``, SPEC §1).

Dagster never materializes them. Their *observations* carry a data version equal
to the content hash of the files, reported without a run (an event in the
instance, no process, milliseconds): by ``source_files_sensor`` when a file
changed, by ``simready run`` before it materializes anything and by
``simready status`` before it reports. Each observation also records its
files' hashes (metadata ``files``), so the next one names the file that
changed. The lineage
then starts at the files, and an asset that read an older version shows
*unsynced* in the UI and stale in ``simready status``.

* ``template_sources`` — one partition per template: its YAML and, for a
  template imported from an OpenDRIVE map, that map (``data/maps/``), so a map
  edit reaches exactly the templates imported from it.
* ``catalog_contracts`` — the catalog's contracts (``data/catalog/contracts``).
* ``suite_file`` — the suite: intents, counts, observation plan. Its version
  leaves ``batches`` out: adding a batch adds partitions, it changes no
  existing one.
* ``program_sources`` — one partition per template: the program files (SPEC
  §19) whose intents the suite samples on it, so editing a program reaches
  exactly the manifests (and what follows them) of the templates that sample
  its intents. A template sampling only built-in intents has no observation
  (nothing to be stale against).

The automation condition downstream (``automation.EAGER``) ignores this group:
``source_files_sensor`` requests what a changed template, map, contract or
suite feeds, and a never-observed input (a test's fresh instance) blocks
nothing.
"""
# No `from __future__ import annotations`: Dagster inspects annotations at runtime.

import warnings
from pathlib import Path

import dagster as dg

from simready.common import paths
from simready.assets.partitions import template_ids, template_partitions
from simready.common.hashing import content_hash, file_sha256
from simready.resources import SourceData
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
    """``{"templates/<f>" | "catalog/<f>" | "maps/<f>" | "suite/<f>" | "programs/<path>": sha256}`` of every
    hand-authored input (a program file under the path the suite names it by)."""
    out = {f"templates/{p.name}": file_sha256(str(p)) for p in sorted(Path(source.templates_dir).glob("*.yaml"))}
    out.update({f"catalog/{p.name}": file_sha256(str(p)) for p in sorted(Path(source.catalog_contracts_dir).glob("*.yaml"))})
    out.update({f"maps/{p.name}": file_sha256(str(p)) for p in sorted(maps_dir(Path(source.templates_dir)).glob("*.xodr"))})
    suite = Path(source.suite_file)
    if suite.is_file():
        out[f"suite/{suite.name}"] = file_sha256(str(suite))
        programs = _suite_programs(suite)
        if programs:
            # Imported here: the programs' modules are heavy; a suite without program files never loads them.
            from simready.scenario.program_files import resolve_path

            for f in programs:
                if resolve_path(f).is_file():
                    out[f"programs/{f}"] = file_sha256(str(resolve_path(f)))
    return out


def _program_members(source: SourceData, hashes: dict[str, str]) -> dict[str, list[str]]:
    """``{template id: [program file keys]}``: the program files whose intents the suite samples on a template.

    Which file defines which intent is known by loading the files (through the suite); when that fails (a file
    that does not load), every template naming an intent that is not built in depends on every program file, and
    the stages that load it fail with the reason.
    """
    from simready.scenario.program_files import ProgramError  # definitions stay light: programs (~70 ms)
    from simready.scenario.programs import PROGRAMS, provenance  # definitions stay light: programs (~0.2 s)

    programs = sorted(k for k in hashes if k.startswith("programs/"))
    if not programs:
        return {}
    try:
        suite = load_suite(source.suite_file, source.templates_dir)
    except (SuiteError, ProgramError):
        plan = suite_plan(source.suite_file).get("templates") or {}
        return {t: programs for t, intents in sorted(plan.items())
                if isinstance(intents, dict) and set(intents) - set(PROGRAMS)}
    out = {}
    for template_id, intents in sorted(suite.templates.items()):
        files = sorted({f"programs/{o.file}" for o in map(provenance, intents) if o is not None} & set(programs))
        if files:
            out[template_id] = files
    return out


def _members(source: SourceData, hashes: dict[str, str]) -> dict[tuple[dg.AssetKey, str | None], list[str]]:
    """``{(input asset key, partition or None): [file keys of source_file_hashes]}``: the files each input is."""
    maps_of: dict[str, list[str]] = {}
    for name in sorted(k.split("/", 1)[1] for k in hashes if k.startswith("maps/")):
        for template_id in templates_imported_from(Path(source.templates_dir), name):
            maps_of.setdefault(template_id, []).append(f"maps/{name}")
    out: dict[tuple[dg.AssetKey, str | None], list[str]] = {}
    for template_id in template_ids():
        files = [f"templates/{template_id}.yaml", *maps_of.get(template_id, [])]
        if files[0] in hashes:
            out[(template_sources.key, template_id)] = files
    contracts = sorted(k for k in hashes if k.startswith("catalog/"))
    if contracts:
        out[(catalog_contracts.key, None)] = contracts
    suite = sorted(k for k in hashes if k.startswith("suite/"))
    if suite:
        out[(suite_file.key, None)] = suite
    known = set(template_ids())
    for template_id, files in _program_members(source, hashes).items():
        if template_id in known:
            out[(program_sources.key, template_id)] = files
    return out


def input_versions(source: SourceData, hashes: dict[str, str]) -> dict[tuple[dg.AssetKey, str | None], str]:
    """``{(input asset key, partition or None): data version}`` from the files' hashes (``source_file_hashes``)."""
    out: dict[tuple[dg.AssetKey, str | None], str] = {}
    for (key, partition), files in _members(source, hashes).items():
        if key != suite_file.key:
            out[(key, partition)] = content_hash({f: hashes[f] for f in files})
            continue
        try:
            out[(key, partition)] = content_hash(suite_plan(source.suite_file))
        except (SuiteError, TypeError, ValueError):
            # A suite that does not parse still has a version; the stages that read it fail with the reason.
            out[(key, partition)] = file_sha256(source.suite_file)
    return out


def _path(source: SourceData, file_key: str) -> Path:
    """Where a file of ``source_file_hashes`` lies."""
    kind, name = file_key.split("/", 1)
    if kind == "programs":
        from simready.scenario.program_files import resolve_path  # definitions stay light: programs (~70 ms)

        return resolve_path(name)
    folder = {"templates": Path(source.templates_dir), "catalog": Path(source.catalog_contracts_dir),
              "maps": maps_dir(Path(source.templates_dir)), "suite": Path(source.suite_file).parent}[kind]
    return folder / name


def input_files(source: SourceData, hashes: dict[str, str]) -> dict[tuple[dg.AssetKey, str | None], dict[str, str]]:
    """``{(input asset key, partition or None): {file path (``paths.portable``): sha256}}``: what each input's
    observation records beside its data version, so a later one names the file that changed."""
    return {k: {paths.portable(_path(source, f)): hashes[f] for f in files} for k, files in _members(source, hashes).items()}


#: The observation's metadata entry that holds its files' hashes (:func:`input_files`).
FILES_ENTRY = "files"


def new_observations(instance: dg.DagsterInstance, versions: dict[tuple[dg.AssetKey, str | None], str],
                     files: dict[tuple[dg.AssetKey, str | None], dict[str, str]] | None = None
                     ) -> list[dg.AssetObservation]:
    """An observation for every input whose data version differs from the one the instance last recorded, with
    its files' hashes (``files``: :func:`input_files`) when given."""
    return [observation for observation, _ in _observations(instance, versions, files or {})]


def _observations(instance, versions, files) -> list[tuple[dg.AssetObservation, list[str]]]:
    """New observations, each with the files that changed since the last one (all its files when the last one
    recorded none)."""
    out = []
    for (key, partition), version in sorted(versions.items(), key=lambda kv: (kv[0][0].to_user_string(), kv[0][1] or "")):
        record = instance.get_latest_data_version_record(key, is_source=True, partition_key=partition)
        last = record.asset_observation.tags.get(DATA_VERSION_TAG) if record and record.asset_observation else None
        if last == version:
            continue
        now = files.get((key, partition), {})
        entry = record.asset_observation.metadata.get(FILES_ENTRY) if record and record.asset_observation else None
        before = entry.data if isinstance(entry, dg.JsonMetadataValue) and isinstance(entry.data, dict) else None
        changed = sorted(f for f in set(now) | set(before or {}) if before is None or before.get(f) != now.get(f))
        metadata = {FILES_ENTRY: dg.JsonMetadataValue(now)} if now else {}
        out.append((dg.AssetObservation(key, partition=partition, tags={DATA_VERSION_TAG: version}, metadata=metadata),
                    changed))
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
        hashes = source_file_hashes(source)
        # A template that samples no program file has no program version: it observes as such.
        version = input_versions(source, hashes).get((spec.key, partition), "no-program-files")
        files = input_files(source, hashes).get((spec.key, partition), {})
        return dg.ObserveResult(asset_key=spec.key, data_version=dg.DataVersion(version),
                                metadata={FILES_ENTRY: dg.JsonMetadataValue(files)})

    return observe


def record_observations(instance: dg.DagsterInstance, source: SourceData) -> list[str]:
    """Record the inputs' current data versions in ``instance`` (no run, milliseconds); a line for each input
    whose version changed, naming it and its files that changed: ``template_sources[<id>]:
    data/templates/<id>.yaml``."""
    hashes = source_file_hashes(source)
    lines = []
    for observation, changed in _observations(instance, input_versions(source, hashes), input_files(source, hashes)):
        instance.report_runless_asset_event(observation)
        name = observation.asset_key.to_user_string() + (f"[{observation.partition}]" if observation.partition else "")
        lines.append(f"{name}: {', '.join(changed) or 'new version'}")
    return lines


def observe_inputs(instance: dg.DagsterInstance, source: SourceData) -> int:
    """Record the inputs' current data versions in ``instance`` (no run); how many changed."""
    return len(record_observations(instance, source))


#: The inputs as the definitions hold them (observable source assets, group ``inputs``).
INPUTS = [_observer(spec) for spec in (template_sources, catalog_contracts, suite_file, program_sources)]
