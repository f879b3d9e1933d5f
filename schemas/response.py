"""ResponseRequest (flow → responder) and AgentResponse (responder → responses topic)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from schemas.events import SCHEMA_VERSION, Record
from schemas.recall import Cue


class ResponseRequest(Record):
    schema_version: Literal[1] = SCHEMA_VERSION
    request_id: str
    session_id: str
    tenant_id: str
    user_id: str | None = None
    query_event_id: str
    query_text: str
    ts: datetime
    task_id: str | None = None
    task_stage: str | None = None
    intent_chain: tuple[str, ...] = ()
    cues: tuple[Cue, ...] = ()


class AgentResponse(Record):
    schema_version: Literal[1] = SCHEMA_VERSION
    request_id: str
    session_id: str
    tenant_id: str
    text: str
    cue_ids: tuple[str, ...] = ()
    model: str
    latency_ms: float
    fallback: bool = False
    ts: datetime
