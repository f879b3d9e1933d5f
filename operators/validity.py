"""Temporal validity tagging (docs/design.md#validity).

Input: `MemoryUnit`. Output: the same unit with `validity` (type, effective window, cycle
pattern, last verified) assigned from its own text and normalised times. State: none. The
lexicon and promotion calendar are hot-reloaded data (`state/validity/resources/`).
"""

from __future__ import annotations

import bytewax.operators as op
from bytewax.dataflow import Stream, operator

from schemas.memory import MemoryUnit
from state.validity.rules import ValidityData


@operator
def tag_validity(step_id: str, up: Stream[MemoryUnit], *, data: ValidityData) -> Stream[MemoryUnit]:
    return op.map("assign_validity", up, data.tag)
