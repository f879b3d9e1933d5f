"""Decisions of the task state machine and goal anchoring, for the windowed metrics.

From each turn leaving the task state machine (`Turn.task`, stateless):
* `state_machine_miss_rate` — a customer turn that left without a task (no annotation or no
  task id): 1, else 0;
* `goal_drift_rate` / `clarification_rate` — a customer turn anchored against a goal: 1 when
  the anchoring decided `drift` / `clarify`, else 0 (turns without an anchoring decision are
  not counted).

From the session states (`SessionState`, per session, keyed; `chain_stability`):
* `intent_chain_stability` — every span of 3 consecutive turns of one task: 1 when the intent
  chain kept its length over the span, else 0. The same definitions as the API's computed
  decision-health panel, so both panels agree.
State: the last two (task id, chain length) of a session; discarded when the session ends.
"""

from __future__ import annotations

from dataclasses import dataclass

from schemas.session import SessionState
from state.metrics.windows import Decision
from state.normalise.turn import Turn


def turn_decisions(turn: Turn) -> list[Decision]:
    """The task decisions of one turn after the task state machine.

    >>> from datetime import UTC, datetime
    >>> from schemas.events import ConversationEvent
    >>> from schemas.session import GoalAnchor, TaskAnnotation
    >>> from state.normalise.turn import Turn
    >>> ev = ConversationEvent(event_id="e", session_id="s", ts=datetime(2026, 1, 1, tzinfo=UTC), text="hi")
    >>> task = TaskAnnotation(task_id="T", stage="s", anchor=GoalAnchor(decision="drift"))
    >>> t = Turn(ev, None, "hi", (), (), task=task)
    >>> [(d.name, d.value) for d in turn_decisions(t)]
    [('state_machine_miss_rate', 0.0), ('goal_drift_rate', 1.0), ('clarification_rate', 0.0)]
    """
    event = turn.event
    if event.speaker_role != "customer":
        return []
    task = turn.task
    out = [Decision(event.ts, "state_machine_miss_rate", 0.0 if task is not None and task.task_id else 1.0)]
    if task is not None and task.anchor is not None:
        out.append(Decision(event.ts, "goal_drift_rate", float(task.anchor.decision == "drift")))
        out.append(Decision(event.ts, "clarification_rate", float(task.anchor.decision == "clarify")))
    return out


@dataclass(frozen=True, slots=True)
class ChainHistory:
    """The last turn states of a session: (last event id, task id, intent-chain length), oldest first."""

    last: tuple[tuple[str, str | None, int], ...] = ()


def chain_stability(history: ChainHistory | None, state: SessionState) -> tuple[ChainHistory | None, list[Decision]]:
    """Fold one session state; a new turn completing a 3-turn span of one task gives a decision.

    States re-emitted for the same event (archiving, timers) are skipped. Returns None as the
    history once the session has ended or has no open task (discard).

    >>> from datetime import UTC, datetime
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> h, out = None, []
    >>> for i, chain in enumerate([("a",), ("a",), ("a", "b"), ("a", "b")]):
    ...     s = SessionState(session_id="s", task_id="T", intent_chain=chain, last_event_id=f"e{i}", last_event_ts=t)
    ...     h, got = chain_stability(h, s)
    ...     out += [d.value for d in got]
    >>> out
    [0.0, 0.0]
    """
    if state.task_id is None:
        # No open task (none yet, or it was just archived): a span needs three turns of one task,
        # so nothing kept can count any more, and a session that goes quiet leaves no key behind.
        return None, []
    history = history or ChainHistory()
    if state.last_event_id is None or state.last_event_ts is None:
        return (None if state.ended_at else history), []
    if history.last and history.last[-1][0] == state.last_event_id:
        return (None if state.ended_at else history), []
    entry = (state.last_event_id, state.task_id, len(state.intent_chain))
    span = (*history.last, entry)[-3:]
    out: list[Decision] = []
    if len(span) == 3 and state.task_id is not None and all(e[1] == state.task_id for e in span):
        out.append(Decision(state.last_event_ts, "intent_chain_stability", float(len({e[2] for e in span}) == 1)))
    if state.ended_at is not None:
        return None, out
    return ChainHistory(span[-2:]), out
