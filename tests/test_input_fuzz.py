"""Standing fuzz test (issue 14): every loader and every CLI entry point that reads a file.

Each example mutates a good input (truncate, flip, insert, delete bytes) and
asserts what a user may rely on: the loader returns or raises one typed
one-line :class:`~simready.common.errors.SimreadyError`; the command exits 0, 1 or 2
with at most one line on stderr and no traceback, and writes nothing outside
its destination. Bounded (few examples, a deadline per example) so the file
runs in well under 30 s on two cores.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simready.common import paths
from simready.catalog.generate import ENTRY_FILE
from simready.common.errors import SimreadyError
from simready.common.loading import parse_json, parse_yaml
from tests.fixtures.catalog import VAN, entry_dir_of
from tests.fixtures.fuzz import FEW, FUZZ, mutate, mutations, run_cli, workspace
from tests.fixtures.loaders import LOADERS, Loader


def _one_line(exc: SimreadyError) -> None:
    assert "\n" not in exc.one_line() and exc.reason


# --- loaders --------------------------------------------------------------------------


@pytest.mark.parametrize("loader", LOADERS, ids=[x.name for x in LOADERS])
def test_loader_fuzz(loader: Loader, generated_catalog: Path) -> None:  # noqa: F811
    good = loader.good(generated_catalog)

    @FUZZ
    @given(ops=mutations)
    def run(ops: list[tuple[str, float, bytes]]) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            (folder / loader.file_name).write_bytes(mutate(good, ops))
            try:
                loader.load(folder)
            except SimreadyError as exc:
                _one_line(exc)
            assert sorted(p.name for p in folder.iterdir()) == [loader.file_name]

    run()


@FUZZ
@given(text=st.text(alphabet=st.sampled_from(list("[]{}:,-&*!|>'\"#\n \tab01.eE\u0430")), max_size=200))
def test_parsers_on_random_text(text: str) -> None:
    for parse in (parse_yaml, parse_json):
        try:
            parse(text, "f")
        except SimreadyError as exc:
            _one_line(exc)


# --- command-line entry points --------------------------------------------------------


TEMPLATE = (paths.TEMPLATES_DIR / "residential_crosswalk_v3.yaml").read_bytes()


@settings(FEW, max_examples=3, deadline=15000)  # each run certifies the whole catalog first (~2 s)
@given(ops=mutations)
def test_cli_template_validate(ops: list[tuple[str, float, bytes]]) -> None:
    with workspace({"t.yaml": mutate(TEMPLATE, ops)}) as root:
        rc, _ = run_cli(["template", "validate", str(root / "t.yaml")])
        assert rc in (0, 1)


@FEW
@given(ops=mutations)
def test_cli_scenario_sample_template(ops: list[tuple[str, float, bytes]]) -> None:
    with workspace({"t.yaml": mutate(TEMPLATE, ops)}) as root:
        rc, _ = run_cli(["scenario", "sample", "--template", str(root / "t.yaml"), "--intent",
                         "pedestrian_emerges_behind_van", "--n", "0", "--out", str(root / "out"), "--quiet"])
        assert rc in (0, 1)


def test_cli_catalog_certify(generated_catalog: Path, tmp_path: Path) -> None:  # noqa: F811
    good = (entry_dir_of(generated_catalog, VAN) / ENTRY_FILE).read_bytes()
    catalog = tmp_path / "generated"
    shutil.copytree(generated_catalog, catalog)
    entry = entry_dir_of(catalog, VAN) / ENTRY_FILE

    @FEW
    @given(ops=mutations)
    def run(ops: list[tuple[str, float, bytes]]) -> None:
        entry.write_bytes(mutate(good, ops))
        before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
        rc, _ = run_cli(["catalog", "certify", str(catalog)])
        assert rc in (0, 1)
        assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before

    run()


@pytest.fixture(scope="module")
def real_sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    """(manifest bytes, trace bytes) of the first accepted crossing sample."""
    from simready.scenario.generator import generate
    from simready.scenario.manifest import canonicalize, manifest_bytes

    (manifest,) = generate("residential_crosswalk_v3", "pedestrian_emerges_behind_van", 1).manifests
    root = tmp_path_factory.mktemp("sample")
    (root / "m.json").write_bytes(manifest_bytes(canonicalize(manifest)))
    rc, err = run_cli(["sim", "run", str(root / "m.json"), "--out", str(root / "t.parquet"), "--quiet"])
    assert rc in (0, 2), err
    return (root / "m.json").read_bytes(), (root / "t.parquet").read_bytes()


def test_cli_sim_run(real_sample: tuple[bytes, bytes]) -> None:
    good = real_sample[0]

    @settings(FEW, deadline=15000)  # an intact manifest simulates its whole clip
    @given(ops=mutations)
    def run(ops: list[tuple[str, float, bytes]]) -> None:
        with workspace({"m.json": mutate(good, ops)}) as root:
            rc, _ = run_cli(["sim", "run", str(root / "m.json"), "--out", str(root / "out.parquet"), "--quiet"])
            assert rc in (0, 1, 2)

    run()


def test_cli_sim_inspect(real_sample: tuple[bytes, bytes]) -> None:
    good = real_sample[1]

    @FUZZ
    @given(ops=mutations)
    def run(ops: list[tuple[str, float, bytes]]) -> None:
        with workspace({"t.parquet": mutate(good, ops)}) as root:
            rc, _ = run_cli(["sim", "inspect", str(root / "t.parquet")])
            assert rc in (0, 1)

    run()


def test_cli_validate(real_sample: tuple[bytes, bytes]) -> None:
    manifest, trace = real_sample

    @FEW
    @given(ops=mutations, target=st.sampled_from(["manifest", "trace"]))
    def run(ops: list[tuple[str, float, bytes]], target: str) -> None:
        files = {"s/manifest.json": manifest, "s/trace.parquet": trace}
        key = "s/manifest.json" if target == "manifest" else "s/trace.parquet"
        files[key] = mutate(files[key], ops)
        with workspace(files) as root:
            rc, _ = run_cli(["validate", str(root / "s"), "--out", str(root / "out.json"), "--trajectory-only"])
            assert rc in (0, 1, 2)

    run()
