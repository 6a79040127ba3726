"""Bad OpenDRIVE input (issue 17): one line naming the XML location, exit 1, nothing written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simready.cli import main
from simready.maps.errors import MapError
from simready.maps.xodr_import import import_opendrive
from simready.testing import opendrive_maps as maps


def _straight() -> str:
    return maps.straight_road().decode("utf-8")


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def _malformed() -> tuple[str, str]:
    text = _straight()
    cut = text[: text.index("<laneSection")] + "<laneSection s=\"0\">\n<left>\n"
    return cut, r"malformed XML at line \d+"


def _unsupported_geometry() -> tuple[str, str]:
    text = _straight().replace("<line/>", "<cubicBezier/>", 1)
    return text, rf"road 1, geometry s=0: unsupported geometry record <cubicBezier> .*\(line {_line_of(text, '<cubicBezier/>')}\)"


def _no_drivable_lane() -> tuple[str, str]:
    text = _straight().replace('type="driving"', 'type="sidewalk"').replace('type="parking"', 'type="sidewalk"')
    return text, r"OpenDRIVE\.road: no drivable lane in 1 road\(s\): .*\(first road 1 at line \d+\)"


def _no_roads() -> tuple[str, str]:
    return '<?xml version="1.0"?>\n<OpenDRIVE/>\n', r"OpenDRIVE\.road: the map holds no <road> \(line 2\)"


def _header_only() -> tuple[str, str]:
    return ('<?xml version="1.0"?>\n<OpenDRIVE>\n<header revMajor="1" revMinor="6"/>\n</OpenDRIVE>\n',
            r"OpenDRIVE\.road: the map holds no <road>")


def _negative_road_length() -> tuple[str, str]:
    text = _straight().replace('length="100.0"', 'length="-5.0"', 1)
    return text, r"road 1: road length -5 m is not positive \(line \d+\)"


def _road_length(value: str) -> tuple[str, str]:
    text = _straight().replace('length="100.0"', f'length="{value}"')
    return text, r"road length \(m\) 1e\+0[69] is over the limit of 100000 \(line \d+\)"


def _many_lanes(n: int) -> tuple[str, str]:
    text = _straight()
    lane = '<lane id="{i}" type="driving" level="false"><width a="3.0" b="0" c="0" d="0" sOffset="0"/></lane>\n'
    at = text.index("<right>") + len("<right>")
    text = text[:at] + "".join(lane.format(i=-(10 + i)) for i in range(n)) + text[at:]
    return text, rf"road 1, laneSection s=0: lanes per lane section {n + 5} is over the limit of 100 \(line \d+\)"


def _unrepairable() -> tuple[str, str]:
    # Every lane of the straight road given a width polynomial that turns negative: repairs leave nothing drivable.
    text = re.sub(r'<width a="([0-9.]+)" b="0\.0"', r'<width a="\1" b="-1.0"', _straight())
    return text, r"OpenDRIVE\.road: no drivable lane in 1 road\(s\): \d+ repair\(s\) left nothing drivable " \
                 r"\(first: road 1, laneSection s=0, lane -?\d: left out: negative lane width .*\(line \d+\)\)"


def _coordinate_1e308() -> tuple[str, str]:
    text = _straight().replace('x="0.0"', 'x="1e308"', 1)
    return text, r"road 1, geometry s=0: \|coordinate\| \(m\) 1e\+308 is over the limit of 100000 \(line \d+\)"


def _curvature_1e12() -> tuple[str, str]:
    text = _straight().replace("<line/>", '<arc curvature="1e12"/>', 1)
    return text, r"no drivable lane in 1 road\(s\): 1 repair\(s\) left nothing drivable \(first: road 1, geometry s=0: " \
                 r"curvature 1e\+12 1/m \(radius below 0\.05 m\) turning 1e\+14 rad is not a road"


CASES = {"malformed": _malformed, "unsupported_geometry": _unsupported_geometry, "no_drivable_lane": _no_drivable_lane,
         "no_roads": _no_roads, "header_only": _header_only, "negative_road_length": _negative_road_length,
         "road_length_1e6": lambda: _road_length("1e6"), "road_length_1e9": lambda: _road_length("1e9"),
         "lanes_500": lambda: _many_lanes(500), "lanes_20000": lambda: _many_lanes(20000),
         "unrepairable": _unrepairable, "coordinate_1e308": _coordinate_1e308, "curvature_1e12": _curvature_1e12}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_map_is_one_line_exit_1_and_nothing_written(case: str, tmp_path: Path, capsys) -> None:
    text, pattern = CASES[case]()
    src = tmp_path / "bad.xodr"
    src.write_text(text)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    rc = main(["template", "import", str(src), "--id", "bad_map", "--out", str(out_dir / "bad_map.yaml")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1
    assert len(err) == 1, err
    assert err[0].startswith(f"error: {src}: ")
    assert re.search(pattern, err[0]), err[0]
    assert list(out_dir.iterdir()) == [], "a failed import left files behind"


def test_output_must_be_named_after_the_id(tmp_path: Path, capsys) -> None:
    src = tmp_path / "m.xodr"
    src.write_bytes(maps.offset_road())
    rc = main(["template", "import", str(src), "--id", "good", "--out", str(tmp_path / "other.yaml")])
    assert rc == 1
    assert "write good.yaml" in capsys.readouterr().err
    assert not (tmp_path / "other.yaml").exists()


def test_existing_output_is_not_replaced(tmp_path: Path, capsys) -> None:
    src = tmp_path / "m.xodr"
    src.write_bytes(maps.offset_road())
    out = tmp_path / "good.yaml"
    out.write_text("mine\n")
    rc = main(["template", "import", str(src), "--id", "good", "--out", str(out)])
    assert rc == 1
    assert out.read_text() == "mine\n"
    assert "exists" in capsys.readouterr().err


_NUMBER = re.compile(r'(?<= )([A-Za-z]+)="(-?[0-9][0-9.eE+\-]*)"')


#: Memory an import of one mutated map may take beyond what the test process already holds.
_IMPORT_MEMORY_BYTES = 3 << 30


def _import_capped(path: Path) -> tuple[str, str]:
    """``import_opendrive(path)`` in a forked child whose address space is capped: ("ok", ""), ("map", one line)
    or ("other", the exception). A map that exhausts memory fails this test instead of the whole test run (an
    out-of-memory kill of a pytest-xdist worker leaves the session waiting forever)."""
    import os
    import pickle
    import resource

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: cap, import, report, exit without running the parent's cleanup
        os.close(read)
        try:
            vm_pages = int(Path("/proc/self/statm").read_text().split()[0])
            cap = vm_pages * os.sysconf("SC_PAGE_SIZE") + _IMPORT_MEMORY_BYTES
            hard = resource.getrlimit(resource.RLIMIT_AS)[1]
            if hard != resource.RLIM_INFINITY:  # under a shell's `ulimit -v`: a cap above it would be refused
                cap = min(cap, hard)
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
            try:
                result = import_opendrive(path, "mutated")
                outcome = ("ok", "") if result.data["lanes"] else ("other", "no lanes and no MapError")
            except MapError as exc:
                outcome = ("map", str(exc))
            except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the test
                outcome = ("other", f"{type(exc).__name__}: {exc}"[:500])
            os.write(write, pickle.dumps(outcome))
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return pickle.loads(data) if data else ("other", "the import's process died without a word")


# Derandomized: the same 40 maps every run, so the suite's verdict does not depend on the draw. One random run
# once drew a map whose import took 22 GB (not yet reproduced; see the closing note of 2026-12-05): the cap
# above makes such a map fail here in one line instead of stopping the suite.
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_maps_import_or_fail_in_one_line(tmp_path, data) -> None:
    """Numbers of a valid map replaced by hostile ones (huge, negative, zero, tiny): a template or one MapError,
    never another exception, and never more memory than the cap (issue 27)."""
    text = (maps.straight_road() if data.draw(st.booleans()) else maps.junction_map()).decode("utf-8")
    spots = [m.span(2) for m in _NUMBER.finditer(text)]
    picks = data.draw(st.lists(st.sampled_from(spots), min_size=1, max_size=4, unique=True))
    values = st.sampled_from(["0", "-1", "-1e9", "1e9", "1e12", "1e-12", "1e308", "-0.5", "3.5e4", "7"])
    # Bounded work: a probe of 500 such maps found none over a few seconds once the bounds were in (issue 27).
    for start, end in sorted(picks, reverse=True):
        text = text[:start] + data.draw(values) + text[end:]
    path = tmp_path / "mutated.xodr"
    path.write_text(text)
    kind, message = _import_capped(path)
    assert kind in ("ok", "map"), f"{message}\n{text}"
    assert "\n" not in message
