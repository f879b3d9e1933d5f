"""Entropy windows and the unit cut (docs/design.md#entropy), with a one-segment lookahead across turns.

Input: keyed tagged `Turn` or `SessionClosed`. Output: keyed `Turn` with `segment_entropy` and
`unit_cut` filled (memory units are assembled from it downstream). State: `EntropyState` per
session id: the held turn (waiting for its next neighbour) with its segment vectors, and the
last released segment vector. Key: session id.

A held turn is released by the next turn of its session (which is its neighbour when it comes
within `lookahead` of event time), by the hold timer (`hold_timeout` of processing time, set
longer than the event-time window so a live run decides as a replay does), at end of input, or
on `SessionClosed`; it is never held forever. State is discarded on `SessionClosed` and by the
idle timer once nothing is held. Segment vectors come from the injected per-sentence embedder
(the fast static model by default; stored vectors stay with the configured embedder).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import bytewax.operators as op
from bytewax.dataflow import operator
from bytewax.operators import KeyedStream, StatefulLogic

from state.core.closing import SessionClosed
from state.core.embedding import Embedder
from state.normalise.turn import Turn, segmented
from state.units.entropy import EntropyConfig, EntropyState, EntropyTable, advance, flush

Item = Turn | SessionClosed


@dataclass(frozen=True)
class EntropyOpConfig:
    entropy: EntropyConfig = field(default_factory=EntropyConfig)
    hold_timeout: timedelta = timedelta(seconds=12)
    idle_ttl: timedelta = timedelta(hours=1)


class _EntropyLogic(StatefulLogic[Item, Turn, EntropyState | None]):
    def __init__(
        self,
        state: EntropyState | None,
        config: EntropyOpConfig,
        table: Callable[[], EntropyTable],
        embedder: Embedder,
        clock: Callable[[], datetime],
    ) -> None:
        self._state = state
        self._config = config
        self._table = table
        self._embedder = embedder
        self._clock = clock
        self._wake: datetime | None = None
        if state is not None:
            self._rearm()

    def _rearm(self) -> None:
        held = self._state is not None and self._state.held is not None
        self._wake = self._clock() + (self._config.hold_timeout if held else self._config.idle_ttl)

    def on_item(self, value: Item) -> tuple[Iterable[Turn], bool]:
        if isinstance(value, SessionClosed):
            _, out = flush(self._state, self._table(), self._config.entropy)
            return (out, StatefulLogic.DISCARD)
        turn = segmented(value)
        vectors = self._embedder.passage([s.text for s in turn.segments])
        self._state, out = advance(self._state, turn, vectors, self._table(), self._config.entropy)
        self._rearm()
        return (out, StatefulLogic.RETAIN)

    def on_notify(self) -> tuple[Iterable[Turn], bool]:
        if self._state is None or self._state.held is None:
            return ((), StatefulLogic.DISCARD)
        self._state, out = flush(self._state, self._table(), self._config.entropy)
        self._rearm()
        return (out, StatefulLogic.RETAIN)

    def on_eof(self) -> tuple[Iterable[Turn], bool]:
        self._state, out = flush(self._state, self._table(), self._config.entropy)
        self._rearm()
        return (out, StatefulLogic.RETAIN)

    def notify_at(self) -> datetime | None:
        return self._wake

    def snapshot(self) -> EntropyState | None:
        return self._state


@operator
def window_entropy(
    step_id: str,
    up: KeyedStream[Item],
    config: EntropyOpConfig,
    *,
    table: Callable[[], EntropyTable],
    embedder: Embedder,
    clock: Callable[[], datetime],
) -> KeyedStream[Turn]:
    return op.stateful("entropy_logic", up, lambda resume: _EntropyLogic(resume, config, table, embedder, clock))
