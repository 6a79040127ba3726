"""The one rule for a command's ``--out`` (issue 14, deliver 4) and the sweep of a killed run's leftovers (deliver 6)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from simready.common.atomic import atomic_directory, remove_orphans
from simready.cli import main
from simready.common.errors import OutputExistsError
from simready.common.outdir import output_file, output_folder
from simready.store import LocalStore

# A stand-in for a command's work: holds the destination for a while, writes its own marker files.
_WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from simready.common.errors import SimreadyError
    from simready.common.outdir import output_folder
    out, tag = sys.argv[1], sys.argv[2]
    try:
        with output_folder(out) as tmp:
            for i in range(5):
                (tmp / f"{tag}-{i}.txt").write_text(tag)
                time.sleep(0.2)
    except SimreadyError as exc:
        print(exc.one_line(), file=sys.stderr)
        sys.exit(1)
""")


def _spawn(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **kwargs)


def test_a_folder_is_published_whole_and_the_lock_goes(tmp_path) -> None:
    out = tmp_path / "out"
    with output_folder(out) as tmp:
        (tmp / "a.txt").write_text("a")
        assert not out.exists()
    assert [p.name for p in out.iterdir()] == ["a.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_an_empty_folder_is_accepted(tmp_path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with output_folder(out) as tmp:
        (tmp / "a.txt").write_text("a")
    assert (out / "a.txt").read_text() == "a"


@pytest.mark.parametrize("make, message", [
    (lambda p: (p.mkdir(), (p / "user.txt").write_text("mine")), "not empty"),
    (lambda p: p.write_text("mine"), "a folder is wanted"),
    (lambda p: p.symlink_to(p.parent / "elsewhere", target_is_directory=True), "symbolic link"),
])
def test_a_folder_destination_is_refused_before_the_work(tmp_path, make, message) -> None:
    out = tmp_path / "out"
    make(out)
    before = sorted(p.name for p in tmp_path.iterdir())
    worked = False
    with pytest.raises(OutputExistsError, match=message), output_folder(out):
        worked = True
    assert not worked
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("make, message", [
    (lambda p: p.mkdir(), "a file is wanted"),
    (lambda p: p.write_text("mine"), "file exists"),
    (lambda p: p.symlink_to(p.parent / "elsewhere"), "symbolic link"),
])
def test_a_file_destination_is_refused_before_the_work(tmp_path, make, message) -> None:
    out = tmp_path / "report.json"
    make(out)
    with pytest.raises(OutputExistsError, match=message), output_file(out):
        pytest.fail("the work ran")
    assert not (tmp_path / "elsewhere").exists()


def test_a_file_is_published_by_a_link_that_replaces_nothing(tmp_path) -> None:
    out = tmp_path / "report.json"
    with pytest.raises(OutputExistsError, match="appeared while"), output_file(out) as staged:
        staged.write_text("ours")
        out.write_text("theirs")
    assert out.read_text() == "theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_a_file_a_user_puts_in_the_folder_meanwhile_is_kept(tmp_path) -> None:
    out = tmp_path / "out"
    with pytest.raises(OutputExistsError, match="not empty"), output_folder(out) as tmp:
        (tmp / "ours.txt").write_text("ours")
        out.mkdir()
        (out / "user.txt").write_text("mine")
    assert [p.name for p in out.iterdir()] == ["user.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_failed_command_leaves_nothing(tmp_path) -> None:
    out = tmp_path / "out"
    with pytest.raises(RuntimeError), output_folder(out) as tmp:
        (tmp / "half.txt").write_text("half")
        raise RuntimeError("the work failed")
    assert list(tmp_path.iterdir()) == []


def test_two_concurrent_commands_one_wins_and_files_never_mix(tmp_path) -> None:
    out = tmp_path / "out"
    script = tmp_path.parent / f"{tmp_path.name}-writer.py"
    script.write_text(_WRITER)
    procs = [_spawn(str(script), str(out), tag) for tag in ("a", "b")]
    results = [(p.wait(timeout=60), p.stderr.read()) for p in procs]
    script.unlink()
    codes = sorted(rc for rc, _ in results)
    assert codes == [0, 1], results
    loser_err = next(err for rc, err in results if rc == 1).strip()
    assert len(loser_err.splitlines()) == 1 and loser_err.startswith(str(out)), loser_err
    tags = {p.name.split("-")[0] for p in out.iterdir()}
    assert len(tags) == 1 and len(list(out.iterdir())) == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_the_cli_refuses_an_existing_out_in_one_line_before_the_work(tmp_path, capsys) -> None:
    existing_file = tmp_path / "f.txt"
    existing_file.write_text("mine")
    full = tmp_path / "full"
    full.mkdir()
    (full / "user.txt").write_text("mine")
    missing = str(tmp_path / "no-such-manifest.json")  # the work would fail on it: the output check comes first
    cases = [
        (["sim", "run", missing, "--out", str(existing_file)], "file exists"),
        (["sim", "run", missing, "--out", str(full)], "a file is wanted"),
        (["sim", "branch", missing, "--out", str(full)], "not empty"),
        (["sim", "branch", missing, "--out", str(existing_file)], "a folder is wanted"),
        (["sense", missing, "--manifest", missing, "--out", str(full)], "not empty"),
        (["validate", str(tmp_path), "--out", str(full)], "a file is wanted"),
        (["validate", str(tmp_path), "--out", str(tmp_path / "r.json"), "--docs", str(existing_file)],
         "a folder is wanted"),
        (["scenario", "sample", "--template", "nowhere", "--intent", "cut_in", "--n", "1", "--out", str(full)],
         "not empty"),
        (["sim", "run", missing, "--out", str(existing_file / "t.parquet")], "cannot create the output's folder"),
    ]
    for argv, message in cases:
        assert main(argv) == 1, argv
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and message in err, (argv, err)
    assert existing_file.read_text() == "mine" and [p.name for p in full.iterdir()] == ["user.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt", "full"]


def test_a_killed_builds_leftovers_go_with_the_next_run_and_a_live_ones_stay(tmp_path) -> None:
    final = tmp_path / "observations"
    child = _spawn("-c", textwrap.dedent(f"""
        import time
        from simready.common.atomic import atomic_directory
        with atomic_directory({str(final)!r}) as tmp:
            (tmp / "half.bin").write_bytes(b"x" * 1000)
            print(tmp, flush=True)
            time.sleep(60)
    """))
    leftover = Path(child.stdout.readline().strip())
    assert leftover.is_dir() and str(os.getpid()) not in leftover.name.split(".")
    assert remove_orphans(final) == [] and leftover.is_dir()  # its owner is alive
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    with atomic_directory(final) as tmp:
        (tmp / "done.txt").write_text("done")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["observations"]


def test_a_killed_commands_temporary_folder_and_lock_do_not_block_the_next(tmp_path) -> None:
    out = tmp_path / "out"
    child = _spawn("-c", textwrap.dedent(f"""
        import time
        from simready.common.outdir import output_folder
        with output_folder({str(out)!r}) as tmp:
            (tmp / "half.txt").write_text("half")
            print(tmp, flush=True)
            time.sleep(60)
    """))
    leftover = Path(child.stdout.readline().strip())
    with pytest.raises(OutputExistsError, match="another command"), output_folder(out):
        pass
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    with output_folder(out) as tmp:
        (tmp / "whole.txt").write_text("whole")
    assert not leftover.exists()
    assert [p.name for p in out.iterdir()] == ["whole.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_killed_commands_nested_build_goes_too(tmp_path) -> None:
    """``sense`` builds its folder with the stage's own ``atomic_directory`` inside the command's temporary one."""
    out = tmp_path / "out"
    child = _spawn("-c", textwrap.dedent(f"""
        import time
        from simready.common.atomic import atomic_directory
        from simready.common.outdir import output_folder
        with output_folder({str(out)!r}) as tmp, atomic_directory(tmp) as inner:
            (inner / "half.bin").write_bytes(b"x" * 1000)
            print(inner, flush=True)
            time.sleep(60)
    """))
    inner = Path(child.stdout.readline().strip())
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    assert inner.is_dir() and len(list(tmp_path.iterdir())) == 3  # its folder, the nested one, the lock
    with output_folder(out) as tmp:
        (tmp / "whole.txt").write_text("whole")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_killed_runs_store_scratch_goes_with_the_next_scratch(tmp_path) -> None:
    root = tmp_path / "artifacts"
    child = _spawn("-c", textwrap.dedent(f"""
        import time
        from simready.store import LocalStore
        with LocalStore({str(root)!r}).scratch() as tmp:
            (tmp / "half.bin").write_bytes(b"x" * 1000)
            print(tmp, flush=True)
            time.sleep(60)
    """))
    leftover = Path(child.stdout.readline().strip())
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    assert leftover.is_dir()
    with LocalStore(root).scratch() as tmp:
        assert tmp.is_dir() and not leftover.exists()
    assert list(root.iterdir()) == []


@pytest.mark.slow
def test_two_concurrent_scenario_sample_commands_one_wins_and_files_never_mix(tmp_path) -> None:
    out = tmp_path / "out"

    def sample(root: str) -> subprocess.Popen:
        return _spawn("-m", "simready.cli", "scenario", "sample", "--template", "two_lane_arterial",
                      "--intent", "lead_vehicle_brakes", "--n", "6", "--root", root, "--quiet", "--out", str(out))

    procs = {root: sample(root) for root in ("alpha", "beta")}
    results = {root: (p.wait(timeout=120), p.stderr.read().strip()) for root, p in procs.items()}
    assert sorted(rc for rc, _ in results.values()) == [0, 1], results
    winner = next(root for root, (rc, _) in results.items() if rc == 0)
    loser_err = next(err for rc, err in results.values() if rc == 1)
    assert len(loser_err.splitlines()) == 1 and loser_err.startswith(f"error: {out}: "), loser_err
    alone = tmp_path / "alone"
    assert main(["scenario", "sample", "--template", "two_lane_arterial", "--intent", "lead_vehicle_brakes",
                 "--n", "6", "--root", winner, "--quiet", "--out", str(alone)]) == 0
    assert {p.name: p.read_bytes() for p in out.iterdir()} == {p.name: p.read_bytes() for p in alone.iterdir()}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alone", "out"]
