"""The task state machine (SPEC §5.6) as a pure transition function.

    step(state, item, res, cfg) -> (state, outputs)      item: Turn | SessionEnd
    expire(state, until, res, cfg) -> (state, outputs)   event time advanced to `until` (None = ∞)

State: `SessionState` per session (task id, stage, intent chain, critical entities, commitments,
goal text/vector, timeout, recently archived tasks). Outputs: the annotated `Turn`, the new
`SessionState` (for the mirror), and `ArchivedTask` records.

Transitions come from the declarative table (`state/task/table.py`); goal anchoring decides
between continue, clarify and drift where the table alone cannot:

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

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from schemas.events import ConversationEvent, SessionEnd
from schemas.memory import IntentScores
from schemas.session import (
    ArchivedTask,
    CriticalEntity,
    GoalAnchor,
    SessionState,
    TaskAnnotation,
    TaskCommitment,
    TransitionMode,
)
from state.normalise.turn import Turn
from state.task.anchoring import Thresholds, cosine
from state.task.cues import Cues
from state.task.entities import EntityConfig, extract_turn_entities
from state.task.memory import ArchiveReason, archive, find_commitments, merge_entities, task_id_for
from state.task.table import IDLE, Rule, TaskTable

Vector = tuple[float, ...]
Output = Turn | SessionState | ArchivedTask


@dataclass(frozen=True)
class TaskConfig:
    timeout: timedelta = timedelta(minutes=15)
    shortcut_confidence: float = 0.85
    max_entities: int = 64
    max_commitments: int = 16
    keep_previous_tasks: int = 3
    clarify_margin: float = 0.02


@dataclass(frozen=True)
class TaskResources:
    """The data the transition reads (hot-reloaded by the operator) and the turn embedder."""

    table: TaskTable
    cues: Cues
    entities: EntityConfig
    thresholds: Thresholds
    embedder_name: str
    embed: Callable[[str], Vector]


@dataclass(frozen=True, slots=True)
class _Decision:
    mode: TransitionMode
    stage: str
    action: str | None
    anchor: GoalAnchor | None
    new_task: ArchiveReason | None = None  # archive the open task for this reason and start anew
    set_goal: bool = False
    pending: GoalAnchor | None = None


def _intent(turn: Turn, cues: Cues) -> tuple[str, float]:
    """The tagger's intent label and confidence when the turn carries them (issue 9), else cues."""
    label = getattr(turn, "intent_label", None)
    scores = getattr(turn, "intent", None)
    if isinstance(label, str) and isinstance(scores, IntentScores):
        return label, float(getattr(scores, label, 0.0))
    confidence = getattr(turn, "confidence_score", None)
    if isinstance(label, str) and isinstance(confidence, float):
        return label, confidence
    return cues.speech_act(turn.text)


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


def _clarify(
    res: TaskResources, state: SessionState, lang: str, decision: _Decision, sim: float | None, why: str
) -> _Decision:
    cand_stage = decision.stage if decision.stage != state.current_stage else res.table.fallback_stage
    qlang = "en" if lang == "en" else "zh"
    question = res.cues.question(
        qlang, res.table.stage_label(state.current_stage, qlang), res.table.stage_label(cand_stage, qlang)
    )
    anchor = GoalAnchor(
        decision="clarify",
        similarity=sim,
        embedder=res.embedder_name,
        thresholds=(res.thresholds.continue_at, res.thresholds.clarify_at),
        reason=why,
        clarification_question=question,
        candidate_action=decision.action,
        candidate_stage=cand_stage,
    )
    return _Decision("clarify", state.current_stage, decision.action, anchor, pending=anchor)


def _apply(
    rule: Rule | None, state: SessionState, action: str | None, anchor: GoalAnchor, res: TaskResources
) -> _Decision:
    if rule is None:
        return _Decision("none", state.current_stage, action, anchor)
    if rule.mode == "deepen":
        return _Decision("deepen", rule.to, action, anchor, set_goal=True)
    if rule.mode == "stay":
        return _Decision("stay", state.current_stage, action, anchor)
    target = res.table.actions[action].starts if action else res.table.fallback_stage
    return _Decision("new_task", target, action, anchor, new_task="new_task", set_goal=True)


def _anchor(decision: str, sim: float | None, res: TaskResources, reason: str) -> GoalAnchor:
    return GoalAnchor(
        decision=decision,  # type: ignore[arg-type]
        similarity=sim,
        embedder=res.embedder_name if sim is not None else None,
        thresholds=(res.thresholds.continue_at, res.thresholds.clarify_at) if sim is not None else None,
        reason=reason,
    )


def _decide_customer(
    state: SessionState,
    turn: Turn,
    action: str | None,
    refers_to_task: bool,
    vector: Callable[[], Vector],
    res: TaskResources,
    cfg: TaskConfig,
) -> _Decision:
    table, cues, text = res.table, res.cues, turn.text
    if state.task_id is None:
        stage = table.actions[action].starts if action else table.fallback_stage
        goal = not (action is None and cues.smalltalk.covers(text))
        return _Decision("start", stage, action, _anchor("first", None, res, "first turn of the task"), set_goal=goal)
    rule = table.resolve(state.current_stage, action) if action else None
    if state.pending_clarification is not None:
        return _resolve_clarification(state, turn, action, rule, vector, res, cfg)
    if action is None and cues.smalltalk.covers(text):
        return _Decision("none", state.current_stage, None, _anchor("neutral", None, res, "small talk keeps the task"))
    if state.goal_vector is None:
        d = _apply(rule, state, action, _anchor("first", None, res, "first goal of the task"), res)
        return replace(d, set_goal=True)
    label, confidence = _intent(turn, cues)
    cont = cues.continuation.find(text)
    legal_stay = rule is not None and rule.mode in {"stay", "deepen"}
    if legal_stay and cont and confidence >= cfg.shortcut_confidence:
        why = f"continuation cue {cont!r} with {label} confidence {confidence:.2f}"
        return _apply(rule, state, action, _anchor("shortcut", None, res, why), res)
    if refers_to_task and (rule is None or legal_stay):
        return _apply(rule, state, action, _anchor("reference", None, res, "refers to this task's entities"), res)
    sim = cosine(vector(), state.goal_vector)
    band = res.thresholds.band(sim)
    if legal_stay:
        if band == "drift":
            return _clarify(
                res,
                state,
                turn.lang,
                _apply(rule, state, action, _anchor("clarify", sim, res, ""), res),
                sim,
                "the table allows it but the turn is far from the goal",
            )
        return _apply(rule, state, action, _anchor("continue", sim, res, f"{band} band, table {rule.mode}"), res)  # type: ignore[union-attr]
    if rule is None:
        if band == "continue":
            return _Decision("none", state.current_stage, None, _anchor("continue", sim, res, "close to the goal"))
        if band == "clarify":
            return _clarify(
                res,
                state,
                turn.lang,
                _Decision("none", table.fallback_stage, None, None),
                sim,
                "between the thresholds",
            )
        return _Decision(
            "drift",
            table.fallback_stage,
            None,
            _anchor("drift", sim, res, "far from the goal"),
            new_task="drift",
            set_goal=True,
        )
    # The table says this action is another task.
    target = table.actions[action].starts if action else table.fallback_stage
    if band == "drift":
        return _Decision(
            "drift",
            target,
            action,
            _anchor("drift", sim, res, "new task by the table, far from the goal"),
            new_task="new_task",
            set_goal=True,
        )
    return _clarify(
        res,
        state,
        turn.lang,
        _Decision("new_task", target, action, None),
        sim,
        f"the table starts a new task but the turn is in the {band} band",
    )


def _resolve_clarification(
    state: SessionState,
    turn: Turn,
    action: str | None,
    rule: Rule | None,
    vector: Callable[[], Vector],
    res: TaskResources,
    cfg: TaskConfig,
) -> _Decision:
    pending = state.pending_clarification
    cand_action = pending.candidate_action if pending is not None else None
    text = turn.text
    switch = bool(res.cues.switch.find(text)) or (action is not None and action == cand_action)
    stay = bool(res.cues.stay.find(text))
    sim_now = sim_cand = None
    if not switch and not stay and state.goal_vector is not None and state.candidate_goal_vector is not None:
        vec = vector()
        sim_now, sim_cand = cosine(vec, state.goal_vector), cosine(vec, state.candidate_goal_vector)
        switch = sim_cand > sim_now + cfg.clarify_margin
    if switch:
        chosen = action or cand_action
        stage = res.table.actions[chosen].starts if chosen else res.table.fallback_stage
        anchor = _anchor("drift", sim_cand, res, f"clarified: switch to {stage}")
        return _Decision("new_task", stage, chosen, anchor, new_task="new_task", set_goal=True)
    anchor = _anchor("continue", sim_now, res, "clarified: stay with the current goal")
    if rule is not None and rule.mode in {"stay", "deepen"}:
        return _apply(rule, state, action, anchor, res)
    return _Decision("none", state.current_stage, None, anchor)


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
    label, _ = _intent(item, res.cues)
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
        decision = _decide_customer(state, item, action, refers_to_task, vector, res, cfg)
    elif state.task_id is None:
        decision = _Decision("start", res.table.fallback_stage, None, None)
    else:
        decision = _Decision("none", state.current_stage, None, None)

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
