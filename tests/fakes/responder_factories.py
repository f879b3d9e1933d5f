"""Factories for responder tests: cues, requests and a responder against a given endpoint."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from schemas.memory import EmotionLoad
from schemas.recall import Cue, ScoreComponents
from schemas.response import ResponseRequest
from sinks.http.chat_client import ChatConfig
from sinks.respond.responder import Responder, ResponderConfig
from state.respond.decisions import DecisionSwitches
from state.respond.tables import decision_tables, response_text

TS = datetime(2026, 6, 10, 9, 0, tzinfo=UTC)


def make_cue(memory_id: str = "mem-1", text: str = "客服承诺发票下周二寄出", **overrides: Any) -> Cue:
    fields: dict[str, Any] = {
        "memory_id": memory_id,
        "text": text,
        "unit_type": "commitment",
        "score": 0.8,
        "components": ScoreComponents(commitment_strength=0.7, css=0.8, final=0.8),
        "explanation": "test cue",
        "ts": datetime(2026, 6, 8, 10, 0, tzinfo=UTC),
        "speaker_role": "agent",
        "emotion": EmotionLoad(certainty=0.9, urgency=0.2),
    }
    fields.update(overrides)
    return Cue(**fields)


def make_request(query: str = "我的发票什么时候到？", *cues: Cue, **overrides: Any) -> ResponseRequest:
    n = overrides.pop("n", 1)
    fields: dict[str, Any] = {
        "request_id": f"req-{n}",
        "session_id": overrides.pop("session_id", "sess-1"),
        "tenant_id": "tenant-a",
        "user_id": "user-1",
        "query_event_id": f"ev-{n}",
        "query_text": query,
        "ts": TS,
        "task_id": "TSK-2026-06-abc123",
        "task_stage": "INVOICE",
        "intent_chain": ("ask_invoice",),
        "cues": cues,
    }
    fields.update(overrides)
    return ResponseRequest(**fields)


def make_responder(
    base_url: str,
    *,
    timeout_s: float = 0.5,
    deadline_s: float = 1.5,
    retries: int = 1,
    concurrency: int = 4,
    switches: DecisionSwitches | None = None,
    **config: Any,
) -> Responder:
    chat = ChatConfig(
        base_url=base_url,
        model="fake-model",
        timeout_s=timeout_s,
        connect_timeout_s=0.3,
        deadline_s=deadline_s,
        retries=retries,
        retry_backoff_s=0.01,
    )
    cfg = ResponderConfig(
        chat=chat, concurrency=concurrency, switches=switches or DecisionSwitches(), timezone="Asia/Shanghai", **config
    )
    return Responder(cfg, tables=decision_tables(), text=response_text())
