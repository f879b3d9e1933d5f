"""How the task state machine decides what a customer turn does to the task.

The table (`state/task/table.py`) proposes; goal anchoring (`state/task/anchoring.py`) confirms,
asks to clarify or calls a drift where the table alone cannot (the grid is in `state/task/fsm.py`
and docs/design.md#task-state-machine). `decide_customer` returns a `Decision`; applying it to the
state is `state.task.fsm.step`'s job. Pure functions only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from schemas.memory import IntentScores
from schemas.session import GoalAnchor, SessionState, TransitionMode
from state.normalise.turn import Turn
from state.task.anchoring import cosine
from state.task.config import TaskConfig, TaskResources, Vector
from state.task.cues import Cues
from state.task.memory import ArchiveReason
from state.task.table import Rule


@dataclass(frozen=True, slots=True)
class Decision:
    """What a turn does to the task: the transition, the stage after it and the goal anchor."""

    mode: TransitionMode
    stage: str
    action: str | None
    anchor: GoalAnchor | None
    new_task: ArchiveReason | None = None  # archive the open task for this reason and start anew
    set_goal: bool = False
    pending: GoalAnchor | None = None


def intent_of(turn: Turn, cues: Cues) -> tuple[str, float]:
    """The tagger's intent label and confidence when the turn carries them, else cues."""
    label = getattr(turn, "intent_label", None)
    scores = getattr(turn, "intent", None)
    if isinstance(label, str) and isinstance(scores, IntentScores):
        return label, float(getattr(scores, label, 0.0))
    confidence = getattr(turn, "confidence_score", None)
    if isinstance(label, str) and isinstance(confidence, float):
        return label, confidence
    return cues.speech_act(turn.text)


def _clarify(
    res: TaskResources, state: SessionState, lang: str, decision: Decision, sim: float | None, why: str
) -> Decision:
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
    return Decision("clarify", state.current_stage, decision.action, anchor, pending=anchor)


def _apply(
    rule: Rule | None, state: SessionState, action: str | None, anchor: GoalAnchor, res: TaskResources
) -> Decision:
    if rule is None:
        return Decision("none", state.current_stage, action, anchor)
    if rule.mode == "deepen":
        return Decision("deepen", rule.to, action, anchor, set_goal=True)
    if rule.mode == "stay":
        return Decision("stay", state.current_stage, action, anchor)
    target = res.table.actions[action].starts if action else res.table.fallback_stage
    return Decision("new_task", target, action, anchor, new_task="new_task", set_goal=True)


def _anchor(decision: str, sim: float | None, res: TaskResources, reason: str) -> GoalAnchor:
    return GoalAnchor(
        decision=decision,  # type: ignore[arg-type]
        similarity=sim,
        embedder=res.embedder_name if sim is not None else None,
        thresholds=(res.thresholds.continue_at, res.thresholds.clarify_at) if sim is not None else None,
        reason=reason,
    )


def decide_customer(
    state: SessionState,
    turn: Turn,
    action: str | None,
    refers_to_task: bool,
    vector: Callable[[], Vector],
    res: TaskResources,
    cfg: TaskConfig,
) -> Decision:
    """What a customer turn does to the task: start, stay, deepen, clarify, drift or a new task.

    `action` is the table's reading of the turn, `refers_to_task` whether it names the task's known
    entities or commitments; `vector()` embeds the turn only when a similarity is needed.
    """
    table, cues, text = res.table, res.cues, turn.text
    if state.task_id is None:
        stage = table.actions[action].starts if action else table.fallback_stage
        goal = not (action is None and cues.smalltalk.covers(text))
        return Decision("start", stage, action, _anchor("first", None, res, "first turn of the task"), set_goal=goal)
    rule = table.resolve(state.current_stage, action) if action else None
    if state.pending_clarification is not None:
        return _resolve_clarification(state, turn, action, rule, vector, res, cfg)
    if action is None and cues.smalltalk.covers(text):
        return Decision("none", state.current_stage, None, _anchor("neutral", None, res, "small talk keeps the task"))
    if state.goal_vector is None:
        d = _apply(rule, state, action, _anchor("first", None, res, "first goal of the task"), res)
        return replace(d, set_goal=True)
    label, confidence = intent_of(turn, cues)
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
            return Decision("none", state.current_stage, None, _anchor("continue", sim, res, "close to the goal"))
        if band == "clarify":
            return _clarify(
                res,
                state,
                turn.lang,
                Decision("none", table.fallback_stage, None, None),
                sim,
                "between the thresholds",
            )
        return Decision(
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
        return Decision(
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
        Decision("new_task", target, action, None),
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
) -> Decision:
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
        return Decision("new_task", stage, chosen, anchor, new_task="new_task", set_goal=True)
    anchor = _anchor("continue", sim_now, res, "clarified: stay with the current goal")
    if rule is not None and rule.mode in {"stay", "deepen"}:
        return _apply(rule, state, action, anchor, res)
    return Decision("none", state.current_stage, None, anchor)
