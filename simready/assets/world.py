"""``world_templates``: parsed, validated, content-hashed template versions (SPEC §5)."""

import dagster as dg

from simready.assets.catalog import certified_assets
from simready.assets.inputs import template_sources
from simready.assets.metadata import artifact_link, picture, table
from simready.assets.partitions import template_partitions
from simready.assets.stage_io import source_catalog, source_template
from simready.common.atomic import json_bytes
from simready.artifacts.layout import ArtifactLayout
from simready.resources import ArtifactStore, SourceData
from simready.world.rig_view import rig_record, rig_table
from simready.world.template_build import build_template_version

#: templates-3 / rig-2: the scenario view's camera readout is (height − 1)·line time (issue 12).
TEMPLATES_CODE_VERSION = "templates-3"
RIG_CODE_VERSION = "rig-2"


def read_certification(store: ArtifactStore) -> dict:
    key = store.layout.certification
    if not store.exists(key):
        raise dg.Failure(f"{store.url(key)}: missing; materialize certified_assets first")
    return store.read_json(key)


@dg.asset(
    group_name="world",
    kinds={"python"},
    partitions_def=template_partitions,
    deps=[template_sources, certified_assets],
    code_version=TEMPLATES_CODE_VERSION,
    description="One world template version per partition: validated, canonical, hashed, plotted.",
)
def world_templates(context: dg.AssetExecutionContext, store: ArtifactStore, source: SourceData) -> dg.MaterializeResult:
    template_id = context.partition_key
    certification = read_certification(store)
    certified = {e["id"] for e in certification["entries"] if e["passed"]}
    catalog = source_catalog(source)
    with store.scratch() as scratch:
        staged = ArtifactLayout(scratch).template(template_id)
        build = build_template_version(
            source.template_file(template_id), staged, certified, catalog.contracts(), catalog.footprints()
        )
        store.publish(store.layout.template_dir(template_id), staged.root)
    for err in build.errors:
        context.log.error(err)
    metadata: dict[str, object] = {
        "valid": build.valid,
        "template_hash": build.template_hash or "(unparsed)",
        "validation": artifact_link(store, store.layout.template_validation(template_id)),
        "errors": dg.MetadataValue.md("\n".join(f"- {e}" for e in build.errors) or "none"),
    }
    if build.template is not None:
        metadata["plot"] = picture(store, store.layout.template_plot(template_id), f"{template_id} top-down")
        metadata["template_json"] = artifact_link(store, store.layout.template_record(template_id))
        metadata["contents"] = table([{"what": "regions", "count": len(build.template.regions)},
                                      {"what": "lanes", "count": len(build.template.lanes)},
                                      {"what": "instances", "count": len(build.template.instances)}],
                                     [("what", "string"), ("count", "int")])
    return dg.MaterializeResult(data_version=dg.DataVersion(build.data_version), metadata=metadata)


@dg.asset(
    group_name="world",
    kinds={"python"},
    partitions_def=template_partitions,
    deps=[template_sources, world_templates],
    code_version=RIG_CODE_VERSION,
    description="The template's sensor rig (mounts and sensor settings), versioned apart from the world: "
                "a rig-only edit marks observations stale, not trajectories.",
)
def sensor_rigs(context: dg.AssetExecutionContext, store: ArtifactStore, source: SourceData) -> dg.MaterializeResult:
    template_id = context.partition_key
    template = source_template(source, template_id)
    record = rig_record(template)
    key = store.layout.rig(template_id)
    store.write_bytes(key, json_bytes(record))
    rows = rig_table(template)
    return dg.MaterializeResult(
        data_version=dg.DataVersion(record["rig_hash"]),
        metadata={"rig_hash": record["rig_hash"], "sensors": len(rows), "rig_json": artifact_link(store, key),
                  "rig": table(rows, [("sensor", "string"), ("type", "string"), ("mount", "string"),
                                      ("mount_xyz_m", "string"), ("rate_hz", "string"), ("phase_s", "string"),
                                      ("settings", "string")])},
    )
