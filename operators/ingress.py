"""Parse & validate.

Input: `RawRecord` (bytes + source). Output: (`Accepted` stream: each event with the raw
record it came from, `DeadLetter` stream).
State: none. Key: none (keying happens after validation, on `session_id`; duplicate event
ids are sorted out there, by operators/dedupe.py, which needs the raw record for its dead letters).
Every record comes out exactly once: as an event or as a dead letter with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import bytewax.operators as op
from bytewax.dataflow import Stream, operator

from schemas.deadletter import DeadLetter
from schemas.errors import InputError
from schemas.events import InputEvent
from schemas.raw import RawRecord
from state.ingress.parse import IngressLimits, parse_record, session_hint


@dataclass(frozen=True, slots=True)
class Accepted:
    """A validated event and the raw record it was parsed from."""

    event: InputEvent
    raw: RawRecord


@dataclass(frozen=True, slots=True)
class Parsed:
    event: Accepted | None
    dead: DeadLetter | None


@dataclass(frozen=True)
class IngressOut:
    events: Stream[Accepted]
    errors: Stream[DeadLetter]


def parse_or_dead_letter(raw: RawRecord, limits: IngressLimits, step: str, clock: Callable[[], datetime]) -> Parsed:
    """Pure: one raw record → an event, or a dead letter carrying reason and raw bytes."""
    try:
        return Parsed(Accepted(parse_record(raw, limits), raw), None)
    except InputError as exc:
        dead = DeadLetter.from_raw(
            step=step,
            key=session_hint(raw),
            source=raw.source,
            error_type=exc.error_type,
            message=str(exc),
            raw=raw.payload,
            at=clock(),
        )
        return Parsed(None, dead)


@operator
def parse_events(
    step_id: str,
    up: Stream[RawRecord],
    limits: IngressLimits,
    *,
    clock: Callable[[], datetime],
) -> IngressOut:
    """Validate raw records once at ingress; bad ones become dead letters."""
    parsed = op.map("parse", up, lambda raw: parse_or_dead_letter(raw, limits, step_id, clock))
    split = op.branch("ok", parsed, lambda p: p.event is not None)
    events: Stream[Accepted] = op.filter_map("events", split.trues, lambda p: p.event)
    errors = op.filter_map("errors", split.falses, lambda p: p.dead)
    return IngressOut(events, errors)
