"""Normalise: language mix, cleaning, sentence split, time expressions.

Input: keyed `InputEvent`. Output: keyed `Turn` for conversation turns (control events do
not become turns; the task state machine reads SessionEnd from the keyed events). State:
none. Key: session id. Relative times are computed from each event's own `ts` (replay-safe).
"""

from __future__ import annotations

import bytewax.operators as op
from bytewax.dataflow import operator
from bytewax.operators import KeyedStream

from schemas.events import ConversationEvent, InputEvent
from state.normalise.turn import NormaliseConfig, Turn, normalise_turn


def turn_of(event: InputEvent, config: NormaliseConfig) -> Turn | None:
    """A normalised turn; None for control events."""
    if not isinstance(event, ConversationEvent):
        return None
    return normalise_turn(event, config)


@operator
def normalise(step_id: str, up: KeyedStream[InputEvent], config: NormaliseConfig) -> KeyedStream[Turn]:
    return op.filter_map_value("normalise_turn", up, lambda event: turn_of(event, config))
