"""Bad OpenDRIVE input (issue 17): one line naming the XML location, exit 1, nothing written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from simready.cli import main
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


def _negative_width() -> tuple[str, str]:
    text = _straight().replace('a="2.5"', 'a="-0.5"', 1)
    line = _line_of(text, 'a="-0.5"')
    return text, rf"road 1, laneSection s=0, lane -2, width: negative lane width -0\.500 m at s=0\.00 \(line {line}\)"


def _missing_road() -> tuple[str, str]:
    text = maps.junction_map().decode("utf-8").replace('connectingRoad="101"', 'connectingRoad="999"', 1)
    line = _line_of(text, 'connectingRoad="999"')
    return text, rf"junction 100, connection \d+: connectingRoad '999' is not a road of the map \(line {line}\)"


def _no_drivable_lane() -> tuple[str, str]:
    text = _straight().replace('type="driving"', 'type="sidewalk"').replace('type="parking"', 'type="sidewalk"')
    return text, r"OpenDRIVE\.road: no drivable lane in 1 road\(s\): .*\(first road 1 at line \d+\)"


def _folded_outline() -> tuple[str, str]:
    # The curved road's arc tightened to a 5 m radius, and its left lane (the inside) widened to 12 m: the lane's
    # far border swings round the arc's centre and crosses the near one.
    text = maps.curved_road().decode("utf-8").replace('<arc curvature="0.04"/>', '<arc curvature="0.2"/>')
    first = text.index('<lane id="1"')
    at = text.index('a="3.5"', first)
    text = text[:at] + 'a="12.0"' + text[at + len('a="3.5"'):]
    return text, r"road 1, laneSection s=0, lane 1: lane outline is not a valid polygon .*\(line \d+\)"


CASES = {"malformed": _malformed, "unsupported_geometry": _unsupported_geometry, "negative_width": _negative_width,
         "missing_road": _missing_road, "no_drivable_lane": _no_drivable_lane, "folded_outline": _folded_outline}


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
