"""World templates (SPEC §5): load, validate, hash.

The file is read by :mod:`simready.world.template_source` (YAML with line locations). Loading is two passes, cheap before expensive: pydantic parses the structure
into the typed models of :mod:`simready.world.template_model` (types,
ranges, polygon validity), then the semantic checks of
:mod:`simready.world.template_checks` run in order (ids, references, then
geometry: lane containment, lane graph direction, relations, walkable
graph). The first problem raises one :class:`~simready.common.errors.TemplateError`
naming the file, the field path and the YAML line. :func:`validate_references`
adds the catalog checks, and :func:`template_hash` is the content hash that
versions a template.

The model classes are re-exported here, so ``from simready.world.template
import WorldTemplate`` is the one import callers need.
"""

from __future__ import annotations

import hashlib
import math
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from simready.common import paths
from simready.common.errors import TemplateError
from simready.common.hashing import canonical_json, content_hash
from simready.common.loading import read_yaml_text
from simready.world.rig_view import rig_hash, scenario_rig_view
from simready.world.template_checks import Loc, semantic_issues
from simready.world.template_model import *  # noqa: F403  (re-export: callers import models from here)
from simready.world.template_model import WorldTemplate
from simready.world.template_model import __all__ as _MODEL_NAMES
from simready.world.template_source import YamlRoot, located_error, pydantic_loc, read_yaml, schema_reason

__all__ = [
    *_MODEL_NAMES,
    "MOUNT_CONTRACT_TOLERANCE_M",
    "canonical_dict",
    "list_template_files",
    "load_template",
    "parse_template",
    "template_hash",
    "rig_hash",
    "template_issues",
    "validate_references",
]

#: A rig mount must sit this close to the ego contract's mount of the same name (m).
MOUNT_CONTRACT_TOLERANCE_M = 0.05


# --- loading ------------------------------------------------------------------


def _error(template: WorldTemplate, loc: Loc, reason: str) -> TemplateError:
    return located_error(template.source, template._yaml_root, loc, reason)


def template_issues(template: WorldTemplate) -> list[TemplateError]:
    """The semantic problems of the first failing check, as one-line errors (empty when clean)."""
    return [_error(template, loc, reason) for loc, reason in semantic_issues(template)]


def parse_template(data: Any, source: str | Path = "<memory>", *,
                   yaml_root: YamlRoot | None = None) -> WorldTemplate:
    """Validate already-loaded data (a dict) into a :class:`WorldTemplate`.

    Raises:
        TemplateError: the first structural or semantic problem, one line.
    """
    source = str(source)
    if data is None:
        raise TemplateError(source, "", "empty file: a template is a mapping of its sections")
    if not isinstance(data, Mapping):
        raise TemplateError(source, "", f"a template is a mapping at the top level, got {type(data).__name__}")
    street = data.get("street")
    if street is not None or "street" in data:
        _check_street(street, source, yaml_root)
        data = {k: v for k, v in data.items() if k != "street"}
    try:
        template = WorldTemplate.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise located_error(source, yaml_root, pydantic_loc(err["loc"], data), schema_reason(err)) from None
    if street is not None:
        from simready.world.street import expand_street  # cost: world.street (~30 ms), only for street templates

        try:
            template = expand_street(template)
        except ValueError as exc:
            raise located_error(source, yaml_root, ("street",), str(exc)) from None
        template._street = dict(street)
    template._source = source
    template._yaml_root = yaml_root
    errors = template_issues(template)
    if errors:
        raise errors[0]
    return template


def _check_street(street: object, source: str, yaml_root: YamlRoot | None) -> None:
    """A ``street:`` section names the generator this code runs, exactly (see :mod:`simready.world.street`)."""
    from simready.world.street import street_spec  # cost: world.street (~30 ms), only for street templates

    expected = street_spec()
    if street != expected:
        raise located_error(source, yaml_root, ("street",),
                             f"a derived street is {expected} (this code's street generator), got {street!r}; "
                             "re-import the map")


def load_template(path: str | Path) -> WorldTemplate:
    """Read, parse and validate a template file (YAML, or the JSON written by :func:`canonical_dict`).

    Raises:
        TemplateError: unreadable file, malformed YAML (with its line), or the
            first structural or semantic problem (field path and line).
    """
    path = Path(path)
    text = read_yaml_text(path, TemplateError)
    key = (str(path), hashlib.sha256(text.encode("utf-8")).digest())
    hit = _LOADED.get(key)
    if hit is None:
        data, root = read_yaml(text, str(path))
        hit = parse_template(data, path, yaml_root=root)
        if len(_LOADED) >= _LOADED_MAX:
            _LOADED.clear()
        _LOADED[key] = hit
    return hit


#: ``{(path as given, sha256 of its text): template}``: a file read again with the same bytes gives the same object.
#: A template depends only on its file's text (an imported map's street is derived from the file alone) and is frozen,
#: so the stages of one process (``make run`` runs every Dagster step in one) share one object, and with it every
#: cache kept per template object (hash, lane network, program geometry, planner yields): an imported map's load and
#: those caches cost about a second per stage otherwise. An edited file has other bytes, hence a fresh parse.
_LOADED: dict[tuple[str, bytes], WorldTemplate] = {}
_LOADED_MAX = 8


# --- catalog references --------------------------------------------------------


def _contract_get(contract: Any, key: str) -> Any:
    return contract.get(key) if isinstance(contract, Mapping) else getattr(contract, key, None)


def _contract_mounts(contract: Any) -> dict[str, tuple[float, float, float]]:
    """``{mount name: (x, y, z)}`` in the asset body frame, metres.

    A contract is the catalog's model or its YAML as a dict; either way
    ``mounts`` maps a name to something with ``translation_m``.
    """
    mounts = _contract_get(contract, "mounts") or {}
    out = {}
    for name, mount in mounts.items():
        x, y, z = _contract_get(mount, "translation_m")
        out[str(name)] = (float(x), float(y), float(z))
    return out


def _asset_errors(
    template: WorldTemplate, loc: Loc, asset: str, certified: set[str], contracts: Mapping[str, Any] | None
) -> list[TemplateError]:
    if asset in certified:
        return []
    known = contracts is not None and asset in contracts
    reason = f"{asset} exists but is not certified" if known else f"unknown asset {asset} (not a certified catalog asset)"
    return [_error(template, loc, reason)]


def validate_references(
    template: WorldTemplate,
    certified_asset_ids: set[str],
    asset_contracts: Mapping[str, Any] | None = None,
) -> list[TemplateError]:
    """Catalog checks: every instance and the ego use a certified asset; rig mounts match the ego contract.

    Args:
        certified_asset_ids: ids that passed certification.
        asset_contracts: ``{asset id: contract}`` (dict or model with
            ``mounts``); when given, each rig mount named like a contract
            mount must lie within ``MOUNT_CONTRACT_TOLERANCE_M`` of it.

    Returns:
        One error per authored instance entry (a repeated entry reports
        once), then the ego's; empty when all resolve.
    """
    errors: list[TemplateError] = []
    reported: set[int] = set()
    for inst in template.instances:
        if inst._authored_index not in reported:
            loc = ("instances", inst._authored_index, "asset")
            found = _asset_errors(template, loc, inst.asset, certified_asset_ids, asset_contracts)
            if found:
                reported.add(inst._authored_index)
                errors.extend(found)
    errors.extend(_asset_errors(template, ("ego", "asset"), template.ego.asset, certified_asset_ids, asset_contracts))
    if asset_contracts is not None:
        errors.extend(_ontology_errors(template, asset_contracts))
        if template.ego.asset in asset_contracts:
            errors.extend(_mount_errors(template, asset_contracts[template.ego.asset]))
    return errors


def _ontology_errors(template: WorldTemplate, contracts: Mapping[str, Any]) -> list[TemplateError]:
    """Assets certified against another ontology version would carry other class ids."""
    used = sorted({i.asset for i in template.instances} | {template.ego.asset})
    other = [a for a in used if a in contracts
             and _contract_get(contracts[a], "ontology_version") not in (None, template.ontology_version)]
    if not other:
        return []
    return [_error(template, ("ontology_version",),
                   f"template uses ontology {template.ontology_version}, but {', '.join(other)} use another version")]


def _mount_errors(template: WorldTemplate, contract: Any) -> list[TemplateError]:
    declared = _contract_mounts(contract)
    errors = []
    for name, mount in sorted(template.sensor_rig.mounts.items()):
        if name in declared:
            gap = math.dist(mount.translation_m, declared[name])
            if gap > MOUNT_CONTRACT_TOLERANCE_M:
                reason = (f"mount {name!r} at {list(mount.translation_m)} is {gap:.3f} m from the "
                          f"{template.ego.asset} contract mount {list(declared[name])} (tolerance {MOUNT_CONTRACT_TOLERANCE_M} m)")
                errors.append(_error(template, ("sensor_rig", "mounts", name, "translation_m"), reason))
    return errors


# --- canonical form, hashing, discovery ---------------------------------------

#: Lists whose order carries no meaning, and the key that sorts them canonically.
_ID_SORTED_SECTIONS = {"regions": "id", "lanes": "id", "affordances": "id", "signals": "id", "instances": "name",
                        "pedestrian_signals": "id"}
_SET_SECTIONS = ("actor_types", "behaviors_allowed")


def canonical_dict(template: WorldTemplate) -> dict[str, Any]:
    """The resolved template as plain JSON data, in canonical order.

    Repeats are expanded; degrees stay as authored. Sections that are sets
    (regions, lanes, instances, relations, …) are sorted, so declaration
    order never changes the hash; order that means something (polylines,
    routes, signal programs) is kept. The result re-loads with
    :func:`parse_template` to an equal template.
    """
    data = template.model_dump(mode="json")
    # Only imported templates carry provenance; leaving the key out otherwise keeps every hand-written template's hash.
    if data["provenance"] is None:
        del data["provenance"]
    for section, key in _ID_SORTED_SECTIONS.items():
        if section in data:  # an optional fact left out while unset (pedestrian_signals)
            data[section] = sorted(data[section], key=lambda item: item[key])
    data["relations"] = sorted(data["relations"], key=canonical_json)
    data["walkable"]["edges"] = sorted(sorted(edge) for edge in data["walkable"]["edges"])
    for section in _SET_SECTIONS:
        data[section] = sorted(data[section])
    env = data["environment_controls"]
    for key in env:
        env[key] = sorted(env[key])
    return data


def template_hash(template: WorldTemplate) -> str:
    """``sha256:<hex>`` of the world: the canonical dict, with the sensor rig reduced to its scenario view.

    Invariant to key order, float spelling and declaration order. The rig
    enters only through :func:`simready.world.rig_view.scenario_rig_view`
    (sensor clocks, camera mounts and frustums — what scenario acceptance
    reads); the rest of the rig is versioned by
    :func:`simready.world.rig_view.rig_hash`, so a rig-only edit leaves the
    world version, the manifests and the trajectories as they were.
    """
    key = id(template)
    hit = _TEMPLATE_HASHES.get(key)
    if hit is not None and hit[0]() is template:
        return hit[1]
    data = canonical_dict(template)
    data["sensor_rig"] = scenario_rig_view(template.sensor_rig)
    digest = content_hash(data)
    _TEMPLATE_HASHES[key] = (weakref.ref(template, lambda ref: _forget_hash(key, ref)), digest)
    return digest


#: ``{id(template): (weak reference, hash)}``: a template object's hash, computed once. A template is frozen (its
#: fields are immutable tuples and frozen models), so its hash cannot change; the large canonical dump of an imported
#: map (seconds) is then paid once per loaded template rather than by every scene, context and sample built on it.
#: Keyed by identity, not equality (comparing two templates costs a dump), and dropped when the template is freed.
_TEMPLATE_HASHES: dict[int, tuple[weakref.ref[WorldTemplate], str]] = {}


def _forget_hash(key: int, ref: weakref.ref[WorldTemplate]) -> None:
    hit = _TEMPLATE_HASHES.get(key)
    if hit is not None and hit[0] is ref:
        del _TEMPLATE_HASHES[key]


def list_template_files(directory: str | Path = paths.TEMPLATES_DIR) -> dict[str, Path]:
    """``{template id: path}`` for every ``<id>.yaml`` in ``directory``, sorted by id."""
    return {p.stem: p for p in sorted(Path(directory).glob("*.yaml"))}
