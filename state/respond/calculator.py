"""The calculator route (docs/design.md#responder): numeric questions are computed,
never left to the language model.

Input: the question text and the calculator table. Output: a `Calculation` (what was computed
and the result) or None when the question is not numeric. A question qualifies with at least
`min_numbers` quantities and an operator: a written expression (15000-8000, 3×(4+5)) or an
operation phrase (月薪15000房贷8000每月能存多少 → remainder 15000 − 8000 = 7000). Dates, clock
times, order ids and phone numbers are blanked first: they are numbers, not quantities.

Evaluation is a small recursive-descent parser over + − × ÷ % and parentheses: no `eval`, no
names, no exponent, bounded length, depth and magnitude. Pure functions, no state.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from schemas.errors import CalculationError
from schemas.response import Calculation
from state.respond.tables import CalculatorTable

Operation = Literal["remainder", "sum", "difference", "product", "quotient", "mean"]

_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_MAX_DEPTH = 16


@dataclass(frozen=True, slots=True)
class Quantity:
    value: float
    start: int
    end: int


@lru_cache(maxsize=8)
def _patterns(
    units: tuple[str, ...], not_quantities: tuple[str, ...]
) -> tuple[re.Pattern[str], tuple[re.Pattern[str], ...]]:
    unit_alt = "|".join(sorted((re.escape(u) for u in units), key=len, reverse=True))
    quantity = re.compile(rf"(?<![\d.])({_NUMBER})\s*({unit_alt})?(?![\d])" if unit_alt else rf"(?<![\d.])({_NUMBER})")
    return quantity, tuple(re.compile(p) for p in not_quantities)


def _blank_non_quantities(text: str, table: CalculatorTable) -> str:
    """Replace dates, clock times, ids and phone numbers by spaces (offsets stay put)."""
    _, blanks = _patterns(tuple(table.units), table.not_quantities)
    for pattern in blanks:
        text = pattern.sub(lambda m: " " * len(m.group(0)), text)
    return text


def find_quantities(text: str, table: CalculatorTable) -> list[Quantity]:
    """Quantities in reading order, with magnitude suffixes applied (1.5万 → 15000).

    >>> from state.respond.tables import decision_tables
    >>> t = decision_tables().get().calculator
    >>> [q.value for q in find_quantities("月薪1.5万，房贷8k，订单号 88231 在 5月3日", t)]
    [15000.0, 8000.0]
    """
    quantity, _ = _patterns(tuple(table.units), table.not_quantities)
    cleaned = _blank_non_quantities(text, table)
    out: list[Quantity] = []
    for m in quantity.finditer(cleaned):
        value = float(m.group(1).replace(",", ""))
        unit = m.group(2) if m.lastindex and m.lastindex >= 2 else None
        if unit:
            value *= table.units[unit]
        out.append(Quantity(value, m.start(), m.end()))
    return out


def _fmt(value: float) -> str:
    """Whole numbers without a decimal point, others to at most 2 places.

    >>> _fmt(7000.0), _fmt(2.5), _fmt(1/3)
    ('7000', '2.5', '0.33')
    """
    if math.isfinite(value) and value == int(value):
        return str(int(value))
    return f"{value:.2f}".rstrip("0").rstrip(".")


# ---- written expressions -----------------------------------------------------------------


class _Parser:
    """expr := term (('+'|'-') term)*; term := unary (('*'|'/'|'%') unary)*;
    unary := '-' unary | atom; atom := NUMBER | '(' expr ')'."""

    def __init__(self, tokens: list[str | float], limit: float) -> None:
        self._tokens = tokens
        self._pos = 0
        self._limit = limit
        self._depth = 0

    def parse(self) -> float:
        value = self._expr()
        if self._pos != len(self._tokens):
            raise CalculationError(f"unexpected {self._tokens[self._pos]!r} in expression")
        return value

    def _peek(self) -> str | float | None:
        return self._tokens[self._pos] if self._pos < len(self._tokens) else None

    def _take(self) -> str | float:
        token = self._peek()
        if token is None:
            raise CalculationError("expression ends early")
        self._pos += 1
        return token

    def _check(self, value: float) -> float:
        if not math.isfinite(value) or abs(value) > self._limit:
            raise CalculationError(f"result {value} out of range")
        return value

    def _expr(self) -> float:
        value = self._term()
        while self._peek() in ("+", "-"):
            op = self._take()
            rhs = self._term()
            value = self._check(value + rhs if op == "+" else value - rhs)
        return value

    def _term(self) -> float:
        value = self._unary()
        while self._peek() in ("*", "/", "%"):
            op = self._take()
            rhs = self._unary()
            if op == "*":
                value = self._check(value * rhs)
            elif rhs == 0:
                raise CalculationError("division by zero")
            else:
                value = self._check(value / rhs if op == "/" else math.fmod(value, rhs))
        return value

    def _unary(self) -> float:
        if self._peek() == "-":
            self._take()
            return -self._unary()
        return self._atom()

    def _atom(self) -> float:
        item = self._take()
        if isinstance(item, float):
            return self._check(item)
        if item == "(":
            self._depth += 1
            if self._depth > _MAX_DEPTH:
                raise CalculationError("parentheses nested too deeply")
            value = self._expr()
            if self._take() != ")":
                raise CalculationError("unbalanced parentheses")
            self._depth -= 1
            return value
        raise CalculationError(f"unexpected {item!r} in expression")


def evaluate(expression: str, table: CalculatorTable) -> float:
    """Evaluate a written arithmetic expression safely.

    >>> from state.respond.tables import decision_tables
    >>> t = decision_tables().get().calculator
    >>> evaluate("3×(4+5) - 10 ÷ 4", t)
    24.5
    """
    if len(expression) > table.max_expression_chars:
        raise CalculationError(f"expression longer than {table.max_expression_chars} characters")
    tokens = _tokenise(expression, table)
    if not tokens:
        raise CalculationError("empty expression")
    return _Parser(tokens, table.max_abs_value).parse()


def _tokenise(expression: str, table: CalculatorTable) -> list[str | float]:
    symbols = sorted(table.symbols, key=len, reverse=True)
    number = re.compile(_NUMBER)
    tokens: list[str | float] = []
    i = 0
    while i < len(expression):
        ch = expression[i]
        if ch.isspace():
            i += 1
            continue
        m = number.match(expression, i)
        if m:
            value = float(m.group(0).replace(",", ""))
            unit = next(
                (u for u in sorted(table.units, key=len, reverse=True) if expression.startswith(u, m.end())), None
            )
            if unit is not None:
                value *= table.units[unit]
            tokens.append(value)
            i = m.end() + (len(unit) if unit else 0)
            continue
        if ch in "()（）":
            tokens.append("(" if ch in "(（" else ")")
            i += 1
            continue
        sym = next((s for s in symbols if expression.startswith(s, i)), None)
        if sym is None:
            raise CalculationError(f"unexpected {ch!r} in expression")
        tokens.append(table.symbols[sym])
        i += len(sym)
    return tokens


def _written_expression(text: str, table: CalculatorTable) -> str | None:
    """The longest run of numbers joined by operator symbols, if it has ≥ min_numbers numbers."""
    units = "|".join(sorted((re.escape(u) for u in table.units), key=len, reverse=True))
    syms = "|".join(sorted((re.escape(s) for s in table.symbols), key=len, reverse=True))
    num = rf"(?:{_NUMBER})(?:{units})?" if units else rf"(?:{_NUMBER})"
    run = re.compile(rf"[(（\s]*-?{num}[)）\s]*(?:(?:{syms})[(（\s]*-?{num}[)）\s]*)+")
    cleaned = _blank_non_quantities(text, table)
    best: str | None = None
    for m in run.finditer(cleaned):
        candidate = m.group(0).strip()
        if len(re.findall(_NUMBER, candidate)) >= table.min_numbers and (best is None or len(candidate) > len(best)):
            best = candidate
    return best


# ---- operation phrases -------------------------------------------------------------------


def _operation_of(text: str, table: CalculatorTable) -> Operation | None:
    lowered = text.lower()
    hits: list[tuple[int, Operation]] = []
    for name, phrases in table.operations.items():
        for phrase in phrases:
            pos = lowered.find(phrase.lower())
            if pos >= 0:
                hits.append((pos, name))  # type: ignore[arg-type]
    return min(hits)[1] if hits else None


def _apply(operation: Operation, values: list[float]) -> tuple[str, float]:
    shown = [_fmt(v) for v in values]
    if operation == "remainder":
        return " − ".join(shown), values[0] - sum(values[1:])
    if operation == "sum":
        return " + ".join(shown), sum(values)
    if operation == "difference":
        return f"|{shown[0]} − {shown[1]}|", abs(values[0] - values[1])
    if operation == "product":
        return " × ".join(shown), math.prod(values)
    if operation == "quotient":
        if values[1] == 0:
            raise CalculationError("division by zero")
        return f"{shown[0]} ÷ {shown[1]}", values[0] / values[1]
    return f"({' + '.join(shown)}) ÷ {len(values)}", sum(values) / len(values)


def calculate(text: str, table: CalculatorTable) -> Calculation | None:
    """The calculator's answer to a numeric question, or None when the question is not one.

    >>> from state.respond.tables import decision_tables
    >>> t = decision_tables().get().calculator
    >>> c = calculate("月薪15000房贷8000每月能存多少", t)
    >>> (c.expression, c.result, c.operation)
    ('15000 − 8000', 7000.0, 'remainder')
    >>> calculate("我的订单 88231 什么时候到", t) is None
    True
    """
    written = _written_expression(text, table)
    if written is not None:
        result = evaluate(written, table)
        return Calculation(expression=written, result=result, operation="expression")
    quantities = find_quantities(text, table)
    if len(quantities) < table.min_numbers:
        return None
    operation = _operation_of(text, table)
    if operation is None:
        return None
    values = [q.value for q in quantities]
    expression, result = _apply(operation, values)
    if not math.isfinite(result) or abs(result) > table.max_abs_value:
        raise CalculationError(f"result {result} out of range")
    return Calculation(expression=expression, result=result, operation=operation)


def format_answer(calculation: Calculation, lang: str, table: CalculatorTable) -> str:
    """The calculator route's reply in the user's language.

    >>> from state.respond.tables import decision_tables
    >>> t = decision_tables().get().calculator
    >>> format_answer(Calculation(expression="15000 − 8000", result=7000.0, operation="remainder"), "zh", t)
    '计算结果：15000 − 8000 = 7000。'
    """
    template = table.answer.zh if lang in ("zh", "mixed") else table.answer.en
    return template.format(expression=calculation.expression, result=_fmt(calculation.result))
