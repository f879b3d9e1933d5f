"""Request and response bodies of the HTTP API (they are its OpenAPI schema).

Records that already exist (MemoryUnit, SessionState, ArchivedTask, RecallResult) are returned
as they are; the models here are the API's own envelopes and the inspector's views.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from schemas.events import EventTime, SpeakerRole
from schemas.memory import MemoryUnit
from schemas.recall import RecallResult
from schemas.session import AnchorDecision, ArchivedTask, SessionState

# A hard ceiling in the schema; the configured `input.max_text_chars` may be lower.
MAX_TEXT_CHARS = 8_000
MAX_ID_CHARS = 200


class _Body(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ErrorDetail(_Body):
    code: str = Field(description="stable machine-readable code, e.g. session_not_found")
    message: str
    detail: list[dict[str, object]] | None = Field(default=None, description="per-field problems (validation)")


class ErrorBody(_Body):
    error: ErrorDetail


class RecallContextTurn(_Body):
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    speaker: str | None = Field(default=None, max_length=MAX_ID_CHARS)
    speaker_role: SpeakerRole = "customer"
    ts: EventTime | None = None


class RecallBody(_Body):
    """A user turn to recall for. The tenant is the caller's (from the API key or tenant header)."""

    session_id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS, description="the user's turn")
    tenant_id: str | None = Field(
        default=None, min_length=1, max_length=MAX_ID_CHARS, description="optional; must be the caller's tenant"
    )
    user_id: str | None = Field(default=None, min_length=1, max_length=MAX_ID_CHARS)
    speaker: str | None = Field(default=None, max_length=MAX_ID_CHARS)
    event_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ID_CHARS,
        description="idempotency key of the turn; derived if absent",
    )
    ts: EventTime | None = Field(default=None, description="event time of the turn; the server's clock if absent")
    context: list[RecallContextTurn] | None = Field(
        default=None, max_length=3, description="the last turns; absent: read from the session's stored turns"
    )


class MemoryPage(_Body):
    items: list[MemoryUnit]
    total: int = Field(ge=0)
    offset: int = Field(ge=0)
    limit: int = Field(ge=1)
    next_offset: int | None = None


class TurnView(_Body):
    """One utterance of the session and the memory units cut from it."""

    event_id: str
    turn_id: str
    ts: datetime
    speaker: str | None = None
    speaker_role: SpeakerRole
    source_text: str
    units: list[MemoryUnit]


class TurnsView(_Body):
    session_id: str
    turns: list[TurnView]
    truncated: bool = Field(description="more units than the scan limit: the oldest turns are shown")


class SessionSummary(_Body):
    session_id: str
    user_ids: list[str]
    units: int = Field(ge=0)
    first_ts: datetime | None = None
    last_ts: datetime | None = None
    recalls: int = Field(ge=0)
    task_id: str | None = None
    stage: str | None = None


class SessionList(_Body):
    tenant_id: str
    sessions: list[SessionSummary]
    truncated: bool


class StateView(_Body):
    """The session's current task state (vectors left out) and its archived tasks."""

    session_id: str
    source: str = Field(description="where the state was read: the replay's state log")
    state: SessionState | None
    archived: list[ArchivedTask]


class StateStep(_Body):
    """The task state after one turn: the intent chain over time."""

    ts: datetime | None
    event_id: str | None
    task_id: str | None
    stage: str
    intent_chain: list[str]
    anchor: AnchorDecision | None = None
    similarity: float | None = None
    turn_count: int
    entities: list[str]


class StateHistory(_Body):
    session_id: str
    steps: list[StateStep]


class CueView(_Body):
    """A memory unit with every annotation, its cue id and the recalls that surfaced it."""

    cue_id: str
    memory: MemoryUnit
    recalled_in: list[str] = Field(description="query_event_id of each recall that returned this cue")


class RecallList(_Body):
    session_id: str
    recalls: list[RecallResult]


class MarkerMatch(_Body):
    cue_id: str
    css: float | None


class MarkerLookup(_Body):
    markers: list[MarkerMatch]
    recalls: list[RecallResult]


class HealthWindow(_Body):
    start: datetime
    end: datetime


class HealthPoint(_Body):
    key: str
    decision_point: str
    label: str
    rule: str | None = Field(default=None, description="alert rule, e.g. '> 0.05'")
    values: list[float | None] = Field(description="one value per window, oldest first; null: nothing to measure")
    latest: float | None = None
    status: Literal["ok", "alert", "no_data"]


class HealthPanel(_Body):
    source: Literal["flow_metrics", "computed"]
    source_detail: str
    window_s: int | None
    windows: list[HealthWindow]
    points: list[HealthPoint]


class Probe(_Body):
    status: Literal["ok", "unavailable"]
    checks: dict[str, str]


class InspectorConfig(_Body):
    auth: Literal["required", "off"]
    api_key_header: str
    tenant_header: str
    tenants: list[str] = Field(description="tenants with data (listed only when auth is off)")
    default_tenant: str
