"""Duplicate event ids: the first event with an id wins (state/ingress/dedupe.py has the policy).

Input: `Accepted` (a validated event and its raw record). Output: `DedupeOut` — the session-keyed
stream of distinct events, `DeadLetter`s (`duplicate_event`: same id, different content) and
`DuplicateDelivery` records (same id, same content: dropped, counted).
State: `SeenEvents` per session id (at most `max_ids` fingerprints). Key: session id.
Discarded: `idle_ttl` of processing time after the session's last record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import bytewax.operators as op
from bytewax.dataflow import Stream, operator
from bytewax.operators import KeyedStream, StatefulLogic

from operators.ingress import Accepted
from schemas.deadletter import DeadLetter, DuplicateDelivery
from schemas.events import InputEvent
from state.ingress.dedupe import DedupeConfig, Duplicate, SeenEvents, admit

_Out = InputEvent | DeadLetter | DuplicateDelivery


@dataclass(frozen=True)
class DedupeOperatorConfig:
    dedupe: DedupeConfig = field(default_factory=DedupeConfig)
    # Longer than any redelivery delay worth catching (a restart, a broker retry).
    idle_ttl: timedelta = timedelta(hours=6)


@dataclass(frozen=True)
class DedupeOut:
    events: KeyedStream[InputEvent]
    dead: Stream[DeadLetter]
    duplicates: Stream[DuplicateDelivery]


def sort_out(
    state: SeenEvents | None, item: Accepted, config: DedupeConfig, step: str, now: datetime
) -> tuple[SeenEvents, _Out]:
    """Pure: the event when new, else a dead letter (conflict) or a duplicate-delivery record."""
    state, verdict = admit(state, item.event, config)
    if not isinstance(verdict, Duplicate):
        return state, verdict
    event = verdict.event
    if verdict.conflict:
        return state, DeadLetter.from_raw(
            step=step,
            key=event.session_id,
            source=item.raw.source,
            error_type="duplicate_event",
            message=f"event_id {event.event_id!r} was already processed with different content; the first wins",
            raw=item.raw.payload,
            at=now,
        )
    return state, DuplicateDelivery(
        step=step,
        source=item.raw.source,
        session_id=event.session_id,
        tenant_id=event.tenant_id,
        event_id=event.event_id,
        at=now,
    )


class _DedupeLogic(StatefulLogic[Accepted, _Out, SeenEvents]):
    def __init__(
        self, state: SeenEvents | None, config: DedupeOperatorConfig, step: str, clock: Callable[[], datetime]
    ) -> None:
        self._state = state
        self._config = config
        self._step = step
        self._clock = clock
        self._wake = clock() + config.idle_ttl

    def on_item(self, value: Accepted) -> tuple[Iterable[_Out], bool]:
        now = self._clock()
        self._state, out = sort_out(self._state, value, self._config.dedupe, self._step, now)
        self._wake = now + self._config.idle_ttl
        return (out,), StatefulLogic.RETAIN

    def on_notify(self) -> tuple[Iterable[_Out], bool]:
        return (), StatefulLogic.DISCARD

    def notify_at(self) -> datetime | None:
        return self._wake

    def snapshot(self) -> SeenEvents:
        return self._state or SeenEvents()


def _event(item: _Out) -> InputEvent | None:
    return None if isinstance(item, DeadLetter | DuplicateDelivery) else item


def _dead(item: _Out) -> DeadLetter | None:
    return item if isinstance(item, DeadLetter) else None


def _duplicate(item: _Out) -> DuplicateDelivery | None:
    return item if isinstance(item, DuplicateDelivery) else None


@operator
def dedupe_events(
    step_id: str,
    up: Stream[Accepted],
    config: DedupeOperatorConfig,
    *,
    clock: Callable[[], datetime],
) -> DedupeOut:
    """Key by session id and let each event id through once."""
    keyed = op.key_on("key_session", up, lambda a: a.event.session_id)
    sorted_out = op.stateful("seen", keyed, lambda resume: _DedupeLogic(resume, config, step_id, clock))
    events: KeyedStream[InputEvent] = op.filter_map_value("events", sorted_out, _event)
    unkeyed = op.key_rm("unkeyed", sorted_out)
    return DedupeOut(
        events=events,
        dead=op.filter_map("dead", unkeyed, _dead),
        duplicates=op.filter_map("duplicates", unkeyed, _duplicate),
    )
