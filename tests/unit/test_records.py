"""Records: deterministic ids, frozen models, dead letters keep raw bytes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from schemas.deadletter import DeadLetter
from schemas.events import ConversationEvent
from schemas.memory import memory_id


def test_memory_id_is_deterministic_and_distinct() -> None:
    a = memory_id("t", "s", "e", 0)
    assert a == memory_id("t", "s", "e", 0)
    assert len({a, memory_id("t", "s", "e", 1), memory_id("t2", "s", "e", 0)}) == 3


def test_records_are_frozen() -> None:
    ev = ConversationEvent(event_id="e", session_id="s", ts=datetime(2026, 1, 1, tzinfo=UTC), text="hi")
    with pytest.raises(ValidationError):
        ev.text = "changed"  # type: ignore[misc]


def test_dead_letter_keeps_invalid_utf8() -> None:
    dl = DeadLetter.from_raw(
        step="s",
        key=None,
        source="f:1",
        error_type="malformed",
        message="m",
        raw=b"\xff\x00ok",
        at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    assert dl.raw_bytes() == b"\xff\x00ok"
    assert DeadLetter.model_validate_json(dl.model_dump_json()).raw_bytes() == b"\xff\x00ok"
