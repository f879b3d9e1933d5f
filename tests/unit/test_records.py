"""Records: deterministic ids, frozen models, dead letters keep raw bytes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from schemas.deadletter import DeadLetter
from schemas.events import ConversationEvent
from schemas.memory import memory_id
from state.session import advance_session, task_id_for


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
        step="s", key=None, source="f:1", error_type="malformed", message="m", raw=b"\xff\x00ok", at=datetime(2026, 1, 1, tzinfo=UTC)
    )
    assert dl.raw_bytes() == b"\xff\x00ok"
    assert DeadLetter.model_validate_json(dl.model_dump_json()).raw_bytes() == b"\xff\x00ok"


def test_task_id_format_and_timeout_starts_new_task() -> None:
    t0 = datetime(2026, 5, 1, 8, 0, tzinfo=UTC)
    first = ConversationEvent(event_id="a", session_id="s", ts=t0, text="hi")
    state = advance_session(None, first)
    assert state is not None and state.task_id == task_id_for("s", "a", t0)
    assert state.task_id.startswith("TSK-2026-05-")
    later = ConversationEvent(event_id="b", session_id="s", ts=t0.replace(hour=9), text="again")
    state2 = advance_session(state, later)
    assert state2 is not None and state2.task_id != state.task_id
