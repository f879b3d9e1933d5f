"""Normalise: language mix, cleaning, sentence split, time expressions.

Input: keyed `SessionStep`. Output: keyed `Turn` for conversation turns (control events
end here). State: none. Key: session id. Relative times are computed from each event's
own `ts` (replay-safe).
"""

from __future__ import annotations

from dataclasses import replace

import bytewax.operators as op
from bytewax.dataflow import operator
from bytewax.operators import KeyedStream

from schemas.events import ConversationEvent
from state.session import SessionStep
from state.turn import NormaliseConfig, Turn, normalise_turn


def turn_of(step: SessionStep, config: NormaliseConfig) -> Turn | None:
    """A normalised turn carrying the session's task id; None for control events."""
    if not isinstance(step.event, ConversationEvent) or step.state is None:
        return None
    return replace(normalise_turn(step.event, config), task_id=step.state.task_id)


@operator
def normalise(step_id: str, up: KeyedStream[SessionStep], config: NormaliseConfig) -> KeyedStream[Turn]:
    return op.filter_map_value("normalise_turn", up, lambda step: turn_of(step, config))
