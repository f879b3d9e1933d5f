"""Duplicate event ids, as a pure function over per-session state.

`event_id` is the idempotency key of an input event (within its tenant and session). Policy
(docs/robustness.md):

* the first event with an id wins;
* a later event with the same id and the same content (an at-least-once redelivery) is
  dropped and counted: `Duplicate(conflict=False)`;
* a later event with the same id and different content is refused: `Duplicate(conflict=True)`,
  which the operator turns into a `duplicate_event` dead letter. It never overwrites.

So every distinct event reaches the flow exactly once, whatever the delivery.
State: the fingerprints of the last `max_ids` event ids of one session (oldest forgotten first).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field

from schemas.events import InputEvent


@dataclass(frozen=True, slots=True)
class DedupeConfig:
    # Event ids remembered per session; a duplicate arriving after this many newer ids
    # of the same session is no longer recognised (it is then processed again, idempotently).
    max_ids: int = 10_000


@dataclass(slots=True)
class SeenEvents:
    """(tenant id, event id) → fingerprint of the first event's content, oldest first."""

    fingerprints: OrderedDict[tuple[str, str], str] = field(default_factory=OrderedDict)


@dataclass(frozen=True, slots=True)
class Duplicate:
    """`event` repeats an id seen before; `conflict` when its content differs from the first."""

    event: InputEvent
    conflict: bool


def fingerprint(event: InputEvent) -> str:
    """A digest of the validated content (two spellings of the same time are the same event).

    >>> from schemas.events import ConversationEvent
    >>> a = ConversationEvent(event_id="e", session_id="s", ts="2026-01-01T08:00:00Z", text="hi")
    >>> b = ConversationEvent(event_id="e", session_id="s", ts="2026-01-01T09:00:00+01:00", text="hi")
    >>> fingerprint(a) == fingerprint(b)
    True
    """
    return hashlib.blake2b(event.model_dump_json().encode(), digest_size=16).hexdigest()


def admit(
    state: SeenEvents | None, event: InputEvent, config: DedupeConfig
) -> tuple[SeenEvents, InputEvent | Duplicate]:
    """The event itself when its id is new in the session, else a `Duplicate`.

    >>> from schemas.events import ConversationEvent
    >>> e = ConversationEvent(event_id="e", session_id="s", ts="2026-01-01T08:00:00Z", text="hi")
    >>> s, first = admit(None, e, DedupeConfig())
    >>> s, again = admit(s, e, DedupeConfig())
    >>> s, other = admit(s, e.model_copy(update={"text": "bye"}), DedupeConfig())
    >>> first is e, again.conflict, other.conflict
    (True, False, True)
    """
    state = state or SeenEvents()
    key = (event.tenant_id, event.event_id)
    digest = fingerprint(event)
    seen = state.fingerprints.get(key)
    if seen is not None:
        return state, Duplicate(event, conflict=seen != digest)
    state.fingerprints[key] = digest
    while len(state.fingerprints) > config.max_ids:
        state.fingerprints.popitem(last=False)
    return state, event
