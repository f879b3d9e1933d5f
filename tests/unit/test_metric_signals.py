"""The documented decision points are emitted, one slow turn alerts, and charts show zeros."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import matplotlib.pyplot as plt
import pytest

from schemas.events import ConversationEvent
from schemas.metrics import WindowMetrics
from schemas.session import GoalAnchor, SessionState, TaskAnnotation
from sinks.metrics.chart import PANELS, _draw_panel
from state.metrics.task_decisions import chain_stability, turn_decisions
from state.metrics.windows import PACKAGED_CATALOG, Decision, WindowAcc, finalize, fold_decision, load_catalog
from state.normalise.turn import Turn

T0 = datetime(2026, 1, 1, 8, tzinfo=UTC)
CATALOG = load_catalog(PACKAGED_CATALOG)


def _turn(role: str, task: TaskAnnotation | None) -> Turn:
    ev = ConversationEvent(event_id="e", session_id="s", ts=T0, text="hi", speaker_role=role)  # type: ignore[arg-type]
    return Turn(ev, None, "hi", (), (), task=task)  # type: ignore[arg-type]


def test_customer_turns_give_miss_drift_and_clarification_decisions() -> None:
    clarify = TaskAnnotation(task_id="T", stage="s", anchor=GoalAnchor(decision="clarify"))
    assert {d.name: d.value for d in turn_decisions(_turn("customer", clarify))} == {
        "state_machine_miss_rate": 0.0,
        "goal_drift_rate": 0.0,
        "clarification_rate": 1.0,
    }
    assert [(d.name, d.value) for d in turn_decisions(_turn("customer", None))] == [("state_machine_miss_rate", 1.0)]
    assert turn_decisions(_turn("agent", clarify)) == []


def test_intent_chain_stability_over_three_turn_spans_skips_re_emitted_states() -> None:
    chains = [("a",), ("a",), ("a",), ("a", "b"), ("a", "b"), ("a", "b")]
    history, values = None, []
    for i, chain in enumerate(chains):
        state = SessionState(
            session_id="s", task_id="T", intent_chain=chain, last_event_id=f"e{i}", last_event_ts=T0 + timedelta(i)
        )
        for _ in range(2):  # a timer re-emits the same state
            history, out = chain_stability(history, state)
            values += [d.value for d in out]
    assert values == [1.0, 0.0, 0.0, 1.0]
    ended = SessionState(session_id="s", task_id="T", last_event_id="e9", last_event_ts=T0, ended_at=T0)
    assert chain_stability(history, ended)[0] is None  # discarded at session end


def test_one_slow_turn_is_enough_for_the_latency_alert() -> None:
    acc = fold_decision(WindowAcc(), Decision(T0, "latency_ms.total", 6200.0))
    alerts = finalize(acc, 0, timedelta(minutes=1), CATALOG).alerts
    assert alerts == ("latency_ms.total=6200 > 50 (n=1)",)


@pytest.mark.parametrize("values", [[0, 0, 0], [3, 5, 4], [0.9, 1.0, 0.95]])
def test_every_panel_axis_includes_zero(values: list[float]) -> None:
    panel = next(p for p in PANELS if p.title == "intent_chain_stability")
    windows = [
        WindowMetrics(window_start=T0, window_end=T0, counters={}, gauges={"intent_chain_stability": v}) for v in values
    ]
    fig, ax = plt.subplots()
    _draw_panel(ax, panel, windows, list(range(len(values))), CATALOG)
    low, high = ax.get_ylim()
    plt.close(fig)
    assert low < 0 < high
    assert high >= max(values)


def test_a_quiet_sessions_chain_history_is_dropped_after_its_idle_time() -> None:
    from bytewax.operators import StatefulLogic

    from operators.metrics import _ChainLogic

    now = [T0]
    logic = _ChainLogic(None, timedelta(seconds=5), lambda: now[0])
    state = SessionState(session_id="s", task_id="T", intent_chain=("a",), last_event_id="e1", last_event_ts=T0)
    _, keep = logic.on_item(state)
    assert keep == StatefulLogic.RETAIN
    assert logic.notify_at() == T0 + timedelta(seconds=5)  # a session that just goes quiet sends no end
    assert logic.on_notify() == ((), StatefulLogic.DISCARD)
    ended = state.model_copy(update={"last_event_id": "e2", "ended_at": T0})
    assert _ChainLogic(None, timedelta(seconds=5), lambda: now[0]).on_item(ended)[1] == StatefulLogic.DISCARD


def test_a_state_without_an_open_task_drops_the_chain_history() -> None:
    state = SessionState(session_id="s", task_id="T", intent_chain=("a",), last_event_id="e1", last_event_ts=T0)
    history, _ = chain_stability(None, state)
    assert history is not None
    archived = state.model_copy(update={"task_id": None, "intent_chain": ()})  # the task machine archived it
    assert chain_stability(history, archived) == (None, [])
