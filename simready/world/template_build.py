"""Build one world template version: parse, validate, hash, write, plot.

Why a separate module: the Dagster asset, the CLI and tests all need the same
"is this template file a valid, certified-asset-only template, and what is
its content hash" answer, and a failure must be recorded as data (a report
the asset check reads) rather than only as an exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simready.common import paths
from simready.common.atomic import write_json_atomic
from simready.common.errors import TemplateError
from simready.common.hashing import file_sha256
from simready.artifacts.layout import TemplateDir
from simready.world.template import (
    WorldTemplate,
    canonical_dict,
    list_template_files,
    load_template,
    template_hash,
    validate_references,
)


@dataclass
class TemplateBuild:
    """Outcome of building one template.

    Attributes:
        template_id: id from the file name (the partition key).
        valid: parsed and validated, references included.
        template_hash: canonical content hash (``sha256:…``) when parsed, else "".
        source_sha256: hash of the raw file bytes (used as the data version of
            an invalid template, so a fix still changes it).
        errors: one-line reasons, first one first.
        reference_errors: unresolved or uncertified asset references.
    """

    template_id: str
    source: Path
    valid: bool
    template_hash: str
    source_sha256: str
    errors: list[str] = field(default_factory=list)
    reference_errors: list[str] = field(default_factory=list)
    template: WorldTemplate | None = None

    @property
    def data_version(self) -> str:
        return self.template_hash or self.source_sha256

    def report(self) -> dict[str, Any]:
        return {
            "template_id": self.template_id,
            "source": paths.portable(self.source),
            "valid": self.valid,
            "parsed": self.template is not None,
            "template_hash": self.template_hash,
            "source_sha256": self.source_sha256,
            "errors": self.errors,
            "reference_errors": self.reference_errors,
            "data_version": self.data_version,
        }


def validate_template_file(
    source: Path,
    certified_asset_ids: set[str] | None = None,
    asset_contracts: dict[str, Any] | None = None,
) -> TemplateBuild:
    """Parse and validate; ``certified_asset_ids=None`` skips the catalog check."""
    build = TemplateBuild(source.stem, source, False, "", file_sha256(str(source)) if source.exists() else "")
    try:
        template = load_template(source)
    except TemplateError as exc:
        build.errors.append(exc.one_line())
        return build
    build.template = template
    build.template_hash = template_hash(template)
    stale = stale_import(template, source)
    if stale:
        build.errors.append(stale)
    if template.id != source.stem:
        build.errors.append(TemplateError(source, "id", f"id {template.id!r} must equal the file name {source.stem!r}").one_line())
    if certified_asset_ids is not None:
        build.reference_errors = [e.one_line() for e in validate_references(template, certified_asset_ids, asset_contracts)]
        build.errors.extend(build.reference_errors)
    build.valid = not build.errors
    return build


def maps_dir(templates_dir: Path) -> Path:
    """Where the maps of imported templates live: ``maps/`` beside the templates folder (``data/maps/``)."""
    return templates_dir.parent / "maps"


def map_file(template_file: Path, source_name: str) -> Path:
    """The source map of an imported template file, by the name its provenance records."""
    return maps_dir(template_file.parent) / source_name


def stale_import(template: WorldTemplate, source: Path) -> str:
    """One line when ``template`` was imported from a map that has changed since, else "".

    Why: an imported template is derived from its map; editing the map (one
    lane's width) must not leave a template that silently says otherwise. A
    map kept beside the templates (:func:`map_file`) is compared with the
    sha256 the import recorded; a map kept elsewhere cannot be checked.
    """
    if template.provenance is None:
        return ""
    path = map_file(source, template.provenance.source)
    if not path.is_file():
        return ""
    now = file_sha256(str(path)).removeprefix("sha256:")
    recorded = template.provenance.source_sha256
    if now == recorded:
        return ""
    return TemplateError(source, "provenance.source_sha256",
                         f"imported from {path.name} with sha256 {recorded[:12]}, but {path} is now {now[:12]}: "
                         f"run `simready template import {path} --id {template.id}` again").one_line()


def templates_imported_from(templates_dir: Path, map_name: str) -> list[str]:
    """Ids of the templates in ``templates_dir`` whose provenance names map file ``map_name``, sorted."""
    out = []
    for template_id, path in list_template_files(templates_dir).items():
        try:
            template = load_template(path)
        except TemplateError:
            continue
        if template.provenance is not None and template.provenance.source == map_name:
            out.append(template_id)
    return out


def build_template_version(
    source: Path,
    out: TemplateDir,
    certified_asset_ids: set[str],
    asset_contracts: dict[str, Any] | None,
    asset_dims: dict[str, tuple[float, float]] | None,
) -> TemplateBuild:
    """Validate ``source`` and write the version into ``out``, a staging folder the caller puts in place as a
    whole (:meth:`simready.store.Store.publish`), so no reader sees half a template.

    Writes ``validation.json`` always; ``template.json`` (canonical, resolved)
    and ``plot.png`` when the template parsed.
    """
    # Matplotlib only here: loading the definitions (which read map and template paths from this module) skips it.
    from simready.world.template_plot import plot_template

    build = validate_template_file(source, certified_asset_ids, asset_contracts)
    out.root.mkdir(parents=True, exist_ok=True)
    if build.template is not None:
        write_json_atomic(out.record, canonical_dict(build.template))
        plot_template(build.template, out.plot, asset_dims)
    write_json_atomic(out.validation, build.report())
    return build
