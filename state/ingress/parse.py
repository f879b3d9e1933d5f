"""Parse and validate raw input records, as pure functions (docs/design.md#ingress).

Input: raw bytes with where they came from. Output: a validated `InputEvent` or an
`InputError` subclass describing exactly what is wrong. The caller (operators/ingress.py)
turns errors into DeadLetter records that keep the raw bytes; nothing is dropped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from schemas.errors import (
    EventValidationError,
    InputError,
    MalformedEventError,
    OversizedEventError,
    UnsupportedVersionError,
)
from schemas.events import SCHEMA_VERSION, ConversationEvent, InputEvent
from schemas.raw import RawRecord

_EVENT_ADAPTER: TypeAdapter[InputEvent] = TypeAdapter(InputEvent)


@dataclass(frozen=True, slots=True)
class IngressLimits:
    max_record_bytes: int = 256_000
    max_text_chars: int = 8_000
    max_json_depth: int = 32
    # Event times outside these years are refused: a year-9999 `ts` overflows every
    # `ts + timeout` downstream (task timers, validity windows), and none is a real turn.
    min_year: int = 1900
    max_year: int = 2999


def _depth(value: Any, limit: int) -> int:
    """Nesting depth of decoded JSON, stopping early once past `limit`."""
    depth = 0
    frontier = [value]
    while frontier and depth <= limit:
        nxt: list[Any] = []
        for item in frontier:
            if isinstance(item, dict):
                nxt.extend(item.values())
            elif isinstance(item, list):
                nxt.extend(item)
        if not nxt:
            break
        depth += 1
        frontier = nxt
    return depth


def decode_json(payload: bytes, limits: IngressLimits) -> dict[str, Any]:
    """Bytes → JSON object, or a MalformedEventError / OversizedEventError saying why.

    >>> decode_json(b'{"a": 1}', IngressLimits())
    {'a': 1}
    """
    if len(payload) > limits.max_record_bytes:
        raise OversizedEventError(f"record is {len(payload)} bytes; limit is {limits.max_record_bytes}")
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedEventError(f"invalid UTF-8 at byte {exc.start}: {exc.reason}") from exc
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedEventError(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    except RecursionError as exc:
        raise MalformedEventError("invalid JSON: nesting too deep to decode") from exc
    if not isinstance(value, dict):
        raise MalformedEventError(f"expected a JSON object, got {type(value).__name__}")
    if _depth(value, limits.max_json_depth) > limits.max_json_depth:
        raise MalformedEventError(f"JSON nesting deeper than {limits.max_json_depth}")
    return value


def validate_event(obj: dict[str, Any], limits: IngressLimits) -> InputEvent:
    """JSON object → typed event; a missing `kind` means a conversation turn.

    >>> validate_event({"event_id": "e1", "session_id": "s1", "ts": "2026-01-01T08:00:00",
    ...                 "text": "hi"}, IngressLimits()).session_id
    's1'
    """
    version = obj.get("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        raise UnsupportedVersionError(
            f"schema_version {version!r} is not supported (this build reads {SCHEMA_VERSION})"
        )
    if "kind" not in obj:
        obj = {**obj, "kind": "turn"}
    text = obj.get("text")
    if isinstance(text, str) and len(text) > limits.max_text_chars:
        raise OversizedEventError(f"text is {len(text)} characters; limit is {limits.max_text_chars}")
    try:
        event = _EVENT_ADAPTER.validate_python(obj)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()[:8]
        )
        raise EventValidationError(problems) from exc
    if isinstance(event, ConversationEvent) and not event.text.strip():
        raise EventValidationError("text: empty turn")
    if not limits.min_year <= event.ts.year <= limits.max_year:
        raise EventValidationError(
            f"ts: {event.ts.isoformat()} is outside the years {limits.min_year}-{limits.max_year}"
        )
    return event


def parse_record(raw: RawRecord, limits: IngressLimits) -> InputEvent:
    """Raw bytes → validated event; raises an InputError subclass on bad input."""
    return validate_event(decode_json(raw.payload, limits), limits)


def session_hint(raw: RawRecord) -> str | None:
    """Best-effort key for a dead letter: the Kafka key, else None (never guessed from content)."""
    if raw.key is None:
        return None
    return raw.key.decode("utf-8", errors="replace")


__all__ = ["IngressLimits", "InputError", "RawRecord", "decode_json", "parse_record", "session_hint", "validate_event"]
