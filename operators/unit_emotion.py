"""Emotion of each memory unit (docs/design.md#tagging), after the entropy cut: lexicon, head, and carry.

Input: keyed `Turn` with its unit cut, or `SessionClosed`. Output: the same turn with
`unit_emotion` filled (the lexicon's emotion of each unit mixed with the head's, read from the
unit text's vector, then the speaker's running stress carried in; `stress_carry` among the cues of
the segments it moved). State: `CarryState` per session id (the running stress of at most 8 recent
speakers). Key: session id. Discarded: a `SessionClosed` marks the state ended (or starts an
ended one) and arms a short grace timer (the entropy stage releases the session's last turn on the
same closing, so it may arrive just after: it still carries; a later turn starts fresh), and the
idle timer (`idle_ttl` of processing time after the last turn) drops it. The logic is
`state.units.emotion.unit_emotion_turn`; then, with a unit-type head, each unit's type from the
rules and the head together (`state.units.unit_type.type_units`). The heads read vectors through
the store's shared cache (flows/tagging_stage.py), so the store embedding of these units is a
cache hit, not a second call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import bytewax.operators as op
from bytewax.dataflow import operator
from bytewax.operators import KeyedStream, StatefulLogic

from state.core.closing import SessionClosed
from state.normalise.turn import Turn
from state.tagging.lexicon import TagLexicon
from state.tagging.tagger import IntentHead
from state.units.emotion import CarryState, end_session, unit_emotion_turn
from state.units.unit_type import TypeBlend, TypeReader, type_units

Item = Turn | SessionClosed


@dataclass(frozen=True)
class UnitEmotionConfig:
    weight: float = 0.5  # the head's emotion: 0 = lexicon only, 1 = head only
    idle_ttl: timedelta = timedelta(hours=1)
    end_grace: timedelta = timedelta(seconds=30)
    type_blend: TypeBlend = field(default_factory=TypeBlend)


class _UnitEmotionLogic(StatefulLogic[Item, Turn, CarryState | None]):
    def __init__(
        self,
        state: CarryState | None,
        config: UnitEmotionConfig,
        lexicon: Callable[[], TagLexicon],
        head: IntentHead | None,
        clock: Callable[[], datetime],
        type_head: TypeReader | None = None,
    ) -> None:
        self._state = state
        self._type_head = type_head
        self._config = config
        self._lexicon = lexicon
        self._head = head
        self._clock = clock
        self._wake: datetime | None = None
        if state is not None:
            self._wake = clock() + (config.end_grace if state.ended_at is not None else config.idle_ttl)

    def on_item(self, value: Item) -> tuple[Iterable[Turn], bool]:
        if isinstance(value, SessionClosed):
            self._state = end_session(self._state, value.ts)
            self._wake = self._clock() + self._config.end_grace
            return ((), StatefulLogic.RETAIN)
        self._state, turn = unit_emotion_turn(
            self._state, value, self._lexicon(), head=self._head, head_weight=self._config.weight
        )
        turn = type_units(turn, self._type_head, self._config.type_blend)
        if self._state.ended_at is None:
            self._wake = self._clock() + self._config.idle_ttl
        return ((turn,), StatefulLogic.RETAIN)

    def on_notify(self) -> tuple[Iterable[Turn], bool]:
        return ((), StatefulLogic.DISCARD)

    def notify_at(self) -> datetime | None:
        return self._wake

    def snapshot(self) -> CarryState | None:
        return self._state


@operator
def unit_emotion(
    step_id: str,
    up: KeyedStream[Item],
    config: UnitEmotionConfig,
    *,
    head: IntentHead | None,
    lexicon: Callable[[], TagLexicon],
    clock: Callable[[], datetime],
    type_head: TypeReader | None = None,
) -> KeyedStream[Turn]:
    return op.stateful(
        "unit_emotion_logic", up, lambda resume: _UnitEmotionLogic(resume, config, lexicon, head, clock, type_head)
    )
