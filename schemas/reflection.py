"""Reflection (docs/design.md#responder): a user's correction of the previous answer, as structured records.

* `ReflectionRecord` — what went wrong, from a small template set (`error_pattern`), where the
  right answer came from (`correct_answer_source`) and what to change (`fix_strategy`). Rule
  templates only: a model never writes a reflection (it would be as unreliable as the answer it
  corrects).
* `SupersedeRequest` — the typed request the responder emits so that the user's statement
  replaces the wrong memory; `sinks.store.supersede.SupersedeExecutor` executes it against the
  memory store (the responder itself never writes the store).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import Field

from schemas.events import Record

ErrorPattern = Literal["date_parse_error", "entity_recognition_error", "state_sync_delay", "fact_mismatch"]

# Fixed namespace: a replayed correction yields the same reflection id (idempotent sinks).
REFLECTION_NAMESPACE = uuid.UUID("0d7e2b61-93c4-4f0a-8a51-5c2e7f9b1d34")


def reflection_id(tenant_id: str, session_id: str, correction_event_id: str) -> str:
    """Deterministic id of the reflection on one correction.

    >>> reflection_id("t", "s", "e") == reflection_id("t", "s", "e")
    True
    """
    return str(uuid.uuid5(REFLECTION_NAMESPACE, f"{tenant_id}\x1f{session_id}\x1f{correction_event_id}"))


class CorrectAnswerSource(Record):
    """Where the right answer comes from: the user's own statement beats every stored memory."""

    kind: Literal["user_statement"] = "user_statement"
    event_id: str
    text: str = Field(description="the corrected value as the user said it")
    normalised: str | None = Field(default=None, description="e.g. an ISO date for 上个月15号")


class ReflectionRecord(Record):
    schema_version: Literal[1] = 1  # SCHEMA_VERSION, spelled as the literal mypy can check
    reflection_id: str
    tenant_id: str
    session_id: str
    user_id: str | None = None
    ts: datetime
    correction_event_id: str
    correction_text: str
    previous_request_id: str
    previous_answer: str
    wrong_value: str | None = None
    error_pattern: ErrorPattern
    correct_answer_source: CorrectAnswerSource
    fix_strategy: str
    superseded_memory_ids: tuple[str, ...] = ()
    needs_review: bool = Field(default=True, description="reflections are sampled by a person before they steer fixes")


class SupersedeRequest(Record):
    """Replace `memory_ids` by the user's statement: executed by `sinks.store.supersede.SupersedeExecutor`."""

    schema_version: Literal[1] = 1  # SCHEMA_VERSION, spelled as the literal mypy can check
    reflection_id: str
    tenant_id: str
    session_id: str
    user_id: str | None = None
    task_id: str | None = None
    ts: datetime
    memory_ids: tuple[str, ...]
    statement_event_id: str
    statement_text: str = Field(description="the user's corrected statement, stored as the new memory")
    source_text: str
    lang: str | None = None
