"""Responder feed operator: ResponseRequests and UserCorrections, in per-session order, for the responder.

Input: keyed `Expected | UserCorrection` (from the ingress stream: one marker per turn that
will ask for an answer, and the session's corrections, in their ingress order) and keyed
`ResponseRequest` (from the recall branch). Output: keyed `ResponderItem` — every request as
it comes, each correction after the requests of the triggering turns before it (pure logic:
`state.respond.feed`). Key: session id. State: `FeedState`, discarded as soon as nothing is
outstanding or held; otherwise a processing-time timer (`wait` after the state stopped being
empty) gives up waiting, releases the held corrections with a warning and discards it. At the
end of a bounded input (a replay) every held correction is released: all requests have passed.

Why: the request comes out of the long write path (normalise … embed, recall) and the
correction out of the short one, so a merge alone would often hand the responder a correction
before the answer it corrects.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import bytewax.operators as op
from bytewax.dataflow import operator
from bytewax.operators import KeyedStream, StatefulLogic

from schemas.events import ConversationEvent, InputEvent, UserCorrection
from schemas.response import ResponderItem, ResponseRequest
from state.recall.trigger import TriggerConfig, triggers
from state.respond.feed import Expected, FeedItem, FeedState, on_item, release_all

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class FeedConfig:
    trigger: TriggerConfig = field(default_factory=TriggerConfig)
    wait: timedelta = timedelta(seconds=120)


def feed_marker(event: InputEvent, trigger: TriggerConfig) -> Expected | UserCorrection | None:
    """What the feed needs from one ingress event: a marker for a triggering turn, a correction, or nothing."""
    if isinstance(event, UserCorrection):
        return event
    if isinstance(event, ConversationEvent) and triggers(event, trigger):
        return Expected(event.event_id)
    return None


class _FeedLogic(StatefulLogic[FeedItem, ResponderItem, FeedState]):
    def __init__(self, state: FeedState | None, config: FeedConfig, clock: Callable[[], datetime]) -> None:
        self._state = state
        self._config = config
        self._clock = clock
        self._wake: datetime | None = clock() + config.wait if state is not None and not state.empty else None

    def on_item(self, value: FeedItem) -> tuple[Iterable[ResponderItem], bool]:
        self._state, out = on_item(self._state, value)
        if self._state.empty:
            return out, StatefulLogic.DISCARD
        if self._wake is None:
            self._wake = self._clock() + self._config.wait
        return out, StatefulLogic.RETAIN

    def _give_up(self, why: str) -> tuple[Iterable[ResponderItem], bool]:
        _, released = release_all(self._state)
        for correction in released:
            log.warning(
                json.dumps(
                    {
                        "op": "responder_feed.release",
                        "why": why,
                        "session_id": correction.session_id,
                        "event_id": correction.event_id,
                    }
                )
            )
        return released, StatefulLogic.DISCARD

    def on_notify(self) -> tuple[Iterable[ResponderItem], bool]:
        return self._give_up("wait")

    def on_eof(self) -> tuple[Iterable[ResponderItem], bool]:
        return self._give_up("end_of_input")

    def notify_at(self) -> datetime | None:
        return self._wake

    def snapshot(self) -> FeedState:
        return self._state or FeedState()


@operator
def responder_feed(
    step_id: str,
    events: KeyedStream[InputEvent],
    requests: KeyedStream[ResponseRequest],
    config: FeedConfig,
    *,
    clock: Callable[[], datetime],
) -> KeyedStream[ResponderItem]:
    markers: KeyedStream[FeedItem] = op.filter_map_value(
        "feed_markers", events, lambda e: feed_marker(e, config.trigger)
    )
    merged: KeyedStream[FeedItem] = op.merge("feed_in", markers, requests)
    return op.stateful("feed_logic", merged, lambda resume: _FeedLogic(resume, config, clock))
