"""Programs from the user's files (SPEC §19): load, check against the interface's contract, register.

A program file is a Python file that imports :mod:`simready.scenario.api` and
defines one or more concrete :class:`~simready.scenario.api.IntentProgram`
subclasses, each with a class attribute ``coverage`` (the mapping a
``data/coverage/<intent>.yaml`` would hold). :func:`load_program_file` imports
it from its path (``importlib``, a module name derived from the file's content
hash, so an edited file is a new module) and instantiates each class with no
arguments. Every problem is one :class:`ProgramError` line naming the file and
where:

* ``line N`` — a syntax error, or an exception raised while the file imports;
* ``exports`` — nothing usable: no concrete ``IntentProgram`` subclass;
* ``<intent>.<what>`` — a declaration that breaks the contract (``name``,
  ``abbrev``, ``needs``, ``coverage``), or an intent id a built-in or another
  file already holds.

While sampling, :class:`GuardedProgram` stands in for a loaded program: an
exception it raises, a proposal that breaks the contract (not a
``Proposal``, another intent id, no ego in the draft), or a proposal that
draws more than :data:`PROPOSAL_DRAW_BUDGET` times from its random streams (a
loop past its budget) becomes a ``ProgramError`` naming the program and the
stage (``check_template``, ``propose``, ``baseline``, ``repair``). The
generator bounds the proposals themselves: a cell closes after
``max_proposals_per_cell`` rejections in a row.

A loaded program's ``provenance`` — the file's name and content hash — goes
into every manifest it yields (``realized["program_file"]``,
``realized["program_sha256"]``), and the file is an input of the DAG
(:mod:`simready.assets.inputs`), so editing it makes exactly its manifests
stale.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import re
import sys
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from simready.common import paths
from simready.common.errors import SimreadyError
from simready.scenario.coverage import CoverageError, CoverageSpec
from simready.scenario.coverage_file import parse_coverage
from simready.scenario.ladder import Proposal, ProposalScene
from simready.scenario.program_base import IntentProgram
from simready.world.affordances import AFFORDANCES

if TYPE_CHECKING:
    from numpy.random import Generator

    from simready.scenario.context import ProgramContext
    from simready.scenario.coverage import Cell
    from simready.scenario.ladder import Fail
    from simready.scenario.streams import StreamSet
    from simready.world.template import WorldTemplate

INTENT_ID = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
ABBREV = re.compile(r"^[a-z][a-z0-9]{0,11}$")
#: Calls on a proposal's random generators after which it is stopped as a loop past its budget (a proposal of a
#: built-in intent makes a few dozen; rejection sampling inside one, e.g. ``GroupDraws.point_where``, is one call).
PROPOSAL_DRAW_BUDGET = 100_000
#: Module names of loaded program files start with this (the rest is the file's content hash).
MODULE_PREFIX = "simready_user_program_"
_T = TypeVar("_T")


class ProgramError(SimreadyError):
    """A program file that cannot be loaded, or a program that raised or broke the interface's contract."""

    kind = "program"


@dataclass(frozen=True)
class Provenance:
    """Where a program came from: its file (as the suite or command named it) and the file's sha256."""

    file: str
    sha256: str


@dataclass
class LoadedProgram:
    program: IntentProgram
    provenance: Provenance
    coverage: CoverageSpec


def resolve_path(path: str | Path) -> Path:
    """A program path as given, else relative to the project root (suites name ``data/programs/x.py``)."""
    p = Path(path)
    if p.is_file() or p.is_absolute():
        return p
    return paths.PROJECT_ROOT / p


def _error_line(exc: BaseException, file: Path) -> int | None:
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if Path(frame.filename) == file:
            return frame.lineno
    return None


def load_program_file(path: str | Path) -> list[LoadedProgram]:
    """Import a program file and check every program it defines (see the module docstring).

    Raises:
        ProgramError: one line naming the file and the line or declaration at fault.
    """
    shown = str(path)
    file = resolve_path(path)
    if not file.is_file():
        raise ProgramError(shown, "", "no such program file")
    data = file.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    try:
        code = compile(data, str(file), "exec")
    except SyntaxError as exc:
        raise ProgramError(shown, f"line {exc.lineno}", f"syntax error: {exc.msg}") from None
    except ValueError as exc:
        raise ProgramError(shown, "", f"not a Python source file: {exc}") from None
    name = MODULE_PREFIX + sha[:16]
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, file)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            exec(code, module.__dict__)
        except Exception as exc:  # noqa: BLE001 - user code: any exception is the file's, reported as one line
            del sys.modules[name]
            line = _error_line(exc, file)
            raise ProgramError(shown, f"line {line}" if line else "", f"raised {type(exc).__name__} while "
                               f"importing: {exc}") from None
    classes = [c for _, c in sorted(vars(module).items()) if inspect.isclass(c) and issubclass(c, IntentProgram)
               and c.__module__ == name and not inspect.isabstract(c)]
    if not classes:
        raise ProgramError(shown, "exports", "nothing usable exported: the file defines no concrete IntentProgram "
                           "subclass (import it from simready.scenario.api and implement check_template, propose, "
                           "baseline)")
    out = []
    for cls in classes:
        where = cls.__name__
        try:
            prog = cls()
        except Exception as exc:  # noqa: BLE001 - user code
            raise ProgramError(shown, f"{where}.__init__", f"raised {type(exc).__name__}: {exc}") from None
        out.append(LoadedProgram(prog, Provenance(shown, sha), _check_declarations(prog, shown)))
    return out


def _check_declarations(prog: IntentProgram, shown: str) -> CoverageSpec:
    where = type(prog).__name__
    if not isinstance(prog.name, str) or not INTENT_ID.match(prog.name):
        raise ProgramError(shown, f"{where}.name", f"intent id {prog.name!r} is not [a-z][a-z0-9_]* (≤ 64)")
    if not isinstance(prog.abbrev, str) or not ABBREV.match(prog.abbrev):
        raise ProgramError(shown, f"{prog.name}.abbrev", f"{prog.abbrev!r} is not [a-z][a-z0-9]* (≤ 12)")
    if not isinstance(prog.description, str) or not prog.description.strip():
        raise ProgramError(shown, f"{prog.name}.description", "a program says what its intent asks for in one sentence")
    unknown = [n for n in prog.needs if n not in AFFORDANCES]
    if unknown:
        raise ProgramError(shown, f"{prog.name}.needs", f"unknown affordance {unknown[0]!r} (known: "
                           f"{', '.join(sorted(AFFORDANCES))})")
    raw = getattr(prog, "coverage", None)
    if not isinstance(raw, Mapping):
        raise ProgramError(shown, f"{prog.name}.coverage", "a program file declares its coverage dimensions and "
                           "cells as a mapping (the format of data/coverage/<intent>.yaml)")
    try:
        spec = parse_coverage(dict(raw), f"{shown}:{prog.name}.coverage")
    except CoverageError as exc:
        raise ProgramError(shown, f"{prog.name}.coverage", f"{exc.field}: {exc.reason}") from None
    if spec.intent != prog.name:
        raise ProgramError(shown, f"{prog.name}.coverage.intent", f"{spec.intent!r} is not the program's name")
    return spec


class GuardedProgram(IntentProgram):
    """A user's program as the generator sees it: its answers checked, its exceptions one line with the stage."""

    def __init__(self, loaded: LoadedProgram) -> None:
        inner = loaded.program
        self.inner = inner
        self.provenance = loaded.provenance
        self.coverage_spec = loaded.coverage
        for attr in ("name", "abbrev", "default_template", "description", "needs", "local_groups"):
            setattr(self, attr, getattr(inner, attr))

    def _fail(self, stage: str, reason: str) -> ProgramError:
        return ProgramError(self.provenance.file, f"{self.name}.{stage}", reason)

    def _call(self, stage: str, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        try:
            return fn(*args, **kwargs)
        except SimreadyError:
            raise
        except Exception as exc:  # noqa: BLE001 - user code: any exception is the program's
            line = _error_line(exc, resolve_path(self.provenance.file))
            at = f" (line {line})" if line else ""
            raise self._fail(stage, f"raised {type(exc).__name__}{at}: {exc}") from None

    def _proposal(self, stage: str, out: object) -> Any:
        if out is None and stage == "repair":
            return None
        if not isinstance(out, Proposal) or not isinstance(out.scene, ProposalScene):
            raise self._fail(stage, f"returned {type(out).__name__}, not a Proposal with a Scene")
        if out.intent != self.name:
            raise self._fail(stage, f"returned a proposal of intent {out.intent!r}")
        if not out.defects and not any(a.get("role") == "ego" for a in out.draft.get("actors", [])):
            raise self._fail(stage, "its draft has no actor with role 'ego' (the metric subject)")
        return out

    def feasibility(self, template: WorldTemplate) -> str | None:
        return self._call("feasibility", self.inner.feasibility, template)

    def check_template(self, ctx: ProgramContext) -> None:
        self._call("check_template", self.inner.check_template, ctx)

    def propose(self, ctx: ProgramContext, cell: Cell | None, sample_id: str, index: int, streams: StreamSet,
                **kw: Any) -> Any:
        return self._proposal("propose", self._call("propose", self.inner.propose, ctx, cell, sample_id, index,
                                                    _Budgeted(streams, self._fail, "propose"), **kw))

    def baseline(self, ctx: ProgramContext, sample_id: str, index: int, streams: StreamSet) -> Any:
        return self._proposal("baseline", self._call("baseline", self.inner.baseline, ctx, sample_id, index,
                                                     _Budgeted(streams, self._fail, "baseline")))

    def repair(self, ctx: ProgramContext, proposal: Proposal, failure: Fail, streams: StreamSet) -> Any:
        return self._proposal("repair", self._call("repair", self.inner.repair, ctx, proposal, failure,
                                                   _Budgeted(streams, self._fail, "repair")))


class _Budgeted:
    """A proposal's streams (everything delegated), whose generators count their calls against
    :data:`PROPOSAL_DRAW_BUDGET`; the values drawn are the streams' own."""

    def __init__(self, streams: StreamSet, fail: Callable[[str, str], ProgramError], stage: str) -> None:
        self._streams, self._fail, self._stage, self._calls = streams, fail, stage, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._streams, name)

    def stream(self, name: str) -> Any:
        return _CountedGenerator(self._streams.stream(name), self)

    def count(self) -> None:
        self._calls += 1
        if self._calls > PROPOSAL_DRAW_BUDGET:
            raise self._fail(self._stage, f"drew from its random streams more than {PROPOSAL_DRAW_BUDGET} times in "
                             "one proposal: a loop past its proposal budget")


class _CountedGenerator:
    def __init__(self, gen: Generator, budget: _Budgeted) -> None:
        self._gen, self._budget = gen, budget

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._gen, name)
        if not callable(attr):
            return attr

        def counted(*args: Any, **kwargs: Any) -> Any:
            self._budget.count()
            return attr(*args, **kwargs)

        return counted


#: Programs loaded from files in this process, by intent id.
USER_PROGRAMS: dict[str, GuardedProgram] = {}


def register_program_files(files: Iterable[str | Path], builtin: Iterable[str]) -> list[str]:
    """Load each file and register its programs; the intent ids, in file order.

    The same file loaded again is one registration (its newer content replaces the older); an intent id that a
    built-in or a different file holds is an error.
    """
    taken = set(builtin)
    intents = []
    for f in files:
        for loaded in load_program_file(f):
            name = loaded.program.name
            have = USER_PROGRAMS.get(name)
            if name in taken:
                raise ProgramError(str(f), f"{name}.name", f"intent id {name!r} is a built-in intent's")
            # One file named two ways (relative to the project, absolute) is the same file.
            if have is not None and resolve_path(have.provenance.file).resolve() != resolve_path(f).resolve():
                raise ProgramError(str(f), f"{name}.name", f"intent id {name!r} is already defined by "
                                   f"{have.provenance.file}")
            if have is None or have.provenance.sha256 != loaded.provenance.sha256:
                USER_PROGRAMS[name] = GuardedProgram(loaded)
            intents.append(name)
    return intents
