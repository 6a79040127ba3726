"""Traffic signals: the signal states a scenario names, which template signal an OpenSCENARIO signal id is, and the
signal controllers' phases as the manifest's fixed-time programs."""

from __future__ import annotations

from typing import Any

from simready.maps.xosc_import.context import Context
from simready.maps.xosc_import.document import identifier
from simready.scenario.manifest.base import MAX_CLIP_S


SIGNAL_FORMS = ("red, amber (yellow), green, red_amber, off, or lamps each on/off: 'red;amber;green' (a traffic "
                 "light), 'red;green' (a pedestrian light)")


_SIGNAL_NAMES = {"red": "red", "amber": "amber", "yellow": "amber", "green": "green", "off": "off",
                 "red_amber": "red_amber", "redamber": "red_amber", "red-amber": "red_amber"}


_SIGNAL_LAMPS = {(True, False, False): "red", (False, True, False): "amber", (False, False, True): "green",
                 (True, True, False): "red_amber", (False, False, False): "off",
                 (True, False): "red", (False, True): "green", (False, False): "off"}


def parse_signal_state(text: str) -> str | None:
    """A signal state as the manifest names it: a name (any case), or the lamp form esmini writes, ``on;off;off``
    (red, amber, green lamps) or ``off;on`` (a pedestrian light's red, green); None for anything else."""
    t = text.strip().lower()
    if ";" in t:
        lamps = [x.strip() for x in t.split(";")]
        if len(lamps) in (2, 3) and all(x in ("on", "off", "flashing") for x in lamps):
            return _SIGNAL_LAMPS.get(tuple(x != "off" for x in lamps))
        return None
    return _SIGNAL_NAMES.get(t)


class Signals(Context):
    """Signal ids and controllers, read against the template's signals."""

    def template_signal(self, ref: str) -> Any:
        """The template signal an OpenSCENARIO signal id names: a simready export numbers them in id order; an
        imported map's are ``signal_<OpenDRIVE id>``; None when there is none."""
        by_id = {s.id: s for s in self.template.signals}
        if self.road_of_lane:
            by_index = {str(k + 1): s for k, s in enumerate(sorted(self.template.signals, key=lambda s: s.id))}
            if ref in by_index:
                return by_index[ref]
        return by_id.get(f"signal_{ref}") or by_id.get(ref) or by_id.get(identifier(ref))

    def signal_programs(self) -> list[dict[str, Any]]:
        """Traffic signal controllers → fixed-time programs of the template signals they drive.

        A controller's phases start at simulation time 0 (manifest time ``-warmup_s``; its ``delay`` shifts them);
        the program is the same cycle written from the rotation whose offset is smallest. A simready export
        numbers the template's signals 1, 2, … in id order; another map's signal ``N`` is template signal
        ``signal_N`` (the map importer's name)."""
        net = self.root.find("RoadNetwork/TrafficSignals")
        out: dict[str, dict[str, Any]] = {}
        for ctrl in (net.findall("TrafficSignalController") if net is not None else []):
            phases: dict[str, list[tuple[str, float]]] = {}
            for ph in ctrl.findall("Phase"):
                dur = self.rd.num(ph, "duration")
                for st in ph.findall("TrafficSignalState"):
                    state = parse_signal_state(self.rd.text(st, "state"))
                    if state is None:
                        raise self.rd.error(st, f"signal state {self.rd.text(st, 'state')!r} is none of "
                                                f"{SIGNAL_FORMS}")
                    phases.setdefault(self.rd.text(st, "trafficSignalId"), []).append((state, dur))
            delay = self.rd.num(ctrl, "delay", 0.0)
            for sig_ref, seq in sorted(phases.items()):
                sig = self.template_signal(sig_ref)
                if sig is None:
                    self.note(ctrl, f"signal {sig_ref} is in no template signal")
                    continue
                seq = [(state, d) for state, d in seq if d > 0]
                start = delay
                if len(seq) > 1 and seq[0][0] == seq[-1][0]:
                    start -= seq[-1][1]
                    seq = [(seq[0][0], seq[0][1] + seq[-1][1])] + seq[1:-1]
                cycle = sum(d for _, d in seq)
                if not seq or cycle <= 0:
                    continue
                best: tuple[float, int] | None = None
                acc = 0.0
                for k in range(len(seq)):
                    offset = round((start + acc - self.warmup) % cycle, 9)
                    offset = 0.0 if abs(offset - cycle) < 1e-6 else offset
                    best = (offset, k) if best is None or offset < best[0] else best
                    acc += seq[k][1]
                assert best is not None  # seq is not empty
                offset, k = best
                rotated = seq[k:] + seq[:k]
                if offset > MAX_CLIP_S or max(d for _, d in rotated) > MAX_CLIP_S:
                    self.note(ctrl, f"signal {sig.id}: a phase or offset longer than {MAX_CLIP_S:g} s")
                    continue
                out[sig.id] = {"id": sig.id, "controls": list(sig.controls), "offset_s": offset,
                               "phases": [{"state": st, "duration_s": d} for st, d in rotated]}
        for sid in sorted(self._signals_used - set(out)):
            # A condition on a signal no controller of the file drives: the map's own fixed-time program.
            sig = next(s for s in self.template.signals if s.id == sid)
            out[sid] = {"id": sid, "controls": list(sig.controls), "offset_s": round(sig.offset_s % sig.cycle_s, 9),
                        "phases": [{"state": "amber" if p.state == "yellow" else p.state, "duration_s": p.duration_s}
                                   for p in sig.program]}
            self.report.approximated.append(
                f"RoadNetwork (signal {sid}): no TrafficSignalController drives it; the map's fixed-time program "
                f"runs it ({', '.join(f'{p.state} {p.duration_s:g} s' for p in sig.program)})")
        return [out[k] for k in sorted(out)]
