"""Recall trigger: which turns ask for recall, with the immediate context they carry.

Input: `SessionStep` (an event and the session state after it), keyed by session. Output:
`RecallRequest` for each turn by a triggering role (customers by default). State:
`TriggerState` per session: the last N turns (N ≤ 3), the immediate-context tier, which is
handed to recall as context and never retrieved. Discarded on SessionEnd (the session step
carries no state) and by the operator's idle timer.

Also here: `response_request`, the pure step from a recall result to the responder's input.
"""

from __future__ import annotations

from dataclasses import dataclass

from schemas.events import ConversationEvent
from schemas.recall import ContextTurn, RecallRequest, RecallResult
from schemas.response import ResponseRequest
from state.session import SessionStep

_PERSON_KINDS = frozenset({"person", "people", "contact", "agent_name"})


@dataclass(frozen=True, slots=True)
class TriggerConfig:
    context_turns: int = 3
    trigger_roles: tuple[str, ...] = ("customer",)


@dataclass(frozen=True, slots=True)
class TriggerState:
    context: tuple[ContextTurn, ...] = ()


def on_step(
    state: TriggerState | None, step: SessionStep, config: TriggerConfig
) -> tuple[TriggerState | None, list[RecallRequest]]:
    """Fold one session step; emit a RecallRequest when a triggering role speaks.

    >>> from datetime import UTC, datetime
    >>> from schemas.session import SessionState
    >>> ev = ConversationEvent(event_id="e1", session_id="s", user_id="u", ts=datetime(2026, 1, 1, tzinfo=UTC),
    ...                        text="我的快递到哪了")
    >>> st, out = on_step(None, SessionStep(ev, SessionState(session_id="s")), TriggerConfig())
    >>> (out[0].query_text, len(st.context))
    ('我的快递到哪了', 1)
    """
    if step.state is None:
        return None, []
    event = step.event
    if not isinstance(event, ConversationEvent):
        return state or TriggerState(), []
    context = state.context if state is not None else ()
    out: list[RecallRequest] = []
    if event.speaker_role in config.trigger_roles and event.text.strip():
        s = step.state
        speakers = {t.speaker for t in context if t.speaker}
        people = [e.value for e in s.critical_entities if e.kind in _PERSON_KINDS]
        entities = [e.value for e in s.critical_entities if e.strength == "strong" and e.kind not in _PERSON_KINDS]
        out.append(
            RecallRequest(
                query_event_id=event.event_id,
                session_id=event.session_id,
                tenant_id=event.tenant_id,
                user_id=event.user_id,
                query_text=event.text,
                ts=event.ts,
                speaker=event.speaker,
                context=context[-config.context_turns :] if config.context_turns else (),
                known_people=tuple(sorted(speakers | set(people))),
                entities=tuple(dict.fromkeys(entities)),
                task_id=s.task_id,
                task_stage=s.current_stage,
                intent_chain=s.intent_chain,
            )
        )
    turn = ContextTurn(
        event_id=event.event_id, ts=event.ts, text=event.text, speaker=event.speaker, speaker_role=event.speaker_role
    )
    keep = config.context_turns
    new_context = (*context, turn)[-keep:] if keep else ()
    return TriggerState(context=new_context), out


def response_request(request: RecallRequest, result: RecallResult) -> ResponseRequest:
    """What the responder needs: the question, the task state and the top cues (deterministic id)."""
    return ResponseRequest(
        request_id=f"resp:{request.tenant_id}:{request.session_id}:{request.query_event_id}",
        session_id=request.session_id,
        tenant_id=request.tenant_id,
        user_id=request.user_id,
        query_event_id=request.query_event_id,
        query_text=request.query_text,
        ts=request.ts,
        task_id=request.task_id,
        task_stage=request.task_stage,
        intent_chain=request.intent_chain,
        cues=result.cues,
    )
