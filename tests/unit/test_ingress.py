"""Parse & validate: every bad input raises the right InputError with a clear reason."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.errors import (
    EventValidationError,
    InputError,
    MalformedEventError,
    OversizedEventError,
    UnsupportedVersionError,
)
from schemas.events import ConversationEvent, SessionEnd
from state.ingress.parse import IngressLimits, parse_record
from tests.conftest import event_dict, raw

LIMITS = IngressLimits(max_record_bytes=1_000_000, max_text_chars=500, max_json_depth=8)


def test_valid_turn_parses_and_ts_is_utc() -> None:
    ev = parse_record(raw(event_dict(ts="2026-01-01T16:00:00+08:00")), LIMITS)
    assert isinstance(ev, ConversationEvent)
    assert ev.ts.isoformat() == "2026-01-01T08:00:00+00:00"


def test_naive_ts_is_read_as_utc() -> None:
    ev = parse_record(raw(event_dict(ts="2026-01-01T08:00:00")), LIMITS)
    assert ev.ts.utcoffset() is not None
    assert ev.ts.hour == 8


def test_control_event_by_kind() -> None:
    ev = parse_record(
        raw({"kind": "session_end", "event_id": "x", "session_id": "s", "ts": "2026-01-01T00:00:00Z"}), LIMITS
    )
    assert isinstance(ev, SessionEnd)


@pytest.mark.parametrize(
    ("payload", "error", "fragment"),
    [
        (b"{not json", MalformedEventError, "invalid JSON"),
        (b"\xff\xfe{}", MalformedEventError, "invalid UTF-8"),
        (b"[1, 2]", MalformedEventError, "expected a JSON object"),
        (json.dumps({"a": [[[[[[[[[[1]]]]]]]]]]}).encode(), MalformedEventError, "nesting"),
        (b'{"a":' + b"[" * 200_000 + b"]" * 200_000 + b"}", MalformedEventError, "nesting"),
        (b"x" * 1_000_001, OversizedEventError, "limit is 1000000"),
    ],
)
def test_malformed_bytes(payload: bytes, error: type[InputError], fragment: str) -> None:
    with pytest.raises(error, match=fragment):
        parse_record(raw(payload), LIMITS)


def test_missing_session_id() -> None:
    obj = event_dict()
    del obj["session_id"]
    with pytest.raises(EventValidationError, match="session_id"):
        parse_record(raw(obj), LIMITS)


def test_empty_session_id() -> None:
    with pytest.raises(EventValidationError, match="session_id"):
        parse_record(raw(event_dict(session_id="")), LIMITS)


def test_wrong_types() -> None:
    with pytest.raises(EventValidationError, match="text"):
        parse_record(raw(event_dict(text=123)), LIMITS)


def test_unknown_field_rejected() -> None:
    with pytest.raises(EventValidationError, match="ip_address"):
        parse_record(raw(event_dict(ip_address="1.2.3.4")), LIMITS)


def test_oversized_text() -> None:
    with pytest.raises(OversizedEventError, match="500"):
        parse_record(raw(event_dict(text="字" * 501)), LIMITS)


def test_unsupported_version() -> None:
    with pytest.raises(UnsupportedVersionError, match="99"):
        parse_record(raw(event_dict(schema_version=99)), LIMITS)


def test_empty_text() -> None:
    with pytest.raises(EventValidationError, match="empty"):
        parse_record(raw(event_dict(text="   ")), LIMITS)


@pytest.mark.parametrize(
    "ts", ["9999-12-31T23:59:59", "0001-01-01T00:00:00", "3000-01-01T00:00:00Z", "1899-12-31T23:59:59Z"]
)
def test_event_times_outside_the_year_range_are_refused(ts: str) -> None:
    with pytest.raises(EventValidationError, match="outside the years 1900-2999"):
        parse_record(raw(event_dict(ts=ts)), LIMITS)


def test_event_times_at_the_edges_of_the_year_range_pass() -> None:
    assert parse_record(raw(event_dict(ts="1900-01-01T00:00:00Z")), LIMITS).ts.year == 1900
    assert parse_record(raw(event_dict(ts="2999-12-31T23:59:59Z")), LIMITS).ts.year == 2999


def test_unknown_timezone() -> None:
    with pytest.raises(EventValidationError, match="time zone"):
        parse_record(raw(event_dict(tz="Mars/Olympus")), LIMITS)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_never_crash(payload: bytes) -> None:
    error: InputError | None = None
    try:
        parse_record(raw(payload), LIMITS)
    except InputError as exc:
        error = exc
    assert error is None or str(error)  # parsed, or refused with a message: never another exception
