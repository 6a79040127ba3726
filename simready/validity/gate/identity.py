"""Check 4, ``identity``: ids unique per frame, declared, of a stable class, without teleports.

Unique ids per frame, a stable class per id (a per-row class column, when the
ticks have one, against itself and the declared class), every id declared, no
id teleports (a jump beyond max_speed·Δt +
:data:`~simready.validity.policy.ID_JUMP_MARGIN_M` between consecutive
observations, gaps included). Score: share of ids without a violation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from simready.validity import policy
from simready.validity.gate.findings import Findings, clamp_score, count_suffix, first_worst, fmt_t, tick_time
from simready.validity.gate.inputs import GateInput, column, limit_class
from simready.validity.gate.report import CheckResult


def check_identity(g: GateInput) -> CheckResult:
    ev, rows = g.evidence, g.rows
    found = Findings()
    ticks = ev.ticks
    ids = ticks["actor_id"].astype(str)
    dup_mask = pd.DataFrame({"tick": ticks["tick"].to_numpy(), "actor_id": ids.to_numpy()}).duplicated(keep=False).to_numpy()
    if dup_mask.any():
        dups = pd.DataFrame({"tick": ticks["tick"].to_numpy()[dup_mask], "actor_id": ids.to_numpy()[dup_mask],
                             "t": column(ticks, "t")[dup_mask]})
        for actor, group in dups.groupby("actor_id", sort=True):
            per_tick = group.groupby("tick", sort=True).size()
            k = int(per_tick.index[0])
            t0 = float(group.loc[group["tick"] == k, "t"].iloc[0])
            found.add(str(actor), f"actor {actor}: id appears {int(per_tick.iloc[0])} times in frame tick {k} "
                                  f"({fmt_t(t0)}){count_suffix(len(per_tick), 'frame')}")
    declared = ev.actor_classes
    for actor in rows.names:
        if actor not in declared:
            found.add(actor, f"actor {actor}: id not declared among the scenario's {len(declared)} actors")
    if rows.row_class is not None:
        for code, r in rows.actor_rows().items():
            actor = rows.names[code]
            classes = rows.row_class[r]
            change = np.flatnonzero(classes[1:] != classes[:-1])
            if len(change):
                k = r[change[0] + 1]
                found.add(actor, f"actor {actor}: class changes {classes[change[0]]} → {rows.row_class[k]} at "
                                 f"{tick_time(rows, k, ev.dt)} ({len(np.unique(classes))} classes over {len(r)} ticks)")
            elif actor in declared and len(r) and not _same_class(str(classes[0]), declared[actor]):
                found.add(actor, f"actor {actor}: class {classes[0]} in the trace, {declared[actor]} declared "
                                 f"({len(r)} ticks)")
    # Consecutive valid observations of one id, across absences and non-finite ticks.
    seen = np.flatnonzero(rows.valid)
    prev, nxt = seen[:-1], seen[1:]
    same = rows.code[prev] == rows.code[nxt]
    prev, nxt = prev[same], nxt[same]
    if len(prev):
        dt_pair = np.abs(rows.t[nxt] - rows.t[prev])
        jump = np.hypot(rows.x[nxt] - rows.x[prev], rows.y[nxt] - rows.y[prev])
        codes = rows.code[prev]
        for c in np.unique(codes):
            actor = rows.names[int(c)]
            cls, limit, _ = limit_class(declared, actor)
            m = np.flatnonzero(codes == c)
            allowed = limit.max_speed_mps * dt_pair[m] + policy.ID_JUMP_MARGIN_M
            over = np.flatnonzero(jump[m] > allowed)
            if len(over):
                k = m[first_worst(jump[m] - allowed, over)]
                found.add(actor, f"actor {actor}: id jumps {jump[k]:.2f} m in {dt_pair[k]:.2f} s at "
                                 f"{fmt_t(rows.t[nxt[k]])} ({cls} allows "
                                 f"{limit.max_speed_mps * dt_pair[k] + policy.ID_JUMP_MARGIN_M:.2f} m)"
                                 f"{count_suffix(len(over), 'jump')}")
    n_ids = max(len(set(rows.names) | set(declared)), 1)
    bad = {u for u in found.bad_units if u}
    score = 1.0 - len(bad) / n_ids
    passed = not found.texts
    summary = f"{n_ids} ids unique, stable and continuous" if passed else f"{len(bad)} of {n_ids} ids with violations"
    detail = found.detail(summary, utilisation=False, ids=n_ids, ids_with_violations=sorted(bad))
    return CheckResult(check="identity", passed=passed, score=clamp_score(score), detail=detail)


def _same_class(row_class: str, declared: str) -> bool:
    return row_class == declared or policy.limit_class(row_class) == policy.limit_class(declared) is not None
