"""SessionState: the per-session task state as mirrored to Redis (`task_state:{session_id}`).

Also the records the task state machine (docs/design.md#task-state-machine) emits or attaches: critical entities,
commitments made inside a task, the goal-anchoring decision of a turn, the per-turn task
annotation, summaries of recently archived tasks and the archived-task record itself.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from schemas.events import SCHEMA_VERSION, Record

AnchorDecision = Literal["first", "continue", "shortcut", "reference", "neutral", "clarify", "drift"]
TransitionMode = Literal["start", "stay", "deepen", "new_task", "drift", "clarify", "none"]


class CriticalEntity(Record):
    """A strong identifier (order id, phone, tracking number, amount, name) or a bound weak reference.

    A weak reference ("这个订单", "the blue one") carries the `mention` as said; once bound,
    `kind`/`value` are those of the known entity it points to (`bound` is True). An unbound
    weak reference keeps `value` = the mention until a later strong entity of its kind binds it.
    """

    kind: str
    value: str
    turn_id: str
    strength: Literal["strong", "weak"] = "strong"
    category: str | None = None
    mention: str | None = None
    context: str | None = None
    bound: bool = True


class TaskCommitment(Record):
    """Something promised inside a task ("我们会给您补偿20元" → topic compensation)."""

    topic: str
    text: str
    turn_id: str
    event_id: str
    ts: datetime
    speaker_role: Literal["customer", "agent", "third_party"] = "agent"
    strength: float = Field(default=0.7, ge=0.0, le=1.0)
    amount: str | None = None
    task_id: str | None = None


class GoalAnchor(Record):
    """How a customer turn relates to the task's goal (goal anchoring, docs/design.md#task-state-machine).

    `similarity` is the cosine of the turn to the goal under `embedder`; `thresholds` are the
    (continue, clarify) cut-offs used for that embedder. `clarify` carries a suggested question.
    """

    decision: AnchorDecision
    similarity: float | None = None
    embedder: str | None = None
    thresholds: tuple[float, float] | None = None
    reason: str = ""
    clarification_question: str | None = None
    candidate_action: str | None = None
    candidate_stage: str | None = None


class TaskSummary(Record):
    """What is kept of an archived task in the session state (bounded), so "上次…" can find it."""

    task_id: str
    stage: str
    intent_chain: tuple[str, ...] = ()
    critical_entities: tuple[CriticalEntity, ...] = ()
    commitments: tuple[TaskCommitment, ...] = ()
    archived_at: datetime
    reason: Literal["timeout", "drift", "session_end", "new_task"]


class TaskAnnotation(Record):
    """The task state machine's verdict on one turn, attached to the turn (`Turn.task`)."""

    task_id: str
    stage: str
    action: str | None = None
    transition: TransitionMode = "none"
    anchor: GoalAnchor | None = None
    entities: tuple[CriticalEntity, ...] = ()
    commitment_refs: tuple[TaskCommitment, ...] = ()
    related_task_id: str | None = None


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
    # -- task state machine (docs/design.md#task-state-machine) --
    task_seq: int = Field(default=0, ge=0, description="tasks started in this session; part of the task id")
    task_started_at: datetime | None = None
    commitments: tuple[TaskCommitment, ...] = ()
    anchor: GoalAnchor | None = Field(default=None, description="the last customer turn's anchoring decision")
    pending_clarification: GoalAnchor | None = None
    candidate_goal_text: str | None = None
    candidate_goal_vector: tuple[float, ...] | None = None
    related_task_id: str | None = None
    previous_tasks: tuple[TaskSummary, ...] = ()
    ended_at: datetime | None = Field(default=None, description="a SessionEnd was seen at this event time")


class ArchivedTask(Record):
    """Emitted when a task is archived (inactivity timeout, drift, session end)."""

    schema_version: Literal[1] = SCHEMA_VERSION
    session_id: str
    task_id: str
    reason: Literal["timeout", "drift", "session_end", "new_task"]
    archived_at: datetime
    final_state: SessionState
