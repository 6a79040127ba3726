"""Try a folder of third-party OpenSCENARIO files end to end: import, roll out, brake / coast branches.

``python -m simready.bench.xosc_corpus ESMINI/resources/xosc --out docs/xosc_esmini.md`` runs every ``.xosc``
there whose ``LogicFile`` names a map that exists next to it (``../xodr/<name>`` for esmini; a LogicFile with
another folder is looked up by its file name in the maps folder, and the table says so), each in its own
process (a crash or a hang in one file is that file's row), and writes a Markdown table: file → import /
rollout / branches outcome, with the one-line reason of the first failure. The validity gate needs the
observation stage (sensors) and is not run here.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from simready.common.errors import SimreadyError
from simready.maps.xosc_import import import_xosc

BACKEND = "kinematic-v1"
TIMEOUT_S = 300


def one(xosc: Path, map_path: Path | None) -> dict:
    """Import, roll out and branch one file in this process; the row as a dict."""
    row: dict = {"file": xosc.name, "import": "", "rollout": "", "branches": "", "reason": "", "notes": ""}
    t0 = time.perf_counter()
    try:
        r = import_xosc(xosc, map_path)
    except SimreadyError as exc:
        row.update({"import": "refused"}, reason=str(exc).replace(str(xosc.parent) + "/", ""))
        return row
    m = r.manifest
    row["import"] = (f"ok ({len(m.actors)} actors, {len(m.interactions)} interactions, "
                     f"{len(r.report.not_represented)} not represented, {len(r.report.approximated)} approximated)")
    row["import_s"] = round(time.perf_counter() - t0, 2)
    row["decision"] = r.report.decision
    row["not_represented"] = r.report.not_represented
    from simready.sim.branch import run_branches  # the parent never rolls out: pybullet, numba only in --one children
    from simready.sim.run import run_simulation  # the parent never rolls out: pybullet, numba only in --one children

    try:
        base = run_simulation(m, r.template, backend=BACKEND)
    except SimreadyError as exc:
        row.update(rollout="failed", reason=str(exc).replace(str(xosc.parent) + "/", ""))
        return row
    fired = sum(1 for e in base.trace.events if e.get("type") == "trigger_fired")
    row["rollout"] = f"ok ({m.clip_s:g} s, {fired}/{len(m.interactions)} interactions fired)"
    if "t_decision_s" not in m.realized and not m.realized.get("decision_interaction"):
        row.update(branches="not run", reason=f"no decision point: {r.report.decision}")
        return row
    try:
        branches = run_branches(m, r.template, backend=BACKEND)
    except SimreadyError as exc:
        row.update(branches="failed", reason=str(exc).replace(str(xosc.parent) + "/", ""))
        return row
    brake, coast = (b for b in branches.table if b["label"] in ("brake", "coast"))
    row["branches"] = (f"ok at {branches.decision_t_s:g} s: brake min TTC {_fmt(brake['min_ttc_s'])}, "
                       f"coast min TTC {_fmt(coast['min_ttc_s'])}")
    return row


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f} s"


def _logic_file(xosc: Path) -> str | None:
    m = re.search(r'<LogicFile\s+filepath="([^"]*)"', xosc.read_text(errors="replace"))
    return m.group(1) if m else None


def run_folder(folder: Path, maps: Path) -> list[dict]:
    rows = []
    for xosc in sorted(folder.glob("*.xosc")):
        logic = _logic_file(xosc)
        if logic is None or not (maps / Path(logic.replace("\\", "/")).name).is_file():
            continue
        cmd = [sys.executable, "-m", "simready.bench.xosc_corpus", "--one", str(xosc)]
        note = ""
        if not (xosc.parent / logic).resolve().is_file():
            cmd += ["--map", str(maps / Path(logic.replace("\\", "/")).name)]
            note = f"LogicFile {logic} is not there: --map {Path(logic).name}"
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
            line = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
            row = json.loads(line) if line.startswith("{") else {
                "file": xosc.name, "import": "crashed", "rollout": "", "branches": "",
                "reason": (proc.stderr.strip().splitlines() or ["no output"])[-1]}
        except subprocess.TimeoutExpired:
            row = {"file": xosc.name, "import": "timeout", "rollout": "", "branches": "",
                   "reason": f"over {TIMEOUT_S} s"}
        row["notes"] = "; ".join(x for x in (row.get("notes", ""), note) if x)
        row["wall_s"] = round(time.perf_counter() - t0, 1)
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def _normalised(r: dict) -> dict:
    """A row of an older run in today's words (no decision point: branches not run)."""
    if r.get("branches") == "failed" and str(r.get("decision", "")).startswith("none") and "no reveal" in r["reason"]:
        return {**r, "branches": "not run", "reason": f"no decision point: {r['decision']}"}
    return r


def table(rows: list[dict]) -> str:
    out = ["| file | import | rollout | branches (brake / coast) | reason / notes |", "|---|---|---|---|---|"]
    rows = [_normalised(r) for r in rows]
    for r in rows:
        why = "; ".join(x for x in (r.get("reason", ""), r.get("notes", "")) if x).replace("|", "\\|")
        out.append(f"| {r['file']} | {r['import']} | {r.get('rollout') or '-'} | {r.get('branches') or '-'} | {why} |")
    n = len(rows)
    ok = [sum(1 for r in rows if str(r.get(k, "")).startswith("ok")) for k in ("import", "rollout", "branches")]
    out.append("")
    out.append(f"{n} files: {ok[0]} imported, {ok[1]} rolled out, {ok[2]} branched (brake / coast).")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m simready.bench.xosc_corpus", description=__doc__.splitlines()[0])
    p.add_argument("folder", nargs="?", help="folder of .xosc files (esmini: resources/xosc)")
    p.add_argument("--maps", help="folder of the maps (default: FOLDER/../xodr)")
    p.add_argument("--out", help="write the Markdown table here (and the rows as JSON beside it)")
    p.add_argument("--table-from", help="write the table from the JSON rows a run wrote (with --out)")
    p.add_argument("--one", help=argparse.SUPPRESS)
    p.add_argument("--map", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.one:
        print(json.dumps(one(Path(args.one), Path(args.map) if args.map else None)))
        return 0
    if args.table_from:
        rows = json.loads(Path(args.table_from).read_text())
    else:
        folder = Path(args.folder)
        rows = run_folder(folder, Path(args.maps) if args.maps else folder.parent / "xodr")
    text = table(rows)
    if args.out:
        Path(args.out).write_text(text)
        if not args.table_from:
            Path(args.out).with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
