"""Suites: which intents each template contributes, in batches of samples.

A batch is the unit of orchestration (one Dagster partition per template ×
batch), because Dagster's per-run cost is seconds while one sample costs
milliseconds. Batch ``b<k>`` of a template holds, for each intent, the
accepted samples with indices ``[k·n, (k+1)·n)`` — so batches are independent
and a new batch never changes an old one.
"""

from __future__ import annotations

from pathlib import Path

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, PositiveInt, ValidationError

from simready.common import paths
from simready.common.errors import SimreadyError, pydantic_reason
from simready.common.identifiers import Identifier
from simready.common.loading import load_yaml
from simready.scenario.traffic_spec import TrafficSpec

SUITES_DIR = paths.DATA_DIR / "suites"
BATCH_PREFIX = "b"
#: Stated bounds: batches a suite registers, accepted samples per intent and batch.
MAX_BATCHES = 10_000
MAX_SAMPLES_PER_INTENT = 10_000
#: Default draws per intent of a template's realism reference pool: enough that the distribution check's
#: leave-one-draw-out noise level bounds the 95th percentile of a nominal scenario's divergence with 81 %
#: confidence (see :mod:`simready.validity.policy`, docs/realism.md); a draw costs ≈ 0.2 s of rollout.
REFERENCE_PER_INTENT = 32
#: Longest review window on either side of the decision (s).
MAX_WINDOW_S = 600.0
#: A colliding branch is observed until this long after its collision is over (s): the clip shows the outcome.
OUTCOME_TAIL_S = 0.5


class SuiteError(SimreadyError):
    kind = "suite"


class ObservationPlan(BaseModel):
    """How the suite's samples are observed: a review window around the decision, at reduced resolution.

    The base trace is observed over ``[t_d - pre_s, t_d + post_s]`` around the
    decision time ``t_d`` of its matched branches (clamped to the clip), and,
    with ``branches``, every branch over ``[t_d, t_d + post_s]`` — before
    ``t_d`` a branch's history is the base's, byte for byte; a branch whose
    subject collides is observed on until ``outcome_tail_s`` after that
    collision is over (its ``t_settled``), so its clips show the outcome
    (``null``: branches stop at ``post_s``). ``branch_truth`` adds perception
    truth to the branches (the base always has it). ``set``: rig overrides
    (``--set`` syntax) recorded in each ``render.json``. ``compressed``: write
    each published file's lossless compressed variant (``depth.f32.bin.zst``,
    ``<tick>.ply.zst``, PNGs at zlib level 6), which the exports, review pages
    and releases read as they read the published files.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    pre_s: Annotated[NonNegativeFloat, Field(le=MAX_WINDOW_S)] = 0.5
    post_s: Annotated[NonNegativeFloat, Field(le=MAX_WINDOW_S)] = 1.0
    branches: bool = True
    branch_truth: bool = False
    outcome_tail_s: Annotated[NonNegativeFloat, Field(le=MAX_WINDOW_S)] | None = OUTCOME_TAIL_S
    set: tuple[str, ...] = ()
    video: bool = True
    compressed: bool = False


class Suite(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    suite_id: Identifier
    batches: Annotated[PositiveInt, Field(le=MAX_BATCHES)]
    observation: ObservationPlan = ObservationPlan()
    #: Accepted scenarios per intent in each template's realism reference pool
    #: (drawn from the ``reference`` root, see :mod:`simready.validity.reference_pool`).
    reference_per_intent: Annotated[PositiveInt, Field(le=MAX_SAMPLES_PER_INTENT)] = REFERENCE_PER_INTENT
    #: Program files (``data/programs/x.py``, relative to the project root unless absolute) whose intents the
    #: templates may name beside the built-ins (SPEC §19).
    programs: tuple[Annotated[str, Field(min_length=1, max_length=512)], ...] = Field(default=(), max_length=64)
    templates: dict[Identifier, Annotated[dict[Identifier, Annotated[PositiveInt, Field(le=MAX_SAMPLES_PER_INTENT)]],
                                          Field(min_length=1)]] = Field(min_length=1)
    #: Background traffic per template and intent (SPEC §20); a template × intent not named here has none.
    traffic: dict[Identifier, dict[Identifier, TrafficSpec]] = Field(default_factory=dict)

    def batch_keys(self) -> list[str]:
        return [batch_key(k) for k in range(self.batches)]

    def intents_for(self, template_id: str) -> dict[str, int]:
        return dict(sorted(self.templates.get(template_id, {}).items()))

    def traffic_for(self, template_id: str, intent: str) -> TrafficSpec | None:
        """The background traffic the suite asks for on ``template_id`` × ``intent``; None when it asks for none."""
        spec = self.traffic.get(template_id, {}).get(intent)
        return None if spec is None or spec.empty else spec


def batch_key(index: int) -> str:
    return f"{BATCH_PREFIX}{index:04d}"


def batch_index(key: str) -> int:
    """The index of batch ``key``, one of :func:`batch_key`'s ``b0000`` … ``b9999``.

    Raises:
        SuiteError: any other key, ``b12`` too: it would be batch 12 again under a second name, with the same
            samples in two partitions.
    """
    digits = key[len(BATCH_PREFIX):]
    if not (key.startswith(BATCH_PREFIX) and digits.isascii() and digits.isdigit() and len(digits) == 4):
        raise SuiteError(key, "batch", f"batch key {key!r} is not of the form b0000 (b and four digits, b0000 … b9999)")
    return int(digits)


def suite_plan(path: str | Path) -> dict[str, Any]:
    """What a suite file decides about the samples: its parsed content less ``batches`` (adding a batch adds
    partitions and changes no existing one), the data version of the suite as an input (SPEC §1).

    Raises:
        SuiteError: one line naming the file, when it is not YAML.
    """
    data = load_yaml(Path(path), SuiteError)
    return {k: v for k, v in data.items() if k != "batches"} if isinstance(data, dict) else {"": data}


def load_suite(path: str | Path | None = None, templates_dir: str | Path = paths.TEMPLATES_DIR) -> Suite:
    """Read and validate a suite; every template it names must be a ``<id>.yaml`` in ``templates_dir``.

    Raises:
        SuiteError: one line naming the file and field (unknown template or intent, an empty intent map, bounds,
            malformed YAML). :func:`simready.runner.suite_check.check_suite` checks it against the templates too.
    """
    path = Path(path) if path else paths.SUITE_FILE
    data = load_yaml(path, SuiteError)
    try:
        suite = Suite.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise SuiteError(path, ".".join(str(p) for p in err["loc"]), pydantic_reason(err)) from None
    # Imported here: the programs' registry is what the schema alone never needs.
    from simready.scenario.program_files import ProgramError
    from simready.scenario.programs import known, load_programs

    for k, f in enumerate(suite.programs):
        try:
            load_programs([f])
        except ProgramError as exc:
            raise SuiteError(path, f"programs[{k}]", exc.one_line()) from None
    for template_id, specs in suite.traffic.items():
        for intent in specs:
            if intent not in suite.templates.get(template_id, {}):
                raise SuiteError(path, f"traffic.{template_id}.{intent}",
                                 "traffic for a template × intent the suite does not sample (name it under templates)")
    for template_id, intents in suite.templates.items():
        if not (Path(templates_dir) / f"{template_id}.yaml").is_file():
            raise SuiteError(path, f"templates.{template_id}", f"unknown template (no {template_id}.yaml in {templates_dir})")
        for intent in intents:
            if intent not in known():
                raise SuiteError(path, f"templates.{template_id}.{intent}",
                                 f"unknown intent (known: {', '.join(known())})")
    return suite


def check_intents(suite: Suite, path: str | Path, templates_dir: str | Path = paths.TEMPLATES_DIR) -> None:
    """Every intent a suite names is known and its template affords it (SPEC §18).

    Apart from :func:`load_suite` because it loads every template (≈ 0.1 s each) and the programs: the runners
    that generate call it before they write anything (``make run``, a batch).

    Raises:
        SuiteError: one line naming the file and ``templates.<template>.<intent>``: an unknown intent, or the
            intent's feasibility line (the first map affordance the template lacks); or
            ``traffic.<template>.<intent>.<density>``: a density beyond what the map can hold.
    """
    # Imported here: the Dagster definitions load this module, and the programs are heavy to import.
    from simready.scenario.programs import known, program
    from simready.world.template import load_template

    for template_id, intents in sorted(suite.templates.items()):
        template = None
        for intent in sorted(intents):
            where = f"templates.{template_id}.{intent}"
            if intent not in known():
                raise SuiteError(path, where, f"unknown intent {intent!r} (known: {', '.join(known())})")
            template = template or load_template(Path(templates_dir) / f"{template_id}.yaml")
            line = program(intent).feasibility(template)
            if line is not None:
                raise SuiteError(path, where, f"{intent} cannot run on {template_id}: {line}")
            traffic = suite.traffic_for(template_id, intent)
            if traffic is not None and not traffic.empty:
                # A density beyond what the map can hold (SPEC §20): the spawner would place fewer, silently.
                from simready.scenario.generator import make_context  # cost: ~0.3 s, only with traffic
                from simready.scenario.traffic import TrafficError, check_capacity  # cost: only with traffic

                try:
                    check_capacity(make_context(template, intent), traffic, path, f"traffic.{template_id}.{intent}")
                except TrafficError as exc:
                    raise SuiteError(exc.source, exc.field, exc.reason) from None
