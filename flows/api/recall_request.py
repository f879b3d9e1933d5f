"""POST /recall body → the same `RecallRequest` the stream's trigger would have built.

Input: the API body, the caller's tenant, the session's stored memory units (payloads) and its
last task state. Output: a `RecallRequest`. State: none (pure).

The stream's trigger (state/recall/trigger.py) hands recall the last ≤ 3 turns as immediate
context, the people and strong identifiers named so far and the task id and stage. The API
rebuilds these from what the replay stored: context from the session's units said before the
turn (one per event, verbatim `source_text`), people and identifiers from the task state's
critical entities, the task from that state. A body that brings its own context wins.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from flows.api.models import RecallBody
from schemas.events import as_utc
from schemas.recall import ContextTurn, RecallRequest
from schemas.session import SessionState

# Fixed namespace: the same body at the same time gets the same query id (idempotent retries).
API_QUERY_NAMESPACE = uuid.UUID("0b6f6a8e-2f43-4a51-9d3e-6c1f0e8a7b21")
_PERSON_KINDS = frozenset({"person", "people", "contact", "agent_name"})


def query_event_id(tenant_id: str, session_id: str, text: str, ts: datetime) -> str:
    """A deterministic id for a turn posted without one.

    >>> from datetime import UTC, datetime
    >>> a = query_event_id("t", "s", "hi", datetime(2026, 1, 1, tzinfo=UTC))
    >>> a == query_event_id("t", "s", "hi", datetime(2026, 1, 1, tzinfo=UTC)), a.startswith("api-")
    (True, True)
    """
    return "api-" + str(uuid.uuid5(API_QUERY_NAMESPACE, f"{tenant_id}\x1f{session_id}\x1f{ts.isoformat()}\x1f{text}"))


def context_from_units(units: Sequence[Mapping[str, Any]], before: datetime, keep: int = 3) -> tuple[ContextTurn, ...]:
    """The last `keep` turns said strictly before `before`, one per event, oldest first."""
    turns: dict[str, ContextTurn] = {}
    for u in units:
        ts = datetime.fromisoformat(str(u["ts"]))
        if ts >= before or u["event_id"] in turns:
            continue
        turns[u["event_id"]] = ContextTurn(
            event_id=str(u["event_id"]),
            ts=ts,
            text=str(u.get("source_text") or u.get("text", "")),
            speaker=u.get("speaker"),
            speaker_role=u.get("speaker_role", "customer"),
        )
    ordered = sorted(turns.values(), key=lambda t: (t.ts, t.event_id))
    return tuple(ordered[-keep:]) if keep else ()


def build_request(
    body: RecallBody,
    *,
    tenant_id: str,
    now: datetime,
    units: Sequence[Mapping[str, Any]],
    state: SessionState | None,
    context_turns: int = 3,
) -> RecallRequest:
    ts = as_utc(body.ts) if body.ts is not None else now
    event_id = body.event_id or query_event_id(tenant_id, body.session_id, body.text, ts)
    if body.context is not None:
        context = (
            tuple(
                ContextTurn(
                    event_id=f"{event_id}:ctx{i}",
                    ts=as_utc(c.ts) if c.ts is not None else ts,
                    text=c.text,
                    speaker=c.speaker,
                    speaker_role=c.speaker_role,
                )
                for i, c in enumerate(body.context)
            )[-context_turns:]
            if context_turns
            else ()
        )
    else:
        context = context_from_units(units, ts, context_turns)
    entities = state.critical_entities if state is not None else ()
    people = {e.value for e in entities if e.kind in _PERSON_KINDS}
    speakers = {t.speaker for t in context if t.speaker}
    ids = [e.value for e in entities if e.strength == "strong" and e.kind not in _PERSON_KINDS]
    user_id = body.user_id or (state.user_id if state is not None else None)
    return RecallRequest(
        query_event_id=event_id,
        session_id=body.session_id,
        tenant_id=tenant_id,
        user_id=user_id,
        query_text=body.text,
        ts=ts,
        speaker=body.speaker,
        context=context,
        known_people=tuple(sorted(speakers | people)),
        entities=tuple(dict.fromkeys(ids)),
        task_id=state.task_id if state is not None else None,
        task_stage=state.current_stage if state is not None else None,
        intent_chain=state.intent_chain if state is not None else (),
    )
