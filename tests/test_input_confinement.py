"""Every identifier that becomes a path, and every path read from a file, stays inside its root.

Regression tests for issue 14's path escape through the catalog (a contract with
``family: ".."``; an ``entry.json`` naming ``/etc/hostname``), and the same
attacks (``..``, absolute paths, symlinks, unicode look-alikes) against each
identifier: catalog family/variant, template id, sample id, batch key, sensor
name, branch label.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from simready.common import paths
from simready.catalog.certify import certify_entry
from simready.catalog.contract import load_contract
from simready.catalog.generate import ENTRY_FILE, INDEX_FILE, generate_catalog, read_index
from simready.common.errors import CatalogError, ManifestError, SimreadyError, TemplateError
from simready.common.identifiers import MAX_IDENTIFIER_CHARS, check_identifier, confine, is_identifier
from simready.artifacts.layout import ArtifactLayout, ObservationDir, SampleDir
from simready.scenario.manifest import load_manifest, manifest_bytes
from simready.scenario.suite import SuiteError, batch_index
from simready.world.template import load_template
from tests.fixtures.catalog import VAN, entry_dir_of
from tests.fixtures.manifests import make_manifest

CYRILLIC_A = "\u0430"
FULLWIDTH_DOT = "\uff0e"
#: Names no path may be built from: traversal, absolute, separators, hidden, look-alikes, control bytes, length.
BAD_NAMES = [
    "..", ".", "", "../x", "a/b", "a\\b", "/etc/passwd", ".hidden", "-flag", f"v{CYRILLIC_A}n",
    f"{FULLWIDTH_DOT}{FULLWIDTH_DOT}", "a\x00b", "a\nb", "tab\t", "x" * (MAX_IDENTIFIER_CHARS + 1), "caf\u00e9",
]
GOOD_NAMES = ["delivery_van", "white", "b0000", "rc3-ped-000003", "front_camera", "brake", "v1.2", "X" * MAX_IDENTIFIER_CHARS]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_identifier_refused(name: str) -> None:
    assert not is_identifier(name)
    with pytest.raises(SimreadyError, match="is not an identifier"):
        check_identifier(name, "src", "field")


@pytest.mark.parametrize("name", GOOD_NAMES)
def test_good_identifier_accepted(name: str) -> None:
    assert check_identifier(name, "src", "field") == name


# --- the layout: every identifier it puts in a path ----------------------------------


@pytest.mark.parametrize("name", BAD_NAMES)
def test_layout_refuses_bad_names(tmp_path: Path, name: str) -> None:
    layout = ArtifactLayout(tmp_path)
    batch = ArtifactLayout(tmp_path).batch("t", "b0000")
    for build in (
        lambda: layout.template(name),                               # template id
        lambda: layout.batch(name, "b0000"),
        lambda: layout.batch("t", name),                             # batch key
        lambda: layout.reference(name),
        lambda: layout.rejection_log(name),
        lambda: batch.sample(name),                                  # sample id
        lambda: layout.reference("t").sample(name),
        lambda: SampleDir(tmp_path).branch(name),                    # branch label
        lambda: ObservationDir.frame_name(name, 3, "rgb"),          # sensor name
        lambda: ObservationDir.video_name(name),
        lambda: ObservationDir.camera_poses_name(name),
    ):
        with pytest.raises(SimreadyError, match="is not an identifier"):
            build()


@pytest.mark.parametrize("key", ["b", "b-1", "b\u0663", "b" + "1" * 9, "../b0000", "B0000"])
def test_batch_key_refused(key: str) -> None:
    with pytest.raises(SuiteError):
        batch_index(key)


# --- catalog: family/variant and the files entry.json names ---------------------------


@pytest.mark.parametrize("name", ["..", "../../tmp", "/abs", f"van{CYRILLIC_A}", f"{FULLWIDTH_DOT}{FULLWIDTH_DOT}"])
@pytest.mark.parametrize("field", ["family", "variant"])
def test_contract_family_variant_must_be_identifiers(tmp_path: Path, field: str, name: str) -> None:
    raw = yaml.safe_load((paths.CATALOG_CONTRACTS_DIR / "delivery_van__white.yaml").read_text())
    raw[field] = name
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    (contracts / "evil.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(CatalogError) as info:
        load_contract(contracts / "evil.yaml")
    assert info.value.field == field


def test_dotdot_contract_writes_nothing_outside(tmp_path: Path) -> None:
    """Issue 14 attack: ``family: ".."``, ``variant: ".."`` made certify write into data/."""
    raw = yaml.safe_load((paths.CATALOG_CONTRACTS_DIR / "delivery_van__white.yaml").read_text())
    raw.update(family="..", variant="..")
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    (contracts / "..__...yaml").write_text(yaml.safe_dump(raw))
    out = tmp_path / "a" / "generated"
    with pytest.raises(CatalogError, match="family: .*'\.\.' is not an identifier"):
        generate_catalog(contracts, out)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == ["contracts", "contracts/..__...yaml"]


def _copy_entry(generated: Path, tmp_path: Path) -> Path:
    entry_dir = tmp_path / "delivery_van" / "white"
    shutil.copytree(entry_dir_of(generated, VAN), entry_dir)
    return entry_dir


def _rewrite_render_file(entry_dir: Path, file: str) -> None:
    data = json.loads((entry_dir / ENTRY_FILE).read_text())
    data["render_geometry"]["file"] = file
    (entry_dir / ENTRY_FILE).write_text(json.dumps(data))


@pytest.mark.parametrize("file", ["/etc/hostname", "../../../../etc/hostname", "..\\..\\x.obj", "C:/x.obj"])
def test_certify_never_reads_outside_the_entry(generated_catalog: Path, tmp_path: Path, file: str) -> None:  # noqa: F811
    """Issue 14 attack: an entry.json naming /etc/hostname was read and its hash reported."""
    entry_dir = _copy_entry(generated_catalog, tmp_path)
    _rewrite_render_file(entry_dir, file)
    result = certify_entry(entry_dir)
    assert not result.passed
    messages = " ".join(r.message for r in result.reasons)
    assert "absolute" in messages or "'..' part" in messages
    assert "sha256" not in messages.split("is absolute")[0].split("has a '..' part")[0]


def test_certify_refuses_symlink_out_of_the_entry(generated_catalog: Path, tmp_path: Path) -> None:  # noqa: F811
    entry_dir = _copy_entry(generated_catalog, tmp_path)
    outside = tmp_path / "outside.obj"
    shutil.copy(entry_dir / "render.obj", outside)
    (entry_dir / "render.obj").unlink()
    (entry_dir / "render.obj").symlink_to(outside)
    result = certify_entry(entry_dir)
    assert any("through a symlink" in r.message for r in result.reasons)


def test_confine_allows_inside_and_symlink_inside(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "sub" / "f")
    assert confine(tmp_path, "sub/f", "s", "f") == (tmp_path / "sub" / "f").resolve()
    assert confine(tmp_path, "link", "s", "f") == (tmp_path / "sub" / "f").resolve()
    for bad in ["", "/etc/passwd", "../x", "sub/../../x", "a\x00b"]:
        with pytest.raises(SimreadyError):
            confine(tmp_path, bad, "s", "f")


def _index_with_rows(generated: Path, tmp_path: Path, rows: list[dict]) -> Path:
    out = tmp_path / "generated"
    out.mkdir()
    index = json.loads((generated / INDEX_FILE).read_text())
    index["entries"] = rows
    (out / INDEX_FILE).write_text(json.dumps(index))
    return out


@pytest.mark.parametrize("directory", ["..", "/etc", "../outside/x", f"delivery_van/wh{CYRILLIC_A}te/../../.."])
def test_index_dir_confined(generated_catalog: Path, tmp_path: Path, directory: str) -> None:  # noqa: F811
    row = dict(json.loads((generated_catalog / INDEX_FILE).read_text())["entries"][0], dir=directory)
    with pytest.raises(CatalogError, match=r"entries\[0\]\.dir"):
        read_index(_index_with_rows(generated_catalog, tmp_path, [row]))


def test_index_symlinked_dir_refused(generated_catalog: Path, tmp_path: Path) -> None:  # noqa: F811
    row = dict(json.loads((generated_catalog / INDEX_FILE).read_text())["entries"][0], dir="evil")
    out = _index_with_rows(generated_catalog, tmp_path, [row])
    (out / "evil").symlink_to(generated_catalog)
    with pytest.raises(CatalogError, match="through a symlink"):
        read_index(out)


def test_duplicated_index_row_refused(generated_catalog: Path, tmp_path: Path) -> None:  # noqa: F811
    """Issue 14 attack: a duplicated catalog_index.json row gave "16/16 certified"."""
    rows = json.loads((generated_catalog / INDEX_FILE).read_text())["entries"]
    with pytest.raises(CatalogError, match="listed twice"):
        read_index(_index_with_rows(generated_catalog, tmp_path, [*rows, rows[0]]))


# --- template id, sensor names, manifest ids ------------------------------------------


def _template_with(tmp_path: Path, edit) -> Path:
    doc = yaml.safe_load((paths.TEMPLATES_DIR / "residential_crosswalk_v3.yaml").read_text())
    edit(doc)
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.mark.parametrize("name", ["../../etc", "/abs", f"resid{CYRILLIC_A}ntial", f"{FULLWIDTH_DOT}{FULLWIDTH_DOT}", "_x"])
def test_template_id_must_be_identifier(tmp_path: Path, name: str) -> None:
    path = _template_with(tmp_path, lambda d: d.update(id=name))
    with pytest.raises(TemplateError) as info:
        load_template(path)
    assert info.value.field == "id"


@pytest.mark.parametrize("name", ["../cam", "/abs", f"front_c{CYRILLIC_A}mera", ".."])
def test_sensor_name_must_be_identifier(tmp_path: Path, name: str) -> None:
    def rename(doc: dict) -> None:
        sensors = doc["sensor_rig"]["sensors"]
        first = next(iter(sensors))
        sensors[name] = sensors.pop(first)

    with pytest.raises(TemplateError) as info:
        load_template(_template_with(tmp_path, rename))
    assert info.value.field.startswith("sensor_rig.sensors")


@pytest.mark.parametrize("field", ["sample_id", "template_id"])
@pytest.mark.parametrize("value", ["/etc/passwd", "../x", f"rc3{CYRILLIC_A}", f"{FULLWIDTH_DOT}{FULLWIDTH_DOT}"])
def test_manifest_ids_must_be_identifiers(tmp_path: Path, field: str, value: str) -> None:
    """Issue 14: a manifest's template_id of /etc/passwd was accepted."""
    data = json.loads(manifest_bytes(make_manifest()))
    data[field] = value
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    assert info.value.field == field


# --- files named inside files: results.json names, catalog mesh files -----------------


@pytest.mark.parametrize("name", ["/etc/hostname", "../../x.png", "cam/../../x.png", ""])
def test_observation_file_names_confined(tmp_path: Path, name: str) -> None:
    with pytest.raises(SimreadyError):
        ObservationDir(tmp_path / "obs").file(name)


def test_observation_file_symlink_out_refused(tmp_path: Path) -> None:
    obs = tmp_path / "obs"
    (obs / "cam").mkdir(parents=True)
    (obs / "cam" / "00000000.rgb.png").symlink_to(tmp_path / "elsewhere.png")
    with pytest.raises(SimreadyError, match="through a symlink"):
        ObservationDir(obs).file("cam/00000000.rgb.png")
    assert ObservationDir(obs).file("cam/00000001.rgb.png") == obs / "cam" / "00000001.rgb.png"


def test_catalog_mesh_files_confined(generated_catalog: Path) -> None:  # noqa: F811
    from simready.catalog.catalog import Catalog, load_entry

    entry = load_entry(entry_dir_of(generated_catalog, VAN))
    evil = entry.model_copy(update={"render_geometry": entry.render_geometry.model_copy(update={"file": "/etc/hostname"})})
    catalog = Catalog(generated_catalog, {VAN: evil})
    with pytest.raises(CatalogError, match="is absolute"):
        catalog.render_mesh(VAN)
    assert catalog.entry_file(VAN, "render.obj") == entry_dir_of(generated_catalog, VAN) / "render.obj"
