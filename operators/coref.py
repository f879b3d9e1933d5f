"""Coreference with dynamic windows (docs/design.md#coreference): a keyed stateful operator over `state.coref.resolver`.

Input: keyed `Turn | CorefSessionEnd` (the session's turns, and a marker when it ends). Output:
keyed `Turn` with `coref` filled (anchors in text order). State: `CorefState` per session id —
at most `wide_window` (80) mentions, the focus type, the last event time. Key: session id.
Discarded: a `CorefSessionEnd` marks the state ended at the event's time and arms a short grace
timer (turns of the ended session still in flight resolve the same; a later turn starts fresh),
and the idle timer (`idle_ttl` of processing time after the last item) drops it.

The lexicon and entity dictionary come from the injected getter (`HotFile.get`): editing the
YAML files changes the next turn's result without a restart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

import bytewax.operators as op
from bytewax.dataflow import operator
from bytewax.operators import KeyedStream, StatefulLogic

from state.coref.lexicon import CorefLexicon
from state.coref.resolver import CorefConfig, CorefState, CorefTurn, end_session, resolve_turn
from state.normalise.turn import Turn


@dataclass(frozen=True, slots=True)
class CorefSessionEnd:
    """The session ended at `ts` (from a SessionEnd event)."""

    ts: datetime


@dataclass(frozen=True)
class CorefOperatorConfig:
    resolver: CorefConfig = field(default_factory=CorefConfig)
    idle_ttl: timedelta = timedelta(hours=1)
    end_grace: timedelta = timedelta(seconds=30)


class _CorefLogic(StatefulLogic[Turn | CorefSessionEnd, Turn, CorefState | None]):
    def __init__(
        self,
        state: CorefState | None,
        config: CorefOperatorConfig,
        lexicon: Callable[[], CorefLexicon],
        clock: Callable[[], datetime],
    ) -> None:
        self._state = state
        self._config = config
        self._lexicon = lexicon
        self._clock = clock
        self._wake = clock() + (config.end_grace if state is not None and state.ended_at else config.idle_ttl)

    def on_item(self, value: Turn | CorefSessionEnd) -> tuple[Iterable[Turn], bool]:
        if isinstance(value, CorefSessionEnd):
            self._state = end_session(self._state, value.ts)
            if self._state is None:
                return ((), StatefulLogic.DISCARD)
            self._wake = self._clock() + self._config.end_grace
            return ((), StatefulLogic.RETAIN)
        turn = CorefTurn(value.event.turn_key, value.event.ts, value.sentences)
        self._state, anchors = resolve_turn(self._state, turn, self._config.resolver, self._lexicon())
        if self._state.ended_at is None:
            self._wake = self._clock() + self._config.idle_ttl
        return ((replace(value, coref=anchors),), StatefulLogic.RETAIN)

    def on_notify(self) -> tuple[Iterable[Turn], bool]:
        return ((), StatefulLogic.DISCARD)

    def notify_at(self) -> datetime | None:
        return self._wake

    def snapshot(self) -> CorefState | None:
        return self._state


@operator
def resolve_coreference(
    step_id: str,
    up: KeyedStream[Turn | CorefSessionEnd],
    config: CorefOperatorConfig,
    *,
    lexicon: Callable[[], CorefLexicon],
    clock: Callable[[], datetime],
) -> KeyedStream[Turn]:
    return op.stateful("coref_logic", up, lambda resume: _CorefLogic(resume, config, lexicon, clock))
