"""Attach each memory unit's previous turn (its context), per session.

Input: keyed `MemoryUnit` (key: session id), in the session's order. Output: the same units
with `context_prev` set. State: `TurnContext` per session (the current and previous turn as
two short strings). Discarded: after `idle_ttl` of processing time without a unit of the
session (a later turn then starts without context, as a new conversation would). The logic is
`state.units.context.with_context`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

import bytewax.operators as op
from bytewax.dataflow import operator
from bytewax.operators import KeyedStream, StatefulLogic

from schemas.memory import MemoryUnit
from state.units.context import TurnContext, with_context


@dataclass(frozen=True)
class ContextConfig:
    idle_ttl: timedelta = timedelta(hours=1)


class _ContextLogic(StatefulLogic[MemoryUnit, MemoryUnit, TurnContext | None]):
    def __init__(self, state: TurnContext | None, config: ContextConfig, clock: Callable[[], datetime]) -> None:
        self._state = state
        self._config = config
        self._clock = clock
        self._wake: datetime | None = clock() + config.idle_ttl if state is not None else None

    def on_item(self, value: MemoryUnit) -> tuple[Iterable[MemoryUnit], bool]:
        self._state, unit = with_context(self._state, value)
        self._wake = self._clock() + self._config.idle_ttl
        return ((unit,), StatefulLogic.RETAIN)

    def on_notify(self) -> tuple[Iterable[MemoryUnit], bool]:
        return ((), StatefulLogic.DISCARD)

    def notify_at(self) -> datetime | None:
        return self._wake

    def snapshot(self) -> TurnContext | None:
        return self._state


@operator
def attach_context(
    step_id: str, up: KeyedStream[MemoryUnit], config: ContextConfig, *, clock: Callable[[], datetime]
) -> KeyedStream[MemoryUnit]:
    return op.stateful("context_logic", up, lambda resume: _ContextLogic(resume, config, clock))
