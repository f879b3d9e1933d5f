"""Responder feed: a session's corrections reach the responder after the answers they correct.

Input (per session, in any interleaving): `Expected` markers — one per turn that will ask for an
answer, taken from the ingress stream in the same order as the session's corrections — the
`ResponseRequest`s that the recall branch makes of those turns (a longer path, so they may come
later or, in principle, earlier than their marker), and `UserCorrection` events. Output:
`ResponderItem`s in order: every request as soon as it comes; a correction once the request of
every triggering turn that came before it has passed (or once the wait gives up).

State: `FeedState` — the triggering turns whose request has not passed yet (`outstanding`, in
ingress order), the requests that passed before their marker (`early`), and the corrections
held with the turns each still waits for. The state is empty, and discarded, whenever nothing is
outstanding or held; `release_all` gives up on held corrections (the operator calls it from its
processing-time timer and at the end of input, so a request that never comes — a turn dropped
as a dead letter downstream — delays a correction by at most that wait, never forever).
"""

from __future__ import annotations

from dataclasses import dataclass

from schemas.events import UserCorrection
from schemas.response import ResponderItem, ResponseRequest

MAX_TRACKED = 64  # outstanding/early turn ids kept per session: a bound, not a limit met in practice


@dataclass(frozen=True, slots=True)
class Expected:
    """A turn of this session that will ask for an answer (its event id is the request's query event)."""

    event_id: str


@dataclass(frozen=True, slots=True)
class Held:
    correction: UserCorrection
    waits_for: frozenset[str]


@dataclass(frozen=True, slots=True)
class FeedState:
    outstanding: tuple[str, ...] = ()
    early: tuple[str, ...] = ()
    held: tuple[Held, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.outstanding or self.early or self.held)


FeedItem = Expected | ResponseRequest | UserCorrection


def _release_ready(held: tuple[Held, ...]) -> tuple[tuple[Held, ...], list[ResponderItem]]:
    """Release held corrections from the front while they wait for nothing (their order is kept)."""
    out: list[ResponderItem] = []
    rest = list(held)
    while rest and not rest[0].waits_for:
        out.append(rest.pop(0).correction)
    return tuple(rest), out


def on_item(state: FeedState | None, item: FeedItem) -> tuple[FeedState, list[ResponderItem]]:
    """Fold one item; emit what may go to the responder now.

    >>> from datetime import UTC, datetime
    >>> at = datetime(2026, 6, 10, tzinfo=UTC)
    >>> fix = UserCorrection(event_id="c", session_id="s", ts=at, corrected_text="5月16日")
    >>> ask = ResponseRequest(request_id="r", session_id="s", tenant_id="t", query_event_id="q",
    ...                       query_text="哪天发货？", ts=at)
    >>> st, out = on_item(None, Expected("q"))
    >>> st, out = on_item(st, fix)
    >>> out
    []
    >>> st, out = on_item(st, ask)
    >>> [i.kind for i in out], st.empty
    (['request', 'correction'], True)
    """
    state = state or FeedState()
    if isinstance(item, Expected):
        if item.event_id in state.early:  # its request has passed already
            early = tuple(e for e in state.early if e != item.event_id)
            return FeedState(state.outstanding, early, state.held), []
        outstanding = (*state.outstanding, item.event_id)[-MAX_TRACKED:]
        return FeedState(outstanding, state.early, state.held), []
    if isinstance(item, ResponseRequest):
        done = item.query_event_id
        if done in state.outstanding:
            outstanding = tuple(e for e in state.outstanding if e != done)
            early = state.early
        else:
            outstanding, early = state.outstanding, (*state.early, done)[-MAX_TRACKED:]
        waiting = tuple(Held(h.correction, h.waits_for - {done}) for h in state.held)
        held, released = _release_ready(waiting)
        return FeedState(outstanding, early, held), [item, *released]
    if not state.held and not state.outstanding:
        return state, [item]
    held = (*state.held, Held(item, frozenset(state.outstanding)))
    return FeedState(state.outstanding, state.early, held), []


def release_all(state: FeedState | None) -> tuple[FeedState, list[UserCorrection]]:
    """Give up waiting: every held correction goes on (in order), outstanding turns are forgotten."""
    if state is None:
        return FeedState(), []
    return FeedState(), [h.correction for h in state.held]
