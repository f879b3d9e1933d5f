"""Session tracking: task id and last-activity bookkeeping per session.

Input: keyed `InputEvent` (turns and control events). Output: keyed `SessionStep` (the
event and the session state after it). State: `SessionState` per session id. Discarded on SessionEnd, or when the
idle timer (`idle_ttl` of processing time after the last event) fires, so keyed state
never leaks. Task archiving in event time belongs to the task state machine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

import bytewax.operators as op
from bytewax.dataflow import operator
from bytewax.operators import KeyedStream, StatefulLogic

from schemas.events import InputEvent
from schemas.session import SessionState
from state.session import SessionStep, advance_session


@dataclass(frozen=True)
class SessionConfig:
    idle_ttl: timedelta = timedelta(hours=1)


class _SessionLogic(StatefulLogic[InputEvent, SessionStep, SessionState | None]):
    def __init__(self, state: SessionState | None, config: SessionConfig, clock: Callable[[], datetime]) -> None:
        self._state = state
        self._config = config
        self._clock = clock
        self._wake: datetime | None = clock() + config.idle_ttl if state is not None else None

    def on_item(self, value: InputEvent) -> tuple[Iterable[SessionStep], bool]:
        self._state = advance_session(self._state, value)
        if self._state is None:
            return ((SessionStep(value, None),), StatefulLogic.DISCARD)
        self._wake = self._clock() + self._config.idle_ttl
        return ((SessionStep(value, self._state),), StatefulLogic.RETAIN)

    def on_notify(self) -> tuple[Iterable[SessionStep], bool]:
        return ((), StatefulLogic.DISCARD)

    def notify_at(self) -> datetime | None:
        return self._wake

    def snapshot(self) -> SessionState | None:
        return self._state


@operator
def track_sessions(
    step_id: str,
    up: KeyedStream[InputEvent],
    config: SessionConfig,
    *,
    clock: Callable[[], datetime],
) -> KeyedStream[SessionStep]:
    return op.stateful("session_logic", up, lambda resume: _SessionLogic(resume, config, clock))
