"""Memory unit assembly.

Input: keyed `Turn`. Output: keyed `MemoryUnit` (one or more per turn). State: none.
"""

from __future__ import annotations

import bytewax.operators as op
from bytewax.dataflow import operator
from bytewax.operators import KeyedStream

from schemas.memory import MemoryUnit
from state.normalise.turn import Turn
from state.units.assemble import units_from_turn


@operator
def assemble_units(step_id: str, up: KeyedStream[Turn]) -> KeyedStream[MemoryUnit]:
    return op.flat_map_value("units_from_turn", up, units_from_turn)
