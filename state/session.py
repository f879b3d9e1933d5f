"""Per-session state and its pure transition (foundation of SPEC §5.6's task state).

State: `SessionState` per session id. Discarded on a SessionEnd event, and by the operator's
idle timer. The task id is deterministic (same events → same id), so replays agree.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from schemas.events import ConversationEvent, InputEvent, SessionEnd
from schemas.session import SessionState

TASK_TIMEOUT = timedelta(minutes=15)


@dataclass(frozen=True, slots=True)
class SessionStep:
    """An event together with the session state right after it (None once discarded)."""

    event: InputEvent
    state: SessionState | None


def task_id_for(session_id: str, first_event_id: str, ts: datetime) -> str:
    """`TSK-YYYY-MM-xxxxxx`, derived from the session and the task's first event.

    >>> from datetime import UTC, datetime
    >>> task_id_for("s1", "e1", datetime(2026, 5, 3, tzinfo=UTC))
    'TSK-2026-05-08c541'
    """
    digest = hashlib.sha256(f"{session_id}\x1f{first_event_id}".encode()).hexdigest()[:6]
    return f"TSK-{ts:%Y}-{ts:%m}-{digest}"


def advance_session(state: SessionState | None, event: InputEvent) -> SessionState | None:
    """Fold one event into the session state; None means the state is discarded."""
    if isinstance(event, SessionEnd):
        return None
    if state is None:
        state = SessionState(session_id=event.session_id, tenant_id=event.tenant_id, user_id=event.user_id)
    expired = state.timeout_at is not None and event.ts >= state.timeout_at
    task_id = state.task_id
    if task_id is None or expired:
        task_id = task_id_for(event.session_id, event.event_id, event.ts)
    updates: dict[str, object] = {
        "task_id": task_id,
        "last_event_id": event.event_id,
        "last_event_ts": event.ts,
        "timeout_at": event.ts + TASK_TIMEOUT,
    }
    if isinstance(event, ConversationEvent):
        updates["turn_count"] = state.turn_count + 1
        if state.current_stage == "idle" or expired:
            updates["current_stage"] = "open"
    return state.model_copy(update=updates)
