"""One world for every sensor: template + catalog + manifest + trace → :class:`SceneGeometry`.

Every static instance of the template and every actor of the manifest
becomes one :class:`~simready.raycast.body.Body` carrying its certified
render geometry (``render.obj`` in source order, pinned by the catalog's
``render_geometry.sha256``), its ontology class, its material, and its
trajectory: a constant pose for an instance, the trace's ticks for an actor.
Identifiers follow SPEC §3: ``<template>/instance:<name>`` and
``<sample>/actor:<id>``; compact ids and ``legend.json`` derive from them.

The rig is read here too, because it comes from the same inputs: a
template's ``sensor_rig`` (or a rig file in that format) names mounts on the
ego body, and each sensor names its mount. The ego actor (``role == "ego"``)
carries the rig and is cast on its own so its sensors can ignore it.

Frames (SPEC §2): an instance pose and an actor pose are ``T_world_body`` of
the body frame (x forward, y left, z up, origin at the footprint centre on
the ground), the frame the catalog's meshes are authored in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simready.common import paths
from simready.catalog.catalog import Catalog
from simready.catalog.look import SurfaceLook
from simready.common.loading import load_yaml
from simready.scenario.manifest import ScenarioManifest
from simready.sensors_hw.models import Rig, RigError
from simready.sensors_hw.trace_input import TraceInput, TraceInputError
from simready.raycast.body import Body, read_obj_triangles
from simready.raycast.geometry import SceneGeometry
from simready.raycast.meshes import static_world_vertices
from simready.artifacts.records import LegendEntry
from simready.world.identity import actor_id, build_legend
from simready.world.motion import PoseTrack
from simready.world.ontology import Ontology, load_ontology
from simready.world.template import WorldTemplate, load_template

#: Fields of a template sensor entry that belong to the rig wiring, not the sensor model.
_WIRING_FIELDS = ("type", "mount")


@dataclass(frozen=True)
class Entity:
    """Who owns a body: identity, ontology and provenance (SPEC §3).

    Attributes:
        entity_id: ``<template>/instance:<name>`` or ``<sample>/actor:<id>``.
        kind: ``instance`` (static, from the template) or ``actor`` (from the manifest and trace).
        asset_id: catalog asset, ``asset:<family>/<variant>``.
        family: asset family; semantic_class: ontology class name (None = unknown).
        class_id: ontology class id (65535 = unknown, ignore).
        geometry_hash: content hash of the render geometry.
        actor: the manifest / trace actor id (None for instances).
    """

    entity_id: str
    kind: str
    asset_id: str | None
    family: str | None
    semantic_class: str | None
    class_id: int
    geometry_hash: str
    actor: str | None = None


@dataclass(frozen=True)
class BuiltScene:
    """A world ready to observe.

    Attributes:
        scene: every body, posed over time (the geometric authority).
        entities: ``{entity id: Entity}``, sorted.
        ego_entity: the rig's carrier (sensors ignore it), or None.
        sample_id, template_id: where the identifiers come from.
    """

    scene: SceneGeometry
    entities: dict[str, Entity]
    ego_entity: str | None
    sample_id: str
    template_id: str

    def legend(self) -> list[LegendEntry]:
        """Rows of ``legend.json`` for every entity of the scene."""
        rows = build_legend({e.entity_id: (e.semantic_class, e.class_id, e.family) for e in self.entities.values()})
        ids = self.scene.compact_ids
        assert all(ids[r.entity] == r.compact_id for r in rows), "legend and scene compact ids disagree"
        return rows

    @property
    def actor_entities(self) -> dict[str, str]:
        """``{trace actor id: entity id}``."""
        return {e.actor: e.entity_id for e in self.entities.values() if e.actor is not None}

    def track(self, entity_id: str) -> PoseTrack:
        return self.scene.bodies[self.scene.body_indices([entity_id])[0]].track

    @property
    def ignore(self) -> tuple[str, ...]:
        """Entities no sensor of the rig sees (its carrier)."""
        return () if self.ego_entity is None else (self.ego_entity,)


# --- rig --------------------------------------------------------------------------


def rig_from_sensor_rig(sensor_rig: Mapping[str, Any], body: PoseTrack | None = None, source: str = "rig") -> Rig:
    """A :class:`Rig` from a template-format ``sensor_rig``: ``{mounts: {name: mount}, sensors: {name: {type,
    mount, <model fields>}}}``, each sensor naming the mount it sits on.

    Raises:
        RigError: a sensor naming a missing mount or a mount of another type, or a bad field.
    """
    mounts = dict(sensor_rig.get("mounts") or {})
    sensors = dict(sensor_rig.get("sensors") or {})
    if not sensors:
        raise RigError(source, "sensors", "the rig declares no sensors")
    rig_mounts: dict[str, Any] = {}
    rig_sensors: dict[str, Any] = {}
    for name, spec in sorted(sensors.items()):
        if not isinstance(spec, Mapping):
            raise RigError(source, f"sensors.{name}", "must be a mapping of settings")
        mount_name = spec.get("mount", name)
        if mount_name not in mounts:
            raise RigError(source, f"sensors.{name}.mount", f"references missing mount {mount_name!r}; "
                           f"the rig has {sorted(mounts)}")
        mount = dict(mounts[mount_name])
        if "type" in spec and mount.get("type") != spec["type"]:
            raise RigError(source, f"sensors.{name}.mount",
                           f"mount {mount_name!r} is a {mount.get('type')} mount, sensor is a {spec['type']}")
        mount.pop("parent", None)
        rig_mounts[name] = mount
        rig_sensors[name] = {k: v for k, v in spec.items() if k not in _WIRING_FIELDS}
    return Rig.from_dict({"mounts": rig_mounts, "sensors": rig_sensors}, body=body, source=source)


def template_rig_data(template: WorldTemplate) -> dict[str, Any]:
    """The template's ``sensor_rig`` as plain data (what :func:`rig_from_sensor_rig` reads)."""
    return template.sensor_rig.model_dump(mode="json")


def load_rig_data(spec: str | Path, templates_dir: str | Path | None = None) -> tuple[dict[str, Any], str]:
    """Rig data and its source label from ``--rig``: a template id, a template file, or a rig file.

    A rig file is YAML/JSON holding ``mounts`` and ``sensors`` at the top or
    under ``sensor_rig``. A template (by id or path) is loaded and validated
    as a template, so its rig is the validated one.
    """
    path = Path(spec)
    if not path.suffix and not path.exists():
        path = Path(templates_dir or paths.TEMPLATES_DIR) / f"{spec}.yaml"
    if not path.is_file():
        raise RigError(str(spec), "", "no such rig or template file (nor a template id)")
    data = load_yaml(path, RigError)
    if not isinstance(data, Mapping):
        raise RigError(path, "", "a rig file is a mapping with mounts and sensors")
    if "lanes" in data and "sensor_rig" in data:  # a whole template
        return template_rig_data(load_template(path)), str(path)
    rig = data.get("sensor_rig", data)
    if not isinstance(rig, Mapping) or "sensors" not in rig:
        raise RigError(path, "", "a rig file needs 'mounts' and 'sensors' (at the top or under 'sensor_rig')")
    return dict(rig), str(path)


# --- scene ------------------------------------------------------------------------


def _ego_actor(manifest: ScenarioManifest) -> str | None:
    egos = [a.id for a in manifest.actors if a.role == "ego"]
    return egos[0] if egos else None


#: The static instances' bodies and entities of recent templates: (template, catalog, the facts they read, the
#: pairs). A sample's base and branches (and a batch's samples of one template) are built from one template and
#: catalog; on a street of thousands of instances these are most of a build. Templates are frozen models and
#: bodies and entities frozen, so sharing them changes no byte. A catalog loaded again (each stage loads its own)
#: counts as the same when it is read from the same folder with equal entries for the template's assets, so a
#: process keeps one set per template across stages and batches (:func:`prepare_statics`).
_STATICS: list[tuple[WorldTemplate, Catalog, tuple[Any, ...], list[tuple[Body, Entity]]]] = []
MAX_CACHED_STATICS = 4


def _same_catalog(a: Catalog, b: Catalog, assets: Iterable[str]) -> bool:
    return a is b or (Path(a.generated_dir) == Path(b.generated_dir)
                      and all(a.entry(asset) == b.entry(asset) for asset in assets))


def _cached_statics(template: WorldTemplate, catalog: Catalog,
                    facts: tuple[Any, ...]) -> list[tuple[Body, Entity]] | None:
    for t, c, f, pairs in _STATICS:
        if t is template and f == facts and _same_catalog(c, catalog, (fact[0] for fact in facts)):
            return pairs
    return None


def _keep_statics(template: WorldTemplate, catalog: Catalog, facts: tuple[Any, ...],
                  pairs: list[tuple[Body, Entity]]) -> None:
    _STATICS.append((template, catalog, facts, pairs))
    del _STATICS[:-MAX_CACHED_STATICS]


def _statics(template: WorldTemplate, catalog: Catalog, ontology: Ontology,
             body_and_entity: Callable[..., tuple[Body, Entity]]) -> list[tuple[Body, Entity]]:
    """The bodies and entities of the template's static instances (kept per template: :data:`_STATICS`)."""
    # What the static bodies read besides the template: each asset's geometry, look source and class id.
    facts = tuple((asset, catalog.entry(asset).render_geometry.sha256,
                   ontology.class_id(catalog.entry(asset).semantic_class))
                  for asset in dict.fromkeys(inst.asset for inst in template.instances))
    statics = _cached_statics(template, catalog, facts)
    if statics is None:
        statics = [body_and_entity(template.instance_id(inst.name), "instance", inst.asset,
                                   PoseTrack.constant(inst.pose.matrix())) for inst in template.instances]
        _keep_statics(template, catalog, facts, statics)
    return statics


def prepare_statics(template: WorldTemplate, catalog: Catalog, ontology: Ontology | None = None) -> int:
    """Build (or find) the template's static bodies in this process before its samples are built, so the
    workers a stage forks share them instead of each building its own; returns how many there are."""
    ontology = ontology or load_ontology()
    statics = _statics(template, catalog, ontology, _body_maker(catalog, ontology))
    # Their world vertices too (kept per body object), which every scene built from them reads: computed here
    # once rather than in each forked worker (about a second on a street of thousands of instances).
    for body, _ in statics:
        static_world_vertices(body)
    return len(statics)


def _body_maker(catalog: Catalog, ontology: Ontology) -> Callable[..., tuple[Body, Entity]]:
    """``body_and_entity(entity, kind, asset, track, actor=None)``: one body and its entity, the asset's mesh
    and look read once per maker."""
    meshes: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    looks: dict[str, SurfaceLook | None] = {}

    def mesh(asset: str) -> tuple[np.ndarray, np.ndarray]:
        if asset not in meshes:
            entry = catalog.entry(asset)
            meshes[asset] = read_obj_triangles(catalog.entry_file(asset, entry.render_geometry.file))
        return meshes[asset]

    def body_and_entity(entity: str, kind: str, asset: str, track: PoseTrack,
                        actor: str | None = None) -> tuple[Body, Entity]:
        entry = catalog.entry(asset)
        vertices, faces = mesh(asset)
        cls = entry.semantic_class
        class_id = ontology.class_id(cls)
        e = Entity(entity, kind, asset, entry.family, cls if class_id != ontology.unknown_class_id else None,
                   class_id, entry.render_geometry.sha256, actor)
        if asset not in looks:
            looks[asset] = catalog.look(asset)
        b = Body(entity, vertices, faces, entry.render_geometry.sha256, entry.render_geometry.file, class_id,
                 entry.material.albedo_rgb, float(entry.material.reflectance), track, looks[asset])
        return b, e

    return body_and_entity


def build_scene(template: WorldTemplate, catalog: Catalog, manifest: ScenarioManifest, trace: TraceInput,
                ontology: "Ontology | None" = None) -> BuiltScene:
    """Bodies for every static instance of ``template`` and every actor of ``manifest``, posed by ``trace``.

    Raises:
        TraceInputError: the trace and the manifest disagree on the actors, or
            the trace is of another template.
        CatalogError: an asset missing from the catalog.
    """
    ontology = ontology or load_ontology()
    if trace.header.get("template_id") not in (None, template.id):
        raise TraceInputError(trace.source, "header.template_id",
                              f"trace is of template {trace.header['template_id']!r}, not {template.id!r}")
    if manifest.template_id != template.id:
        raise TraceInputError(trace.source, "manifest.template_id",
                              f"manifest is of template {manifest.template_id!r}, not {template.id!r}")
    manifest_actors = {a.id: a for a in manifest.actors}
    extra = sorted(set(trace.actor_ids) - set(manifest_actors))
    if extra:
        raise TraceInputError(trace.source, "ticks.actor_id", f"actors {extra} are not in the manifest")
    absent = sorted(set(manifest_actors) - set(trace.actor_ids))
    if absent:
        raise TraceInputError(trace.source, "ticks.actor_id", f"manifest actors {absent} have no rows in the trace")

    body_and_entity = _body_maker(catalog, ontology)

    bodies: list[Body] = []
    entities: dict[str, Entity] = {}
    statics = _statics(template, catalog, ontology, body_and_entity)
    for b, e in statics:
        bodies.append(b)
        entities[e.entity_id] = e
    tracks = trace.tracks()
    for name in sorted(manifest_actors):
        b, e = body_and_entity(actor_id(manifest.sample_id, name), "actor", manifest_actors[name].asset_id,
                               tracks[name], actor=name)
        bodies.append(b)
        entities[e.entity_id] = e
    ego = _ego_actor(manifest)
    ego_entity = None if ego is None else actor_id(manifest.sample_id, ego)
    scene = SceneGeometry(bodies, separate=[ego_entity] if ego_entity else [])
    return BuiltScene(scene, dict(sorted(entities.items())), ego_entity, manifest.sample_id, template.id)


def ego_track(built: BuiltScene, source: str = "manifest") -> PoseTrack:
    """The rig's carrier trajectory; a scene without an ego cannot carry a rig."""
    if built.ego_entity is None:
        raise RigError(source, "actors", "no actor has role 'ego' to carry the sensor rig")
    return built.track(built.ego_entity)
