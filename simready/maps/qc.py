"""ASAM's checkers (``asam-qc-opendrive``, ``asam-qc-openscenarioxml``), driven as a subprocess in their own venv.

Why a subprocess: the checkers pin numpy < 2, which the project cannot share
(like DVC, they live in a tool venv the Makefile makes: ``make qc-venv`` →
``.venv-qc``). The OpenSCENARIO checker validates against the OpenSCENARIO
XML schema it ships (1.0–1.3) before its semantic checks. We write its configuration, run its ``qc_opendrive`` entry
point, and read the result file (``.xqar``, XML) back: each issue with its
level (1 error, 2 warning, 3 information), rule and locations.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from simready.common import paths

__all__ = ["QC_BIN", "QC_XOSC_BIN", "QcIssue", "QcResult", "check_opendrive", "check_openscenario"]

#: The checkers' entry points in the tool venv made by ``make qc-venv``.
QC_BIN = paths.PROJECT_ROOT / ".venv-qc" / "bin" / "qc_opendrive"
QC_XOSC_BIN = paths.PROJECT_ROOT / ".venv-qc" / "bin" / "qc_openscenario"
#: Seconds the checker may take on one map.
QC_TIMEOUT_S = 300

_CONFIG = """<?xml version="1.0" encoding="UTF-8"?>
<Config>
    <Param name="InputFile" value="{xodr}"/>
    <CheckerBundle application="{bundle}">
        <Param name="resultFile" value="{result}"/>
    </CheckerBundle>
</Config>
"""


@dataclass(frozen=True)
class QcIssue:
    level: int
    rule: str
    description: str
    where: str

    @property
    def is_error(self) -> bool:
        return self.level == 1

    def one_line(self) -> str:
        return f"level {self.level} {self.rule}: {self.description} ({self.where})"


@dataclass(frozen=True)
class QcResult:
    """Issues found, and the checkers that ran (``completed``) or were skipped with the checker's reason."""

    issues: tuple[QcIssue, ...]
    completed: tuple[str, ...]
    skipped: tuple[str, ...]

    @property
    def errors(self) -> tuple[QcIssue, ...]:
        return tuple(i for i in self.issues if i.is_error)


def check_opendrive(xodr: str | Path, qc_bin: Path = QC_BIN) -> QcResult:
    """Run ASAM's OpenDRIVE checker bundle on ``xodr``.

    Raises:
        FileNotFoundError: the checker is not installed (run ``make qc-venv``).
        RuntimeError: the checker failed to produce a result.
    """
    return _check(xodr, qc_bin, "xodrBundle")


def check_openscenario(xosc: str | Path, qc_bin: Path = QC_XOSC_BIN) -> QcResult:
    """Run ASAM's OpenSCENARIO XML checker bundle (schema and semantics) on ``xosc``; raises as :func:`check_opendrive`."""
    return _check(xosc, qc_bin, "xoscBundle")


def _check(source: str | Path, qc_bin: Path, bundle: str) -> QcResult:
    if not qc_bin.exists():
        raise FileNotFoundError(f"{qc_bin} is missing: run `make qc-venv`")
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.xml"
        result = Path(tmp) / "result.xqar"
        config.write_text(_CONFIG.format(xodr=Path(source).resolve(), result=result, bundle=bundle), encoding="utf-8")
        run = subprocess.run([str(qc_bin), "-c", str(config)], capture_output=True, text=True, timeout=QC_TIMEOUT_S)
        if run.returncode != 0 or not result.exists():
            raise RuntimeError(f"{qc_bin.name} failed (exit {run.returncode}): {run.stderr.strip()[-2000:]}")
        root = etree.parse(str(result), etree.XMLParser(resolve_entities=False, no_network=True)).getroot()
    issues, completed, skipped = [], [], []
    for checker in root.iter("Checker"):
        cid = checker.get("checkerId", "?")
        if checker.get("status") == "skipped":
            skipped.append(f"{cid}: {checker.get('summary', '')}")
        else:
            completed.append(cid)
        for issue in checker.iter("Issue"):
            where = "; ".join(
                " ".join(filter(None, [loc.get("description", "")] + [
                    " ".join(f"{k}={v}" for k, v in child.attrib.items()) for child in loc]))
                for loc in issue.iter("Locations"))
            issues.append(QcIssue(int(issue.get("level", "1")), issue.get("ruleUID", "?"),
                                  issue.get("description", ""), where))
    return QcResult(tuple(issues), tuple(completed), tuple(skipped))
