"""Standing fuzz test (issue 14): every loader and every CLI entry point that reads a file.

Each example mutates a good input (truncate, flip, insert, delete bytes) and
asserts what a user may rely on: the loader returns or raises one typed
one-line :class:`~simready.errors.SimreadyError`; the command exits 0, 1 or 2
with at most one line on stderr and no traceback, and writes nothing outside
its destination. Bounded (few examples, a deadline per example) so the file
runs in well under 30 s on two cores.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simready import paths
from simready.catalog.generate import ENTRY_FILE
from simready.cli import main
from simready.errors import SimreadyError
from simready.loading import parse_json, parse_yaml
from tests.fixtures.catalog import VAN, entry_dir_of
from tests.test_loader_limits import LOADERS, Loader

FUZZ = settings(max_examples=20, deadline=3000, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
FEW = settings(FUZZ, max_examples=6)

_OPS = ("truncate", "flip", "insert", "delete", "dup_line")
mutations = st.lists(
    st.tuples(st.sampled_from(_OPS), st.floats(0.0, 1.0), st.binary(min_size=1, max_size=8)), min_size=1, max_size=3,
)


def mutate(good: bytes, ops: Sequence[tuple[str, float, bytes]]) -> bytes:
    data = bytearray(good)
    for op, where, extra in ops:
        i = int(where * len(data))
        if op == "truncate":
            del data[i:]
        elif op == "flip" and i < len(data):
            data[i] ^= extra[0] or 0x80
        elif op == "insert":
            data[i:i] = extra
        elif op == "delete":
            del data[i:i + len(extra) * 4]
        elif op == "dup_line":
            lines = bytes(data).splitlines(keepends=True)
            if lines:
                k = min(int(where * len(lines)), len(lines) - 1)
                lines.insert(k, lines[k])
                data = bytearray(b"".join(lines))
    return bytes(data)


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


def run_cli(argv: list[str]) -> tuple[int, str]:
    """(exit code, stderr) of ``simready argv`` in this process; a traceback fails the test."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main(argv)
        except SystemExit as exc:  # argparse usage errors
            rc = int(exc.code or 0)
    text = err.getvalue()
    assert "Traceback" not in text
    assert len(text.strip().splitlines()) <= 1, text
    return rc, text


@contextlib.contextmanager
def workspace(inputs: dict[str, bytes]) -> Iterator[Path]:
    """A fresh folder holding ``inputs``; afterwards nothing else may exist there but ``out*``."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, data in inputs.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(data)
        yield root
        extra = {p.relative_to(root).parts[0] for p in root.rglob("*")} - {n.split("/")[0] for n in inputs}
        assert extra <= {"out", "out.parquet", "out.json"}, extra


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
