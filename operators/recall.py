"""Recall trigger operator: user turns → `RecallRequest`, carrying the immediate context.

Input: keyed `Turn` and keyed `SessionEnd`. Output: keyed `RecallRequest`. State:
`TriggerState` per session (the last ≤ 3 turns, the task's identifiers). Key: session id.
Discarded on SessionEnd, and by an idle timer (`idle_ttl` of processing time after the last
event) so no session's context leaks.

The operator only decides; it holds no client. Recall itself (store, verifiers) runs in
`flows.recall.RecallService`, which `flows.build` applies to this stream as a batch map,
the way the embedder is applied: the result has to flow on (to the response request and
the metrics), which a sink cannot do, and the service owns timeouts and concurrency.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

import bytewax.operators as op
from bytewax.dataflow import operator
from bytewax.operators import KeyedStream, StatefulLogic

from schemas.events import SessionEnd
from schemas.recall import RecallRequest
from state.normalise.turn import Turn
from state.recall.trigger import TriggerConfig, TriggerState, on_item


class _TriggerLogic(StatefulLogic[Turn | SessionEnd, RecallRequest, TriggerState]):
    def __init__(
        self, state: TriggerState | None, config: TriggerConfig, idle_ttl: timedelta, clock: Callable[[], datetime]
    ) -> None:
        self._state = state
        self._config = config
        self._idle_ttl = idle_ttl
        self._clock = clock
        self._wake: datetime | None = clock() + idle_ttl if state is not None else None

    def on_item(self, value: Turn | SessionEnd) -> tuple[Iterable[RecallRequest], bool]:
        self._state, out = on_item(self._state, value, self._config)
        if self._state is None:
            return out, StatefulLogic.DISCARD
        self._wake = self._clock() + self._idle_ttl
        return out, StatefulLogic.RETAIN

    def on_notify(self) -> tuple[Iterable[RecallRequest], bool]:
        return (), StatefulLogic.DISCARD

    def notify_at(self) -> datetime | None:
        return self._wake

    def snapshot(self) -> TriggerState:
        return self._state or TriggerState()


@operator
def recall_trigger(
    step_id: str,
    turns: KeyedStream[Turn],
    ends: KeyedStream[SessionEnd],
    config: TriggerConfig,
    *,
    clock: Callable[[], datetime],
    idle_ttl: timedelta = timedelta(hours=1),
) -> KeyedStream[RecallRequest]:
    merged: KeyedStream[Turn | SessionEnd] = op.merge("turns_and_ends", turns, ends)
    return op.stateful("trigger_logic", merged, lambda resume: _TriggerLogic(resume, config, idle_ttl, clock))
