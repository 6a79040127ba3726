"""How the pages write things: figures rounded to what they mean, the gate's reasons in words, names that may break,
links relative to the page (so a copied folder still works)."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import markupsafe


def number(value: float | None, digits: int = 2, unit: str = "") -> str:
    """A figure rounded to what it means; ``—`` for none (never "None")."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return f"{value:.{digits}f}{unit}"


#: A robust z (in the reference draws' spread) beyond this is shown as "> this σ": past it the figure says only
#: "far outside every draw", and its digits read as a bug.
READABLE_Z_MAX = 10.0
_Z = re.compile(r"scenario z (-?\d+(?:\.\d+)?)")
_P = re.compile(r"\(ref n=(\d+) draws, ([^)]*?), p=(\d+\.\d+)\)")


def readable(reason: str) -> str:
    """A gate reason as a reviewer reads it: a scenario z beyond :data:`READABLE_Z_MAX` as ``> 10 σ`` (far outside
    every nominal draw), and the smallest p-value a reference of n draws can give said to be that."""
    def z(m: re.Match[str]) -> str:
        value = float(m.group(1))
        return f"scenario z > {READABLE_Z_MAX:.0f} σ ({value:.0f}: far outside every nominal draw)" \
            if abs(value) > READABLE_Z_MAX else m.group(0)

    def p(m: re.Match[str]) -> str:
        n, floor = int(m.group(1)), 1.0 / (int(m.group(1)) + 1)
        note = f", the least {n} draws can show: no nominal draw is as far" if abs(float(m.group(3)) - floor) < 0.005 else ""
        return f"(ref n={n} draws, {m.group(2)}, p={m.group(3)}{note})"

    return _P.sub(p, _Z.sub(z, reason))


def breakable(name: str) -> markupsafe.Markup:
    """An identifier that may wrap after its underscores (``urban_signalized_intersection`` is one word to a
    browser, and a column of them runs a table off the screen)."""
    return markupsafe.Markup("_<wbr>").join(markupsafe.escape(part) for part in str(name).split("_"))


def relative_href(target: Path, from_dir: Path) -> str:
    """The link from a page in ``from_dir`` to ``target`` (both local paths or both artifact keys), with ``/``."""
    return Path(os.path.relpath(target, from_dir)).as_posix()
