"""OpenSCENARIO parameters: declarations, ``$name`` references, ``${…}`` expressions, and distribution files.

One module owns the parameter language of ASAM OpenSCENARIO 1.x as the
importer (:mod:`simready.maps.xosc_import`) reads it:

* :func:`evaluate` — a small, safe expression evaluator (a tokenizer and a
  recursive-descent parser; never ``eval``): numbers, ``$name`` references,
  ``+ - * / %``, ``**`` (1.2 power), unary ``-``, parentheses, the functions
  ``round floor ceil sqrt pow sin cos tan asin acos atan abs min max``, the
  comparisons ``== != < <= > >=`` and ``not and or`` (booleans are 1.0 and
  0.0). Every failure is an :class:`ExpressionError` with the reason.
* :class:`Parameters` — scoped declarations: ``resolve`` turns an attribute's
  text (``$speed``, ``${$v0 * 1.1}`` or a literal) into its value;
  an undefined name is an error naming it.
* :func:`distribution_sets` — a ``ParameterValueDistribution`` file's
  deterministic (value sets, ranges, multi-parameter value sets: their
  cartesian product) and stochastic (uniform, normal, log-normal, Poisson,
  histogram, probability set) distributions as a list of parameter
  assignments. Stochastic draws come from one named stream per parameter,
  ``xosc/<parameter>``, of a :class:`~simready.scenario.streams.StreamSet`
  rooted at the file's ``randomSeed`` (or the caller's root), so the same file
  gives the same batch, and adding a parameter changes no other's draws.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from simready.scenario.streams import StreamSet

if TYPE_CHECKING:
    from lxml import etree
    from numpy.random import Generator

__all__ = ["MAX_BATCH", "ExpressionError", "Parameters", "distribution_sets", "evaluate"]

#: Largest batch a distribution file may expand to (a cartesian product grows fast).
MAX_BATCH = 10_000
#: Longest expression read (characters): an attribute is not a program.
MAX_EXPRESSION = 1_000
_FUNCTIONS: dict[str, tuple[int, Callable[..., float]]] = {
    "round": (1, lambda x: float(math.floor(x + 0.5))), "floor": (1, lambda x: float(math.floor(x))),
    "ceil": (1, lambda x: float(math.ceil(x))), "sqrt": (1, math.sqrt), "pow": (2, math.pow),
    "sin": (1, math.sin), "cos": (1, math.cos), "tan": (1, math.tan), "asin": (1, math.asin),
    "acos": (1, math.acos), "atan": (1, math.atan), "abs": (1, abs), "min": (2, min), "max": (2, max),
}
_TOKEN = re.compile(r"\s*(?:(?P<num>\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|(?P<ref>\$[A-Za-z_][\w.]*)"
                    r"|(?P<name>[A-Za-z_]\w*)|(?P<op>\*\*|==|!=|<=|>=|[-+*/%(),<>]))")


class ExpressionError(ValueError):
    """An expression that cannot be evaluated, with the reason."""


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise ExpressionError(f"unexpected {text[pos:].strip()[:20]!r} in expression {text!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class _Parser:
    """Recursive descent; precedence low → high: or, and, not, comparison, + -, * / %, unary -, **, atoms."""

    def __init__(self, text: str, lookup: Callable[[str], float]) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.lookup = lookup

    def peek(self) -> str | None:
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def take(self, want: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.toks):
            raise ExpressionError(f"expression {self.text!r} ends early")
        tok = self.toks[self.i]
        if want is not None and tok[1] != want:
            raise ExpressionError(f"expected {want!r}, found {tok[1]!r} in expression {self.text!r}")
        self.i += 1
        return tok

    def parse(self) -> float:
        value = self.or_()
        if self.i != len(self.toks):
            raise ExpressionError(f"unexpected {self.toks[self.i][1]!r} in expression {self.text!r}")
        return value

    def or_(self) -> float:
        v = self.and_()
        while self.peek() == "or":
            self.take()
            rhs = self.and_()
            v = float(bool(v) or bool(rhs))
        return v

    def and_(self) -> float:
        v = self.not_()
        while self.peek() == "and":
            self.take()
            rhs = self.not_()
            v = float(bool(v) and bool(rhs))
        return v

    def not_(self) -> float:
        if self.peek() == "not":
            self.take()
            return float(not self.not_())
        return self.compare()

    def compare(self) -> float:
        v = self.sum()
        ops = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
               "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
        while self.peek() in ops:
            op = self.take()[1]
            v = float(ops[op](v, self.sum()))
        return v

    def sum(self) -> float:
        v = self.product()
        while self.peek() in ("+", "-"):
            op = self.take()[1]
            rhs = self.product()
            v = v + rhs if op == "+" else v - rhs
        return v

    def product(self) -> float:
        v = self.unary()
        while self.peek() in ("*", "/", "%"):
            op = self.take()[1]
            rhs = self.unary()
            if op != "*" and rhs == 0:
                raise ExpressionError(f"division by zero in expression {self.text!r}")
            v = v * rhs if op == "*" else (v / rhs if op == "/" else math.fmod(v, rhs))
        return v

    def unary(self) -> float:
        if self.peek() == "-":
            self.take()
            return -self.unary()
        if self.peek() == "+":
            self.take()
            return self.unary()
        return self.power()

    def power(self) -> float:
        base = self.atom()
        if self.peek() == "**":
            self.take()
            exp = self.unary()
            try:
                return float(math.pow(base, exp))
            except (OverflowError, ValueError) as exc:
                raise ExpressionError(f"{base} ** {exp}: {exc} in expression {self.text!r}") from None
        return base

    def atom(self) -> float:
        kind, text = self.take()
        if kind == "num":
            return float(text)
        if kind == "ref":
            return self.lookup(text[1:])
        if kind == "name":
            if text in ("true", "false"):
                return 1.0 if text == "true" else 0.0
            if text not in _FUNCTIONS:
                raise ExpressionError(f"unknown function or bare name {text!r} in expression {self.text!r} "
                                      "(parameters are written $name)")
            arity, fn = _FUNCTIONS[text]
            self.take("(")
            args = [self.or_()]
            while self.peek() == ",":
                self.take()
                args.append(self.or_())
            self.take(")")
            if len(args) != arity:
                raise ExpressionError(f"{text} takes {arity} argument(s), got {len(args)} in expression {self.text!r}")
            try:
                return float(fn(*args))
            except (ValueError, OverflowError) as exc:
                raise ExpressionError(f"{text}{tuple(args)}: {exc} in expression {self.text!r}") from None
        if text == "(":
            v = self.or_()
            self.take(")")
            return v
        raise ExpressionError(f"unexpected {text!r} in expression {self.text!r}")


def evaluate(text: str, lookup: Callable[[str], Any]) -> float:
    """The value of expression ``text`` (without ``${`` ``}``); ``lookup(name)`` gives a parameter's value."""
    if len(text) > MAX_EXPRESSION:
        raise ExpressionError(f"expression longer than {MAX_EXPRESSION} characters")

    def number(name: str) -> float:
        value = lookup(name)
        if isinstance(value, bool):
            return 1.0 if value else 0.0
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ExpressionError(f"parameter ${name} = {value!r} is not a number") from None

    value = _Parser(text, number).parse()
    if not math.isfinite(value):
        raise ExpressionError(f"expression {text!r} is not finite")
    return value


@dataclass
class Parameters:
    """Declared parameters, innermost scope last; ``overrides`` (a drawn set) win over declarations."""

    scopes: list[dict[str, str]] = field(default_factory=lambda: [{}])
    overrides: Mapping[str, Any] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)

    def declare(self, name: str, value: str) -> None:
        self.scopes[-1][name] = str(self.overrides[name]) if name in self.overrides and len(self.scopes) == 1 \
            else value

    def push(self, values: Mapping[str, str] | None = None) -> None:
        self.scopes.append(dict(values or {}))

    def pop(self) -> None:
        self.scopes.pop()

    def lookup(self, name: str) -> str:
        for scope in reversed(self.scopes):
            if name in scope:
                self.used.add(name)
                return scope[name]
        raise ExpressionError(f"undefined parameter ${name}")

    def resolve(self, text: str) -> str:
        """``$name`` → its value, ``${expr}`` → the expression's value (as text); anything else as written."""
        stripped = text.strip()
        if stripped.startswith("${") and stripped.endswith("}"):
            value = evaluate(stripped[2:-1], lambda n: self.resolve(self.lookup(n)))
            return _number_text(value)
        if stripped.startswith("$") and re.fullmatch(r"\$[A-Za-z_][\w.]*", stripped):
            return self.resolve(self.lookup(stripped[1:]))
        return text


def _number_text(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


# --- distributions -------------------------------------------------------------------------------------------


def _range(el: etree._Element, number: Callable[[Any, str], float]) -> tuple[float, float]:
    rng = el.find("Range")
    if rng is None:
        raise ExpressionError(f"<{el.tag}> has no <Range> (line {el.sourceline})")
    lo, hi = number(rng, "lowerLimit"), number(rng, "upperLimit")
    if hi < lo:
        raise ExpressionError(f"<Range> upperLimit {hi} < lowerLimit {lo} (line {rng.sourceline})")
    return lo, hi


def _deterministic(el: etree._Element, number: Callable[[Any, str], float]) -> list[list[dict[str, str]]]:
    """Per deterministic distribution, its list of assignments (to be multiplied out)."""
    factors: list[list[dict[str, str]]] = []
    for single in el.findall("DeterministicSingleParameterDistribution"):
        name = single.get("parameterName")
        if not name:
            raise ExpressionError(f"<DeterministicSingleParameterDistribution> has no parameterName "
                                  f"(line {single.sourceline})")
        values: list[str] = []
        dset = single.find("DistributionSet")
        drange = single.find("DistributionRange")
        if dset is not None:
            values = [e.get("value", "") for e in dset.findall("Element")]
        elif drange is not None:
            step = number(drange, "stepWidth")
            lo, hi = _range(drange, number)
            if step <= 0:
                raise ExpressionError(f"<DistributionRange> stepWidth {step} is not positive (line {drange.sourceline})")
            n = int(math.floor((hi - lo) / step + 1e-9)) + 1
            if n > MAX_BATCH:
                raise ExpressionError(f"<DistributionRange> gives {n} values, more than {MAX_BATCH} "
                                      f"(line {drange.sourceline})")
            values = [_number_text(round(lo + k * step, 12)) for k in range(n)]
        else:
            raise ExpressionError(f"parameter {name}: neither <DistributionSet> nor <DistributionRange> "
                                  f"(line {single.sourceline})")
        if not values:
            raise ExpressionError(f"parameter {name}: empty distribution (line {single.sourceline})")
        factors.append([{name: v} for v in values])
    for multi in el.findall("DeterministicMultiParameterDistribution"):
        sets = []
        for pvs in multi.iter("ParameterValueSet"):
            sets.append({a.get("parameterRef", ""): a.get("value", "") for a in pvs.findall("ParameterAssignment")})
        if not sets:
            raise ExpressionError(f"<DeterministicMultiParameterDistribution> has no <ParameterValueSet> "
                                  f"(line {multi.sourceline})")
        factors.append(sets)
    return factors


def _draw(el: etree._Element, rng: Generator, number: Callable[[Any, str], float]) -> float:
    """One draw of a stochastic distribution element from generator ``rng``."""
    for kind in ("UniformDistribution", "NormalDistribution", "LogNormalDistribution", "PoissonDistribution",
                 "Histogram", "ProbabilityDistributionSet"):
        d = el.find(kind)
        if d is None:
            continue
        bounds = _range(d, number) if d.find("Range") is not None else None
        if kind == "UniformDistribution":
            lo, hi = _range(d, number)
            return float(rng.uniform(lo, hi))
        if kind == "ProbabilityDistributionSet":
            elements = d.findall("Element")
            weights = [number(e, "weight") for e in elements]
            if not elements or sum(weights) <= 0:
                raise ExpressionError(f"<ProbabilityDistributionSet> has no positive weights (line {d.sourceline})")
            k = int(rng.choice(len(elements), p=[w / sum(weights) for w in weights]))
            return float(elements[k].get("value", "nan"))
        if kind == "Histogram":
            bins = d.findall("Bin")
            weights = [number(b, "weight") for b in bins]
            if not bins or sum(weights) <= 0:
                raise ExpressionError(f"<Histogram> has no positive bin weights (line {d.sourceline})")
            k = int(rng.choice(len(bins), p=[w / sum(weights) for w in weights]))
            lo, hi = _range(bins[k], number)
            return float(rng.uniform(lo, hi))
        for _ in range(1000):  # a bounded distribution: redraw until inside its range (rejection)
            if kind == "NormalDistribution":
                v = float(rng.normal(number(d, "expectedValue"), math.sqrt(number(d, "variance"))))
            elif kind == "LogNormalDistribution":
                v = float(rng.lognormal(number(d, "expectedValue"), math.sqrt(number(d, "variance"))))
            else:
                v = float(rng.poisson(number(d, "expectedValue")))
            if bounds is None or bounds[0] <= v <= bounds[1]:
                return v
        raise ExpressionError(f"<{kind}> draws fall outside its <Range> (line {d.sourceline})")
    raise ExpressionError(f"<StochasticDistribution> has no distribution this importer reads (line {el.sourceline})")


def distribution_sets(dist: etree._Element, root: str | None = None) -> list[dict[str, str]]:
    """The parameter assignments of a ``<ParameterValueDistribution>`` element (lxml), in a fixed order.

    Deterministic: the cartesian product of its distributions (in file order).
    Stochastic: ``numberOfTestRuns`` draws, parameter ``p``'s from stream
    ``xosc/p`` of ``StreamSet(root or "xosc-seed-<randomSeed>")``. Both present:
    every deterministic set is combined with every stochastic draw.
    """
    def number(el: etree._Element, name: str) -> float:
        raw = el.get(name)
        try:
            return float(raw)
        except (TypeError, ValueError):
            raise ExpressionError(f"<{el.tag}> {name}={raw!r} is not a number (line {el.sourceline})") from None

    det = dist.find("Deterministic")
    sto = dist.find("Stochastic")
    if det is None and sto is None:
        raise ExpressionError(f"<ParameterValueDistribution> has neither <Deterministic> nor <Stochastic> "
                              f"(line {dist.sourceline})")
    sets: list[dict[str, str]] = [{}]
    if det is not None:
        factors = _deterministic(det, number)
        if math.prod(len(f) for f in factors) > MAX_BATCH:
            raise ExpressionError(f"<Deterministic> expands to more than {MAX_BATCH} sets (line {det.sourceline})")
        sets = [{k: v for part in combo for k, v in part.items()} for combo in itertools.product(*factors)] or [{}]
    if sto is not None:
        runs = int(number(sto, "numberOfTestRuns"))
        if not 1 <= runs <= MAX_BATCH:
            raise ExpressionError(f"<Stochastic> numberOfTestRuns {runs} is not in [1, {MAX_BATCH}] "
                                  f"(line {sto.sourceline})")
        streams = StreamSet(root or f"xosc-seed-{sto.get('randomSeed', '0')}")
        per_param = {}
        for d in sto.findall("StochasticDistribution"):
            name = d.get("parameterName")
            if not name:
                raise ExpressionError(f"<StochasticDistribution> has no parameterName (line {d.sourceline})")
            rng = streams.stream(f"xosc/{name}")
            per_param[name] = [_number_text(round(_draw(d, rng, number), 9)) for _ in range(runs)]
        draws = [{name: values[k] for name, values in per_param.items()} for k in range(runs)]
        if len(sets) * len(draws) > MAX_BATCH:
            raise ExpressionError(f"the distributions expand to more than {MAX_BATCH} sets (line {sto.sourceline})")
        sets = [{**s, **d} for s in sets for d in draws]
    return sets
