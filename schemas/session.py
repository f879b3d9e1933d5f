"""SessionState: the per-session task state as mirrored to Redis (`task_state:{session_id}`)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from schemas.events import SCHEMA_VERSION, Record


class CriticalEntity(Record):
    """A strong identifier (order id, phone, tracking number, amount) or a bound weak reference."""

    kind: str
    value: str
    turn_id: str
    strength: Literal["strong", "weak"] = "strong"


class SessionState(Record):
    schema_version: Literal[1] = SCHEMA_VERSION
    session_id: str
    tenant_id: str = "default"
    user_id: str | None = None
    task_id: str | None = None
    current_stage: str = "idle"
    intent_chain: tuple[str, ...] = ()
    critical_entities: tuple[CriticalEntity, ...] = ()
    goal_text: str | None = None
    goal_vector: tuple[float, ...] | None = None
    turn_count: int = Field(default=0, ge=0)
    last_event_id: str | None = None
    last_event_ts: datetime | None = None
    timeout_at: datetime | None = None
    mention_window: tuple[str, ...] = ()
    neighbour_sentences: tuple[str, ...] = ()


class ArchivedTask(Record):
    """Emitted when a task is archived (inactivity timeout, drift, session end)."""

    schema_version: Literal[1] = SCHEMA_VERSION
    session_id: str
    task_id: str
    reason: Literal["timeout", "drift", "session_end", "new_task"]
    archived_at: datetime
    final_state: SessionState
