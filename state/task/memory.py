"""What a task remembers: critical entities, commitments, archived-task summaries, task ids.

Pure helpers of the task state machine (state/task/fsm.py): merging entities progressively
(strong first, weak references bound later), recording and finding commitments, archiving a
task into an `ArchivedTask` and a bounded `TaskSummary`, and the deterministic task id.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Literal

from schemas.session import ArchivedTask, CriticalEntity, SessionState, TaskCommitment, TaskSummary
from state.task.entities import EntityConfig, rebind_pending

ArchiveReason = Literal["timeout", "drift", "session_end", "new_task"]


def task_id_for(tenant_id: str, session_id: str, first_event_id: str, seq: int, ts: datetime) -> str:
    """`TSK-YYYY-MM-xxxxxx` from the task's first event: the same events give the same id.

    >>> from datetime import UTC, datetime
    >>> task_id_for("default", "s1", "e1", 1, datetime(2026, 5, 3, tzinfo=UTC))
    'TSK-2026-05-39d8ee'
    """
    digest = hashlib.sha256(f"{tenant_id}\x1f{session_id}\x1f{first_event_id}\x1f{seq}".encode()).hexdigest()[:6]
    return f"TSK-{ts:%Y}-{ts:%m}-{digest}"


def _key(e: CriticalEntity) -> tuple[str, str, str, str]:
    return (e.kind, e.value, e.strength, e.mention or "")


def merge_entities(
    known: tuple[CriticalEntity, ...],
    strong: tuple[CriticalEntity, ...],
    weak: tuple[CriticalEntity, ...],
    cfg: EntityConfig,
    limit: int,
) -> tuple[CriticalEntity, ...]:
    """Known entities plus this turn's, most recently mentioned last, at most `limit`.

    Pending (unbound) weak references get a chance to bind to the new strong entities: the
    progressive step ("那个蓝色的盒子" said before the SKU was known binds once it is).
    """
    out: dict[tuple[str, str, str, str], CriticalEntity] = {}
    fresh = list(strong)
    for ent in known:
        if ent.strength == "weak" and not ent.bound and fresh:
            ent = rebind_pending(ent, fresh, cfg)
        out[_key(ent)] = ent
    for ent in (*strong, *weak):
        k = _key(ent)
        if k in out:
            ent = out.pop(k)  # keep the first sighting, move it to the most recent end
        out[k] = ent
    # A weak reference that re-points to a strong entity also refreshes that entity's recency.
    for ent in weak:
        if ent.bound:
            for k, cand in list(out.items()):
                if cand.strength == "strong" and cand.kind == ent.kind and cand.value == ent.value:
                    out[k] = out.pop(k)
    merged = list(out.values())
    if len(merged) > limit:
        # Drop the oldest unbound weak references first, then the oldest of the rest.
        drop = len(merged) - limit
        pending = [i for i, e in enumerate(merged) if e.strength == "weak" and not e.bound][:drop]
        rest = [i for i in range(len(merged)) if i not in set(pending)][: drop - len(pending)]
        gone = set(pending) | set(rest)
        merged = [e for i, e in enumerate(merged) if i not in gone]
    return tuple(merged)


def find_commitments(state: SessionState, topic: str) -> tuple[tuple[TaskCommitment, ...], str | None]:
    """Commitments on `topic` in the current task, else in the most recent archived task with one.

    Returns the commitments and, when they come from an archived task, that task's id.
    """
    here = tuple(c for c in state.commitments if c.topic == topic)
    if here:
        return here, None
    for summary in state.previous_tasks:
        there = tuple(c for c in summary.commitments if c.topic == topic)
        if there:
            return there, summary.task_id
    return (), None


def summary_of(state: SessionState, reason: ArchiveReason, at: datetime) -> TaskSummary:
    return TaskSummary(
        task_id=state.task_id or "",
        stage=state.current_stage,
        intent_chain=state.intent_chain,
        critical_entities=state.critical_entities,
        commitments=state.commitments,
        archived_at=at,
        reason=reason,
    )


def archive(state: SessionState, reason: ArchiveReason, at: datetime, keep: int) -> tuple[SessionState, ArchivedTask]:
    """Archive the open task: the record for the sink, and the state with the chain cleared."""
    record = ArchivedTask(
        session_id=state.session_id, task_id=state.task_id or "", reason=reason, archived_at=at, final_state=state
    )
    previous = (summary_of(state, reason, at), *state.previous_tasks)[:keep]
    cleared = state.model_copy(
        update={
            "task_id": None,
            "current_stage": "idle",
            "intent_chain": (),
            "critical_entities": (),
            "commitments": (),
            "goal_text": None,
            "goal_vector": None,
            "timeout_at": None,
            "task_started_at": None,
            "anchor": None,
            "pending_clarification": None,
            "candidate_goal_text": None,
            "candidate_goal_vector": None,
            "related_task_id": None,
            "previous_tasks": previous,
        }
    )
    return cleared, record
