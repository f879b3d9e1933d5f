"""Recall trigger: which turns ask for recall, with the immediate context they carry.

Input: keyed `Turn` (the write path's turn record) and keyed `SessionEnd`. Output:
`RecallRequest` for each turn by a triggering role (customers by default). State:
`TriggerState` per session: the last N turns (N ≤ 3), the immediate-context tier handed to
recall as context and never retrieved, plus the strong identifiers and people the task
named so far. Discarded on SessionEnd and by the operator's idle timer.

Task fields come from the turn: `task_id`, and, where the task state machine annotated the
turn (`Turn.task`: stage and critical entities), those too.

Also here: `response_request`, the pure step from a recall result to the responder's input.
"""

from __future__ import annotations

from dataclasses import dataclass

from schemas.events import ConversationEvent, SessionEnd
from schemas.recall import ContextTurn, RecallRequest, RecallResult
from schemas.response import ResponseRequest
from schemas.session import CriticalEntity
from state.normalise.turn import Turn

_PERSON_KINDS = frozenset({"person", "people", "contact", "agent_name"})
_KEEP_ENTITIES = 16


@dataclass(frozen=True, slots=True)
class TriggerConfig:
    context_turns: int = 3
    trigger_roles: tuple[str, ...] = ("customer",)


@dataclass(frozen=True, slots=True)
class TriggerState:
    context: tuple[ContextTurn, ...] = ()
    entities: tuple[CriticalEntity, ...] = ()


def _task_view(turn: Turn) -> tuple[str | None, tuple[CriticalEntity, ...]]:
    """Stage and critical entities from the task state machine's annotation, when there is one."""
    task = getattr(turn, "task", None)  # `Turn.task` is set by the task state machine stage
    if task is None:
        return None, ()
    return getattr(task, "stage", None), tuple(getattr(task, "entities", ()))


def triggers(event: ConversationEvent, config: TriggerConfig) -> bool:
    """Whether this turn asks for recall (and so, downstream, for an answer).

    >>> from datetime import UTC, datetime
    >>> ev = ConversationEvent(event_id="e", session_id="s", ts=datetime(2026, 1, 1, tzinfo=UTC), text="在吗")
    >>> triggers(ev, TriggerConfig()), triggers(ev.model_copy(update={"speaker_role": "agent"}), TriggerConfig())
    (True, False)
    """
    return event.speaker_role in config.trigger_roles and bool(event.text.strip())


def on_item(
    state: TriggerState | None, item: Turn | SessionEnd, config: TriggerConfig
) -> tuple[TriggerState | None, list[RecallRequest]]:
    """Fold one turn (or the session's end); emit a RecallRequest when a triggering role speaks.

    >>> from datetime import UTC, datetime
    >>> from schemas.events import ConversationEvent
    >>> from state.normalise.turn import NormaliseConfig, normalise_turn
    >>> ev = ConversationEvent(event_id="e1", session_id="s", user_id="u", ts=datetime(2026, 1, 1, tzinfo=UTC),
    ...                        text="我的快递到哪了")
    >>> st, out = on_item(None, normalise_turn(ev, NormaliseConfig()), TriggerConfig())
    >>> (out[0].query_text, len(st.context))
    ('我的快递到哪了', 1)
    """
    if isinstance(item, SessionEnd):
        return None, []
    event = item.event
    context = state.context if state is not None else ()
    stage, named = _task_view(item)
    known = {(e.kind, e.value): e for e in (*(state.entities if state else ()), *named)}
    entities = tuple(known.values())[-_KEEP_ENTITIES:]
    out: list[RecallRequest] = []
    if triggers(event, config):
        speakers = {t.speaker for t in context if t.speaker}
        people = {e.value for e in entities if e.kind in _PERSON_KINDS}
        ids = [e.value for e in entities if e.strength == "strong" and e.kind not in _PERSON_KINDS]
        out.append(
            RecallRequest(
                query_event_id=event.event_id,
                session_id=event.session_id,
                tenant_id=event.tenant_id,
                user_id=event.user_id,
                # the cleaned text goal anchoring embedded (`Turn.text`): one query vector serves both
                query_text=item.text,
                ts=event.ts,
                speaker=event.speaker,
                context=context[-config.context_turns :] if config.context_turns else (),
                known_people=tuple(sorted(speakers | people)),
                entities=tuple(dict.fromkeys(ids)),
                task_id=item.task_id,
                task_stage=stage,
                times=item.times,
            )
        )
    turn = ContextTurn(
        event_id=event.event_id, ts=event.ts, text=event.text, speaker=event.speaker, speaker_role=event.speaker_role
    )
    keep = config.context_turns
    new_context = (*context, turn)[-keep:] if keep else ()
    return TriggerState(context=new_context, entities=entities), out


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
