"""A promise carries its deadline, even when the deadline was said in the next clause.

"我们会给您退款。三个工作日内到账。" and "We will send you a replacement. It should arrive within 5
business days." are cut into two units: the promise, then the clause with the limit. Recall's
overdue check reads the promise's `MemoryUnit.deadline`, so a promise (a commitment unit, or any
unit with commitment strength) that has no deadline of its own takes the deadline expressions of
the unit right after it in the same turn, when that unit is no promise in its own words. The expressions are
copied as they are (their spans still point into the turn's text); the later unit keeps them too.
"""

from __future__ import annotations

from collections.abc import Sequence

from schemas.memory import MemoryUnit, TimeExpression


def is_promise(unit: MemoryUnit) -> bool:
    return unit.unit_type == "commitment" or unit.commitment_strength > 0


def _own_promise(unit: MemoryUnit) -> bool:
    """A promise in its own words (commitment strength from its own cues): not a clause that only
    continues the promise before it, which the unit typing may also call a commitment from context."""
    return unit.commitment_strength > 0


def _deadlines(unit: MemoryUnit) -> tuple[TimeExpression, ...]:
    return tuple(t for t in unit.times if t.kind == "deadline")


def carry_deadlines(units: Sequence[MemoryUnit]) -> tuple[MemoryUnit, ...]:
    """The turn's units, each promise without a deadline given the next unit's deadlines."""
    out = list(units)
    for i, unit in enumerate(out[:-1]):
        following = out[i + 1]
        if not is_promise(unit) or _deadlines(unit) or _own_promise(following):
            continue
        limits = _deadlines(following)
        if limits:
            out[i] = unit.model_copy(update={"times": unit.times + limits})
    return tuple(out)
