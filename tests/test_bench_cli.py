"""``python -m simready.bench --help`` lists the sections (no traceback); an unknown section is one line."""

from __future__ import annotations

import pytest

from simready.bench.__main__ import SECTIONS, describe, main


def test_help_lists_every_section_with_its_summary(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for name in SECTIONS:
        assert f"  {name} " in out
    assert "Measurement-engine benchmark" in out  # the sensors section's summary, read without importing it


def test_each_section_has_a_summary_of_its_own():
    """Was: ``catalog`` and ``templates`` (one module, two sections) both printed the module's summary."""
    summaries = {name: describe(name) for name in SECTIONS}
    assert len(set(summaries.values())) == len(summaries), summaries
    assert describe("templates").startswith("Template parse")


def test_an_unknown_section_is_one_line_and_exit_2(capsys):
    assert main(["no-such-section"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no-such-section" in err and len(err.splitlines()) == 1
