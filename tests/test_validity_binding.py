"""``simready validate`` and the DAG's gate refuse a sample whose files do not belong together (issue 14):
a manifest beside another sample's trace, a mutated template id or hash, an observation folder rendered for
another sample, a file changed after its hash was recorded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from simready.cli import main
from simready.common.errors import IntegrityError
from simready.common.hashing import file_sha256
from simready.artifacts.layout import BatchDir, SampleDir
from simready.measurement.batch import observe_sample_dir
from simready.artifacts.records import Results
from simready.testing.synthetic import write_street_sample
from simready.validity.batch import validate_sample_dir
from tests.fixtures.samples import SMALL, TLA, WINDOW, change_one_value, make_sample
from tests.fixtures.sim import catalog, template


def _refused(sample: Path, tmp_path: Path, capsys, *fragments: str) -> str:
    out = tmp_path / "report.json"
    assert main(["validate", str(sample), "--out", str(out), "--trajectory-only"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    for fragment in fragments:
        assert fragment in err, err
    assert not out.exists()
    return err


@pytest.fixture(scope="module")
def street(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("street")
    write_street_sample(root / "street-000003", "street-000003", observations=False)
    return write_street_sample(root / "street-000000", "street-000000", observations=False)


@pytest.fixture
def s(street, tmp_path) -> SampleDir:
    return SampleDir(Path(shutil.copytree(street, tmp_path / street.name)))


def test_own_manifest_and_trace_validate(s, tmp_path, capsys) -> None:
    assert main(["validate", str(s.root), "--out", str(tmp_path / "r.json"), "--trajectory-only"]) == 0


def test_another_samples_manifest_beside_the_trace_is_refused(s, street, tmp_path, capsys) -> None:
    shutil.copy(SampleDir(street.parent / "street-000003").manifest, s.manifest)
    _refused(s.root, tmp_path, capsys, f"{s.trace}: header.sample_id: is 'street-000000', but {s.manifest} gives 'street-000003'")


@pytest.mark.parametrize("field, value", [("template_id", "/etc/passwd"), ("template_id", "street2"),
                                          ("template_hash", "sha256:" + "0" * 64)])
def test_mutated_template_identity_is_refused(s, tmp_path, capsys, field, value) -> None:
    manifest = json.loads(s.manifest.read_text())
    manifest[field] = value
    s.manifest.write_text(json.dumps(manifest))
    _refused(s.root, tmp_path, capsys, field)


def test_mutated_sample_id_is_refused(s, tmp_path, capsys) -> None:
    manifest = json.loads(s.manifest.read_text())
    manifest["sample_id"] = "street-000009"
    s.manifest.write_text(json.dumps(manifest))
    _refused(s.root, tmp_path, capsys, "sample_id")


def test_manifest_not_the_one_batch_json_recorded_is_refused(s, tmp_path, capsys) -> None:
    BatchDir(s.root.parent).record.write_text(json.dumps({"samples": {s.sample_id: "sha256:" + "1" * 64}}))
    _refused(s.root, tmp_path, capsys, f"{s.manifest}: sha256: expected sha256:{'1' * 64} (recorded in ")


# --- a real sample: simulated, branched and observed ---------------------------------------------------------


@pytest.fixture(scope="module")
def observed(tmp_path_factory) -> Path:
    d = make_sample(tmp_path_factory.mktemp("observed"))
    observe_sample_dir(d, template(TLA), catalog(), window=WINDOW, overrides=SMALL, video=False)
    return d


@pytest.fixture
def real(observed, tmp_path) -> SampleDir:
    return SampleDir(Path(shutil.copytree(observed, tmp_path / observed.name)))


def _validate(sample: SampleDir, tmp_path: Path) -> int:
    return main(["validate", str(sample.root), "--out", str(tmp_path / "r.json")])


def test_real_sample_is_bound(real, tmp_path, capsys) -> None:
    assert _validate(real, tmp_path) in (0, 2)
    assert validate_sample_dir(real.root, None)["sample"] == real.sample_id


def test_render_json_of_another_sample_is_refused(real, tmp_path, capsys) -> None:
    render = json.loads(real.observations.render.read_text())
    render["sample_id"] = "rc3-ped-000003"
    real.observations.render.write_text(json.dumps(render))
    assert _validate(real, tmp_path) == 1
    err = capsys.readouterr().err
    # results.json recorded the render.json it wrote; the edited one no longer matches it
    assert err.startswith(f"error: {real.observations.render}: sha256: expected ") and err.count("\n") == 1


def test_render_json_naming_another_template_is_refused(real, tmp_path, capsys) -> None:
    render = json.loads(real.observations.render.read_text())
    render["template_id"] = "/etc/passwd"
    real.observations.render.write_text(json.dumps(render))
    # with results.json updated to match, the binding itself refuses it
    results = Results.read(real.observations.results)
    for f in results.files:
        if f.path == real.observations.render.name:
            f.sha256 = file_sha256(str(real.observations.render))
    real.observations.results.write_text(json.dumps(results.dump()))
    assert _validate(real, tmp_path) == 1
    err = capsys.readouterr().err
    assert err == f"error: {real.observations.render}: template_id: is '/etc/passwd', but {real.manifest} gives '{TLA}'\n"


def test_one_changed_value_in_the_trace_is_refused(real, tmp_path, capsys) -> None:
    change_one_value(real.trace)
    assert _validate(real, tmp_path) == 1
    assert capsys.readouterr().err.startswith(f"error: {real.trace}: sha256: expected ")
    with pytest.raises(IntegrityError, match="sha256: expected"):
        validate_sample_dir(real.root, None)


def test_one_changed_byte_in_a_lidar_sweep_is_refused(real, tmp_path, capsys) -> None:
    entry = next(f for f in Results.read(real.observations.results).files if f.pass_name == "lidar")
    ply = real.observations.file(entry.path)
    data = bytearray(ply.read_bytes())
    data[-1] ^= 1
    ply.write_bytes(bytes(data))
    assert _validate(real, tmp_path) == 1
    assert capsys.readouterr().err.startswith(f"error: {ply}: sha256: expected {entry.sha256} ")


def test_branch_trace_of_another_sample_is_refused_by_the_gate(real) -> None:
    label = real.branches()[0].label
    trace = real.branch(label).trace
    table = pq.read_table(trace)
    header = json.loads(table.schema.metadata[b"simready.header"])
    header["sample_id"] = "tla-lead-000003"
    pq.write_table(table.replace_schema_metadata({**table.schema.metadata, b"simready.header": json.dumps(header)}), trace)
    with pytest.raises(IntegrityError, match=rf"{trace}: header.sample_id: is 'tla-lead-000003'"):
        validate_sample_dir(real.root, None)
