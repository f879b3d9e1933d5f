"""The pure transition function of the task state machine (docs/design.md#task-state-machine)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

import pytest

from schemas.events import ConversationEvent, SessionEnd
from schemas.memory import IntentScores
from schemas.session import ArchivedTask, SessionState
from state.normalise.turn import NormaliseConfig, Turn, normalise_turn
from state.task.fsm import Output, TaskConfig, TaskResources, expire, step
from tests.fixtures.task_support import T0, end_event, resources, turn_event

CFG = TaskConfig()
TASK_ID = re.compile(r"^TSK-\d{4}-\d{2}-[0-9a-f]{6}$")


@pytest.fixture(scope="module")
def res() -> TaskResources:
    return resources()


@pytest.fixture(scope="module")
def res_clarify() -> TaskResources:
    """Thresholds that put every similarity in the clarify band."""
    return resources(continue_at=0.999, clarify_at=-1.0)


def fold(
    res: TaskResources, items: list[ConversationEvent | SessionEnd | Turn], state: SessionState | None = None
) -> tuple[SessionState | None, list[Output]]:
    out: list[Output] = []
    for item in items:
        if isinstance(item, ConversationEvent):
            item = normalise_turn(item, NormaliseConfig())
        state, o = step(state, item, res, CFG)
        out.extend(o)
    return state, out


def turns(out: list[Output]) -> list[Turn]:
    return [o for o in out if isinstance(o, Turn)]


def archived(out: list[Output]) -> list[ArchivedTask]:
    return [o for o in out if isinstance(o, ArchivedTask)]


def test_first_customer_turn_starts_a_task_with_a_deterministic_id(res: TaskResources) -> None:
    state, out = fold(res, [turn_event(1, "我要退货")])
    assert state is not None
    assert state.task_id is not None
    assert TASK_ID.match(state.task_id)
    assert state.task_id.startswith("TSK-2026-11-")
    assert (state.current_stage, state.intent_chain, state.task_seq) == ("refund", ("request_refund",), 1)
    assert state.timeout_at == T0 + timedelta(minutes=15)
    (t,) = turns(out)
    assert t.task_id == state.task_id
    assert t.task is not None
    assert t.task.transition == "start"
    assert fold(res, [turn_event(1, "我要退货")])[0] == state


def test_clarification_answer_can_switch(res_clarify: TaskResources) -> None:
    res = res_clarify
    state, out = fold(res, [turn_event(1, "帮我查上个月账单"), turn_event(2, "顺便看看积分能换什么", minutes=1)])
    assert state is not None
    assert state.pending_clarification is not None
    assert state.pending_clarification.clarification_question == "您是想继续账户账单，还是切换到优惠活动？"
    first = state.task_id
    state, out = fold(res, [turn_event(3, "切换到积分吧", minutes=2)], state)
    assert state is not None
    assert state.task_id != first
    assert state.current_stage == "promotion"
    assert state.pending_clarification is None
    assert state.anchor is not None
    assert state.anchor.decision == "drift"
    assert [(a.task_id, a.reason) for a in archived(out)] == [(first, "new_task")]


def test_clarification_answer_can_stay(res_clarify: TaskResources) -> None:
    res = res_clarify
    state, _ = fold(res, [turn_event(1, "帮我查上个月账单"), turn_event(2, "顺便看看积分能换什么", minutes=1)])
    assert state is not None
    first = state.task_id
    state, out = fold(res, [turn_event(3, "继续说账单吧", minutes=2)], state)
    assert state is not None
    assert state.task_id == first
    assert state.current_stage == "account"
    assert state.anchor is not None
    assert state.anchor.decision == "continue"
    assert archived(out) == []


def test_unrelated_question_without_action_drifts(res: TaskResources) -> None:
    state, out = fold(
        res, [turn_event(1, "帮我查一下订单DD20261130001的物流"), turn_event(2, "你们周末上班吗", minutes=1)]
    )
    assert state is not None
    assert state.current_stage == "general"
    assert state.critical_entities == ()  # context reset
    assert [a.reason for a in archived(out)] == ["drift"]
    assert state.previous_tasks[0].critical_entities[0].value == "DD20261130001"


def test_small_talk_keeps_the_task(res: TaskResources) -> None:
    state, out = fold(res, [turn_event(1, "我要投诉快递员"), turn_event(2, "好的谢谢", minutes=1)])
    assert state is not None
    assert state.current_stage == "complaint"
    assert archived(out) == []
    assert state.anchor is not None
    assert state.anchor.decision == "neutral"


def test_agent_first_session_starts_in_the_fallback_stage(res: TaskResources) -> None:
    state, out = fold(
        res,
        [
            turn_event(1, "您好，您的订单DD20261130001已发货，运单号SF1234567890", role="agent"),
            turn_event(2, "那个快递什么时候到", minutes=1),
        ],
    )
    assert state is not None
    assert state.current_stage == "logistics"
    assert len({t.task_id for t in turns(out)}) == 1
    assert {e.value for e in state.critical_entities} >= {"DD20261130001", "SF1234567890"}


def test_commitment_in_an_archived_task_is_found_and_carried(res: TaskResources) -> None:
    state, out = fold(
        res,
        [
            turn_event(1, "订单DD20261130001一直没发货，我要投诉"),
            turn_event(2, "非常抱歉，我们承诺给您补偿20元优惠券", role="agent", minutes=1),
            turn_event(3, "上次说要给我补偿，现在能到账了吗？", minutes=40),
        ],
    )
    assert state is not None
    old = archived(out)[0]
    assert old.reason == "timeout"
    last = turns(out)[-1].task
    assert last is not None
    assert last.related_task_id == old.task_id
    assert [c.topic for c in last.commitment_refs] == ["compensation"]
    assert state.related_task_id == old.task_id
    assert state.commitments == old.final_state.commitments
    assert "DD20261130001" in {e.value for e in state.critical_entities}


def test_session_end_waits_for_late_turns_then_archives(res: TaskResources) -> None:
    state, out = fold(res, [turn_event(1, "我要退货"), end_event(1, minutes=5)])
    assert state is not None
    assert state.ended_at is not None
    assert archived(out) == []
    # a turn stamped before the end still joins the task
    state, out = fold(res, [turn_event(2, "退货地址是哪里", minutes=4)], state)
    assert state is not None
    assert state.task_id is not None
    assert archived(out) == []
    state, out = expire(state, None, CFG)
    assert state is not None
    assert [(a.reason, a.archived_at) for a in archived(out)] == [("session_end", T0 + timedelta(minutes=5))]
    assert archived(out)[0].final_state.turn_count == 2


def test_turn_after_the_end_restarts_the_session(res: TaskResources) -> None:
    state, out = fold(res, [turn_event(1, "我要退货"), end_event(1, minutes=5), turn_event(2, "我要投诉", minutes=7)])
    assert state is not None
    assert [a.reason for a in archived(out)] == ["session_end"]
    assert state.ended_at is None
    assert state.current_stage == "complaint"
    assert state.task_seq == 2


def test_expire_before_the_deadline_does_nothing(res: TaskResources) -> None:
    state, _ = fold(res, [turn_event(1, "我要退货")])
    assert expire(state, T0 + timedelta(minutes=14), CFG) == (state, [])
    cleared, out = expire(state, T0 + timedelta(minutes=15), CFG)
    assert cleared is not None
    assert cleared.task_id is None
    assert cleared.intent_chain == ()
    assert [a.archived_at for a in archived(out)] == [T0 + timedelta(minutes=15)]


@dataclass(frozen=True, slots=True)
class TaggedTurn(Turn):
    """A turn as the tagger leaves it: `intent_label` and `intent` (IntentScores)."""

    intent_label: str | None = None
    intent: IntentScores | None = None


def _tagged(i: int, text: str, label: str, p: float, minutes: float) -> TaggedTurn:
    base = normalise_turn(turn_event(i, text, minutes=minutes), NormaliseConfig())
    scores = IntentScores(**{label: p, "neutral": 1.0 - p if label != "neutral" else p})
    return TaggedTurn(base.event, base.lang, base.text, base.sentences, base.times, intent_label=label, intent=scores)


def test_shortcut_uses_the_taggers_confidence_when_present(res: TaskResources) -> None:
    start, _ = fold(res, [turn_event(1, "帮我查一下订单DD20261130001的物流")])
    sure, _ = step(start, _tagged(2, "顺便帮我取消吧", "request", 0.95, 1), res, CFG)
    unsure, _ = step(start, _tagged(2, "顺便帮我取消吧", "request", 0.40, 1), res, CFG)
    assert sure is not None
    assert sure.anchor is not None
    assert sure.anchor.decision == "shortcut"
    assert unsure is not None
    assert unsure.anchor is not None
    assert unsure.anchor.decision != "shortcut"
    assert unsure.anchor.similarity is not None  # the check ran


def test_english_turns_get_an_english_clarification_question(res_clarify: TaskResources) -> None:
    state, _ = fold(
        res_clarify,
        [
            turn_event(1, "Please check last month's bill"),
            turn_event(2, "What can I redeem with my points?", minutes=1),
        ],
    )
    assert state is not None
    assert state.pending_clarification is not None
    assert state.pending_clarification.clarification_question == (
        "Would you like to continue with your account and bill, or switch to promotions and points?"
    )


def test_goal_vector_is_set_from_the_goal_turn(res: TaskResources) -> None:
    state, _ = fold(res, [turn_event(1, "帮我查物流"), turn_event(2, "顺便帮我取消这个订单", minutes=1)])
    assert state is not None
    assert state.goal_text == "顺便帮我取消这个订单"
    assert state.goal_vector is not None
    assert len(state.goal_vector) == 256
