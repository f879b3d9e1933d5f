"""The task state machine (docs/design.md#task-state-machine) as a pure transition function.

    step(state, item, res, cfg) -> (state, outputs)      item: Turn | SessionEnd
    expire(state, until, res, cfg) -> (state, outputs)   event time advanced to `until` (None = ∞)

State: `SessionState` per session (task id, stage, intent chain, critical entities, commitments,
goal text/vector, timeout, recently archived tasks). Outputs: the annotated `Turn`, the new
`SessionState` (for the mirror), and `ArchivedTask` records.

Transitions come from the declarative table (`state/task/table.py`); goal anchoring decides
between continue, clarify and drift where the table alone cannot (`state/task/decide.py`):

    table says \\ cosine band   continue            clarify             drift
    stay / deepen               apply               apply               clarify
    no action                   continue            clarify             drift → new task
    new task                    clarify             clarify             new task

before that: a table-legal stay/deepen with a continuation cue and intent confidence ≥ 0.85
skips the check (shortcut); a turn that names this task's known entities or commitments
continues (reference); small talk keeps the task (neutral). The answer to a clarification
question switches or stays. Time is event time only: a task whose `timeout_at` has passed is
archived by the next item of its session or by `expire` (timer or end of input).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from schemas.events import ConversationEvent, SessionEnd
from schemas.session import (
    ArchivedTask,
    CriticalEntity,
    SessionState,
    TaskAnnotation,
    TaskCommitment,
)
from state.normalise.turn import Turn
from state.task.config import TaskConfig, TaskResources, Vector
from state.task.cues import Cues
from state.task.decide import Decision, decide_customer, intent_of
from state.task.entities import extract_turn_entities
from state.task.memory import ArchiveReason, archive, find_commitments, merge_entities, task_id_for
from state.task.table import IDLE

# TaskConfig, TaskResources and Vector live in state/task/config.py; they are re-exported here
# because this module is the state machine's public face.
__all__ = ["Output", "TaskConfig", "TaskResources", "Vector", "expire", "is_idle", "step"]

Output = Turn | SessionState | ArchivedTask


def _fresh(state: SessionState | None, ev: ConversationEvent | SessionEnd) -> SessionState:
    if state is not None:
        return state
    return SessionState(session_id=ev.session_id, tenant_id=ev.tenant_id, user_id=ev.user_id)


def expire(
    state: SessionState | None, until: datetime | None, cfg: TaskConfig
) -> tuple[SessionState | None, list[Output]]:
    """Advance event time to `until` (None: end of input, time → ∞) and archive what is due.

    A task times out at `timeout_at`; a session end archives the open task once time is past
    the end (turns stamped before the end may still arrive and join it).
    """
    if state is None or state.task_id is None:
        return state, []
    due: list[tuple[datetime, ArchiveReason]] = []
    if state.timeout_at is not None and (until is None or until >= state.timeout_at):
        due.append((state.timeout_at, "timeout"))
    if state.ended_at is not None and (until is None or until > state.ended_at):
        due.append((state.ended_at, "session_end"))
    if not due:
        return state, []
    at, reason = min(due)
    cleared, record = archive(state, reason, at, cfg.keep_previous_tasks)
    return cleared, [record, cleared]


def _start(state: SessionState, ev: ConversationEvent, seq_stage: str) -> SessionState:
    seq = state.task_seq + 1
    return state.model_copy(
        update={
            "task_seq": seq,
            "task_id": task_id_for(ev.tenant_id, ev.session_id, ev.event_id, seq, ev.ts),
            "task_started_at": ev.ts,
            "current_stage": seq_stage,
            "intent_chain": (),
            "critical_entities": (),
            "commitments": (),
            "goal_text": None,
            "goal_vector": None,
            "anchor": None,
            "pending_clarification": None,
            "candidate_goal_text": None,
            "candidate_goal_vector": None,
            "related_task_id": None,
        }
    )


def _commitment(
    turn: Turn, cues: Cues, task_id: str | None, label: str, strong: tuple[CriticalEntity, ...]
) -> TaskCommitment | None:
    """A promise with a topic: the tagger's commitment label, or a commitment cue of strength ≥ 0.7."""
    text = turn.text
    topic = cues.topic(text)
    strength = cues.strength(text)
    if topic is None or (label != "commitment" and strength < 0.7):
        return None
    ev = turn.event
    return TaskCommitment(
        topic=topic,
        text=text,
        turn_id=ev.turn_key,
        event_id=ev.event_id,
        ts=ev.ts,
        speaker_role=ev.speaker_role,
        strength=strength or 0.7,
        amount=next((e.value for e in strong if e.kind == "amount"), None),
        task_id=task_id,
    )


def step(
    state: SessionState | None, item: Turn | SessionEnd, res: TaskResources, cfg: TaskConfig
) -> tuple[SessionState | None, list[Output]]:
    """Fold one item into the session's task state (see the module docstring for the rules)."""
    if isinstance(item, SessionEnd):
        state, out = expire(state, item.ts, cfg)
        state = _fresh(state, item)
        ended = item.ts if state.ended_at is None else max(state.ended_at, item.ts)
        state = state.model_copy(update={"ended_at": ended})
        return state, [*out, state]
    ev = item.event
    state, out = expire(state, ev.ts, cfg)
    state = _fresh(state, ev)
    if state.ended_at is not None and ev.ts > state.ended_at:
        state = state.model_copy(update={"ended_at": None})  # the session id is in use again
    known = list(state.critical_entities)
    found = extract_turn_entities(item.text, ev.turn_key, known, res.entities)
    known_values = {(e.kind, e.value) for e in known if e.bound}
    refers_to_task = any(w.bound and (w.kind, w.value) in known_values for w in found.weak) or any(
        (e.kind, e.value) in known_values and e.kind != "amount" for e in found.strong
    )
    label, _ = intent_of(item, res.cues)
    topic = res.cues.topic(item.text)
    refs: tuple[TaskCommitment, ...] = ()
    related: str | None = None
    if ev.speaker_role == "customer" and topic and res.cues.back_reference.find(item.text):
        refs, related = find_commitments(state, topic)
        refers_to_task = refers_to_task or (bool(refs) and related is None)

    cache: dict[str, Vector] = {}

    def vector() -> Vector:
        if "v" not in cache:
            cache["v"] = res.embed(item.text)
        return cache["v"]

    if ev.speaker_role == "customer":
        detected = res.table.detect(item.text)
        action = detected[0].action if detected else None
        decision = decide_customer(state, item, action, refers_to_task, vector, res, cfg)
    elif state.task_id is None:
        decision = Decision("start", res.table.fallback_stage, None, None)
    else:
        decision = Decision("none", state.current_stage, None, None)

    if decision.new_task is not None and state.task_id is not None:
        state, record = archive(state, decision.new_task, ev.ts, cfg.keep_previous_tasks)
        out.append(record)
    if decision.mode == "start" or decision.new_task is not None:
        state = _start(state, ev, decision.stage)
        if refs and related is not None:
            # "上次说要给我补偿…": the new task carries what the archived one promised and knew.
            prev = next(p for p in state.previous_tasks if p.task_id == related)
            state = state.model_copy(
                update={
                    "commitments": prev.commitments,
                    "critical_entities": prev.critical_entities,
                    "related_task_id": related,
                }
            )
            known = list(prev.critical_entities)
            found = extract_turn_entities(item.text, ev.turn_key, known, res.entities)

    chain = state.intent_chain
    moved = decision.mode in {"start", "stay", "deepen", "new_task", "drift"}
    if decision.action is not None and moved and (not chain or chain[-1] != decision.action):
        chain = (*chain, decision.action)
    entities = merge_entities(state.critical_entities, found.strong, found.weak, res.entities, cfg.max_entities)
    commitments = state.commitments
    new_commitment = (
        _commitment(item, res.cues, state.task_id, label, found.strong)
        if ev.speaker_role != "customer" or label == "commitment"
        else None
    )
    if new_commitment is not None:
        commitments = (*commitments, new_commitment)[-cfg.max_commitments :]
    latest = ev.ts if state.last_event_ts is None else max(state.last_event_ts, ev.ts)
    updates: dict[str, object] = {
        "current_stage": decision.stage,
        "intent_chain": chain,
        "critical_entities": entities,
        "commitments": commitments,
        "turn_count": state.turn_count + 1,
        "last_event_id": ev.event_id,
        "last_event_ts": latest,
        "timeout_at": latest + cfg.timeout,
    }
    if decision.anchor is not None:
        updates["anchor"] = decision.anchor
    if decision.set_goal:
        updates["goal_text"] = item.text
        updates["goal_vector"] = vector()
    if decision.pending is not None:
        updates["pending_clarification"] = decision.pending
        updates["candidate_goal_text"] = item.text
        updates["candidate_goal_vector"] = vector()
    elif ev.speaker_role == "customer":
        updates["pending_clarification"] = None
        updates["candidate_goal_text"] = None
        updates["candidate_goal_vector"] = None
    if related is not None:
        updates["related_task_id"] = related
    state = state.model_copy(update=updates)
    annotation = TaskAnnotation(
        task_id=state.task_id or "",
        stage=state.current_stage,
        action=decision.action,
        transition=decision.mode,
        anchor=decision.anchor,
        entities=(*found.strong, *found.weak),
        commitment_refs=refs,
        related_task_id=related,
    )
    out.append(replace(item, task_id=state.task_id, task=annotation))
    out.append(state)
    return state, out


def is_idle(state: SessionState) -> bool:
    return state.task_id is None and state.current_stage == IDLE
