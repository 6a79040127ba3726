"""A release's datasheet: what is in it (counts per split, intent, coverage cell and action branch), what the gate
decided (the suite's figures and the released samples' scores), what it lacks (the coverage gap) and how its
branches end (collisions), and what made it (generator, engine, stages and policy versions) — as JSON, and as
Markdown with the QA checklist for a reader, rendered to HTML for a browser (one text, two outputs)."""

from __future__ import annotations

import importlib.metadata
from collections import Counter
from collections.abc import Mapping
from html import escape
from typing import Any

from simready.scenario.splits import SPLITS
from simready.truth.precision import DECLARED_STEPS


def _by(entries: list[dict[str, Any]], key: str) -> dict[str, dict[str, int]]:
    counts: dict[str, Counter[str]] = {}
    for e in entries:
        counts.setdefault(str(e[key]), Counter())[e["split"]] += 1
    return {k: {s: c[s] for s in SPLITS} for k, c in sorted(counts.items())}


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 3) if values else 0.0


#: How many of the empty coverage cells the datasheet lists (the largest targets first).
EMPTY_CELLS_LISTED = 10


def coverage_gap(coverage: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What the suite's coverage (``coverage/coverage.json``: declared cells with their targets, proposals and
    acceptances) leaves empty: cells with none, with some, filled to target, and the largest empty cells (by
    target) with why — ``infeasible`` (proposed, every proposal rejected: the dominant reason) or ``not yet drawn``
    (never proposed: more batches would reach it). None without a coverage record."""
    if not coverage:
        return None
    cells = list(coverage.get("cells", []))
    empty = sorted((c for c in cells if not c["accepted"]),
                   key=lambda c: (-c["target"], -c["proposals"], c["intent"], c["cell"]))
    return {
        "cells": len(cells),
        "with_none": len(empty),
        "with_some": sum(1 for c in cells if c["accepted"] and c["under_target"]),
        "filled": sum(1 for c in cells if not c["under_target"]),
        "largest_empty": [{"intent": c["intent"], "cell": c["cell"], "target": c["target"], "proposals": c["proposals"],
                           "why": (f"infeasible: {c['proposals']} proposed, all rejected ({c['dominant_rejection']})"
                                   if c["proposals"] else "not yet drawn")} for c in empty[:EMPTY_CELLS_LISTED]],
    }


def datasheet(record: Mapping[str, Any], suite_weights: Mapping[str, Any], released: Mapping[str, Mapping[str, Any]],
              versions: Mapping[str, str], *, coverage: Mapping[str, Any] | None = None,
              collisions: Mapping[str, Mapping[str, int]] | None = None) -> dict[str, Any]:
    """The datasheet of a release record; ``released``: the validity reports of the released variants;
    ``coverage``: the suite's coverage record (for the gap); ``collisions``: released branches ending in a
    collision, per branch label and the party hit."""
    entries = [e for s in SPLITS for e in record["splits"][s]]
    branches: dict[str, Counter[str]] = {}
    for e in entries:
        for label in e["branches"]:
            branches.setdefault(label, Counter())[e["split"]] += 1
    policy = suite_weights.get("policy", {})
    by_branch = suite_weights.get("branches", {})
    return {
        "suite_id": record["suite_id"],
        "counts": {s: {"samples": sum(1 for e in entries if e["split"] == s),
                       "branches": sum(len(e["branches"]) for e in entries if e["split"] == s),
                       "weight": round(sum(e["weight"] + sum(b["weight"] for b in e["branches"].values())
                                           for e in entries if e["split"] == s), 3),
                       "files": sum(len(e["files"]) for e in entries if e["split"] == s),
                       "bytes": sum(f["bytes"] for e in entries if e["split"] == s for f in e["files"].values())}
                   for s in SPLITS},
        "by_intent": _by(entries, "intent"),
        "by_cell": _by(entries, "cell"),
        "by_branch": {k: {s: c[s] for s in SPLITS} for k, c in sorted(branches.items())},
        "gate": {
            "policy_version": sorted({str(r.get("policy_version")) for r in released.values()}),
            "bases_accepted": suite_weights.get("accepted", 0), "bases_rejected": suite_weights.get("rejected", 0),
            "branches": {k: dict(v) for k, v in sorted(by_branch.get("by_branch", {}).items())},
            "matched_sets_whole": f"{by_branch.get('matched_sets_whole', 0)}/{by_branch.get('matched_sets', 0)}",
            "low_fidelity_share": round(float(policy.get("low_fidelity_share", 0.0)), 3),
            "scale_factor": round(float(policy.get("scale_factor", 1.0)), 3),
            "released_mean": {k: _mean([float(r[k]) for r in released.values()]) for k in ("validity", "fidelity", "realism")},
        },
        "versions": {**dict(sorted(versions.items())), "pybullet": importlib.metadata.version("pybullet")},
        "coverage_gap": coverage_gap(coverage),
        "collisions": {k: dict(sorted(v.items())) for k, v in sorted((collisions or {}).items())},
        "conventions": conventions(),
    }


def conventions() -> dict[str, Any]:
    """The observation layout's value conventions a reader needs beside SPEC §10 (also in each ``legend.json``)."""
    # heavy: numba, embreex; release/definitions stay light
    from simready.sensors_hw.camera import ROW_TIME_RULE, SEMANTIC_IGNORE_8BIT, SEMANTIC_NOTHING_HIT
    from simready.sensors_hw.lidar import TIME_COMMENT  # heavy: numba, embreex; release/definitions stay light
    from simready.sensors_hw.radar import CONTRIBUTOR_COLUMNS  # heavy: numba, embreex; release/definitions stay light

    precision = {f"{kind}.{column}": {"step": step, "max_abs_error": step / 2}
                 for kind, columns in DECLARED_STEPS.items() for column, step in columns.items()}
    return {"truth_precision": precision, "truth_layout": truth_layout(),
            "semantic_nothing_hit_class": SEMANTIC_NOTHING_HIT, "semantic_ignore_8bit": SEMANTIC_IGNORE_8BIT,
            "id_nothing_hit": 0, "depth_nothing_hit_raw": 0.0, "row_time": ROW_TIME_RULE,
            "lidar_t": TIME_COMMENT.removeprefix("comment t: "),
            "radar_contributors": "<radar>/<tick>.contributors.parquet, one row per (detection, part), by detection "
                                  "then part: " + ", ".join(CONTRIBUTOR_COLUMNS) + " (" + RADAR_CONTRIBUTOR_NOTE + ")"}


def truth_layout() -> str:
    """How the per-frame truth tables store what the reader puts back (:mod:`simready.truth.stored`), in one line."""
    # pyarrow: release/definitions stay light
    from simready.truth.stored import BODY, BODY_COLUMNS, FLAG_BITS, FLAGS, PIXEL_FROM, STEP_DIFFERENCES
    bits = ", ".join(f"{k} {' / '.join(dict.fromkeys(FLAG_BITS[d][k] for d in ('forward', 'backward')))}"
                     for k in range(len(FLAG_BITS["forward"])))
    return (f"`pixel` stored in `<tick>.surface.parquet` only ({', '.join(sorted(PIXEL_FROM))} have its rows, in its "
            f"order); the surface table's {', '.join(BODY_COLUMNS)} as the int32 column `{BODY}` named by the "
            f"metadata's `bodies` legend; forward/backward booleans in the uint8 column `{FLAGS}`, bit {bits}; the "
            "columns stored at a declared step as int32 differences of their multiples of it (row i: "
            "k[i] - k[i-1], k = value / step, k[-1] = 0; null where NaN), named in the metadata's "
            f"`{STEP_DIFFERENCES}` (the value is the running sum times the step); "
            "simready.truth.reader returns them as columns")


#: What the contributor table's columns mean (simready.sensors_hw.radar.RadarContributors).
RADAR_CONTRIBUTOR_NOTE = ("detection: the row in the frame's CSV; instance_id: the detection's compact id; entity, "
                          "element, geometry_hash: the part's; part: its rank among its entity's bodies; body: the "
                          "scene's body index; hits: the cluster's rays on the part; power_share: its share of the "
                          "returned power, summing to 1 per detection; radial_velocity_mps: its noise-free radial "
                          "velocity, positive receding; x, y, z: its hits' centroid in the radar frame, m")


def _cell(text: str) -> str:
    """Text inside a Markdown table cell (a coverage cell's id joins its dimensions with '|')."""
    return text.replace("|", "\\|")


def datasheet_markdown(release_id: str, sheet: Mapping[str, Any], items: list[Mapping[str, Any]]) -> str:
    """The datasheet and the QA checklist as a Markdown page. Render it from the records as stored (canonical JSON,
    keys sorted): ``simready release verify`` renders the page again from them and compares the bytes."""
    lines = [f"# Dataset release {release_id}", "", f"Suite `{sheet['suite_id']}`.", "", "## Counts per split", "",
             "| split | samples | branches | weight | files | MB |", "|---|---:|---:|---:|---:|---:|"]
    for s in SPLITS:
        c = sheet["counts"][s]
        lines.append(f"| {s} | {c['samples']} | {c['branches']} | {c['weight']:.2f} | {c['files']} | {c['bytes'] / 1e6:.1f} |")
    for title, key in (("Intent", "by_intent"), ("Coverage cell", "by_cell"), ("Action branch", "by_branch")):
        lines += ["", f"## {title}", "", f"| {title.lower()} | train | val | test |", "|---|---:|---:|---:|"]
        lines += [f"| {_cell(k)} | {v['train']} | {v['val']} | {v['test']} |" for k, v in sheet[key].items()]
    gate = sheet["gate"]
    lines += ["", "## Gate", "", f"- policy {', '.join(gate['policy_version'])}; bases accepted {gate['bases_accepted']}, "
              f"rejected {gate['bases_rejected']}; matched sets whole {gate['matched_sets_whole']}",
              "- branches: " + ", ".join(f"{k} {v.get('accepted', 0)} accepted / {v.get('rejected', 0)} rejected"
                                          for k, v in gate["branches"].items()),
              f"- low-fidelity weight share {gate['low_fidelity_share']:.2f} (scale factor {gate['scale_factor']:.2f})",
              "- released mean: " + ", ".join(f"{k} {v:.3f}" for k, v in gate["released_mean"].items()),
              "", "## Versions", ""]
    lines += [f"- {k}: `{v}`" for k, v in sheet["versions"].items()]
    lines += ["", "## What a weight means", "",
              "A variant's weight is its share in training: an accepted high-fidelity variant (fidelity ≥ 0.80) "
              "counts 1.00, an accepted low-fidelity one at most 0.30 (scaled down so that low fidelity is at most "
              "a quarter of the suite's weight), a rejected one 0. A split's weight is the sum over its samples and "
              "their branches: weight 45.00 is worth 45 high-fidelity variants."]
    if sheet.get("collisions") is not None:
        lines += ["", "## Collisions", "", "Released branches that end in a collision, per branch and the party hit.", ""]
        if sheet["collisions"]:
            lines += ["| branch | party | branches |", "|---|---|---:|"]
            lines += [f"| {label} | {party} | {n} |" for label, parties in sheet["collisions"].items()
                      for party, n in parties.items()]
        else:
            lines.append("No released branch ends in a collision.")
    gap = sheet.get("coverage_gap")
    if gap:
        lines += ["", "## Coverage gap", "",
                  f"{gap['cells']} declared cells: {gap['with_none']} with no sample, {gap['with_some']} with some "
                  f"(under target), {gap['filled']} filled to target.", ""]
        if gap["largest_empty"]:
            lines += [f"The {len(gap['largest_empty'])} largest empty cells (by target) and why they are empty:", "",
                      "| intent | cell | target | proposals | why |", "|---|---|---:|---:|---|"]
            lines += [f"| {c['intent']} | {_cell(c['cell'])} | {c['target']} | {c['proposals']} | {_cell(c['why'])} |"
                      for c in gap["largest_empty"]]
    conv = sheet.get("conventions")
    if conv:
        lines += ["", "## Observation conventions", "",
                  f"- `semantic.png`: {conv['semantic_nothing_hit_class']} where nothing was hit (sky; no ontology class), "
                  f"{conv['semantic_ignore_8bit']} the ontology's ignore class; `id.png` {conv['id_nothing_hit']} and "
                  f"`depth.f32.bin` {conv['depth_nothing_hit_raw']} where nothing was hit",
                  f"- rolling shutter: {conv['row_time']}", f"- LiDAR `t`: {conv['lidar_t']}"]
        if "radar_contributors" in conv:  # sheets stored before the contributor table render as they were
            lines.append(f"- radar contributors: {conv['radar_contributors']}")
        if "truth_precision" in conv:  # likewise sheets stored before the truth's declared precision
            lines.append("- truth stored at a declared step (float32; read back within half a step): " + ", ".join(
                f"`{name}` {p['step']:.3g} (±{p['max_abs_error']:.3g})" for name, p in conv["truth_precision"].items())
                + "; the RGB image's distorted flow is derived on reading (simready.truth.reader)")
        if "truth_layout" in conv:  # likewise sheets stored before pixel and the flags were stored once
            lines.append(f"- truth layout: {conv['truth_layout']}")
    lines += ["", "## World-trajectory QA checklist", "", "| item | checks (result) | |", "|---|---|---|"]
    for item in items:
        checks = "; ".join(f"{c['check']} {c['result']}{'' if c['blocking'] else ' (scored, not required)'}"
                           for c in item["checks"])
        lines.append(f"| {item['item']} | {checks} | {'pass' if item['passed'] else 'FAIL'} |")
    return "\n".join(lines) + "\n"


_PAGE_STYLE = """body { font: 14px/1.45 system-ui, sans-serif; margin: 1.2em auto; max-width: 1400px; padding: 0 1em; color: #1d2330; }
table { border-collapse: collapse; margin: .3em 0 1em; } th, td { border: 1px solid #d8dce4; padding: .25em .55em; }
th { background: #f1f3f7; text-align: left; } td { vertical-align: top; } h2 { border-bottom: 1px solid #d8dce4; }
code { font-size: .95em; }"""


def datasheet_html(release_id: str, sheet: Mapping[str, Any], items: list[Mapping[str, Any]]) -> str:
    """The same page as :func:`datasheet_markdown`, as HTML a browser shows (the Markdown rendered, CommonMark with
    tables; styles inline, no request off the page)."""
    from markdown_it import MarkdownIt  # heavy: markdown-it (~80 ms), only for the HTML datasheet

    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(datasheet_markdown(release_id, sheet, items))
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{escape(release_id)} · '
            f"datasheet</title>\n<style>\n{_PAGE_STYLE}\n</style>\n</head>\n<body>\n{body}</body>\n</html>\n")
