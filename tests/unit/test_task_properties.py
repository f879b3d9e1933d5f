"""Properties of the task state machine over arbitrary event sequences (Hypothesis).

* no illegal transition: every stage change is one the table allows (or a task start, a drift
  to the fallback/action stage, a timeout/session-end archive to idle);
* state invariants hold after every item;
* snapshot → pickle → resume in the middle gives exactly the outputs of an uninterrupted run.
"""

from __future__ import annotations

import pickle
import re
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from operators.task_fsm import TaskLogic, TaskOperatorConfig
from schemas.events import ConversationEvent, SessionEnd
from schemas.session import ArchivedTask, SessionState
from state.normalise.turn import NormaliseConfig, Turn, normalise_turn
from state.task.data import TaskData
from state.task.fsm import Output, TaskConfig, step
from tests.fixtures.task_support import T0, task_data

TEXTS = [
    "帮我查一下订单DD20261130001的物流到哪了",
    "顺便帮我取消这个订单",
    "我要退货",
    "退款多久到账",
    "我要投诉你们客服",
    "能给我补偿吗",
    "上次说要给我补偿，现在能到账了吗？",
    "帮我查上个月账单",
    "顺便看看积分能换什么",
    "切换到积分吧",
    "继续说账单吧",
    "好的谢谢",
    "你们周末上班吗",
    "那个蓝色的盒子还没到",
    "我的手机号13812345678",
    "我们承诺给您补偿20元优惠券",
    "您的快递单号SF1234567890",
    "Where is my package? Order 88123",
    "cancel it please",
    "嗯",
    "",
    "？？？",
    "运单号YT1234567890123已签收",
]
ROLES = ["customer", "customer", "customer", "agent", "third_party"]
GAPS = [0.0, 0.5, 1.0, 5.0, 14.9, 15.0, 16.0, 40.0, -2.0]
TASK_ID = re.compile(r"^TSK-\d{4}-\d{2}-[0-9a-f]{6}$")
CFG = TaskConfig()

item_spec = st.one_of(
    st.tuples(st.just("turn"), st.sampled_from(TEXTS), st.sampled_from(ROLES), st.sampled_from(GAPS)),
    st.tuples(st.just("end"), st.just(""), st.just("customer"), st.sampled_from(GAPS)),
)
PRESETS = [
    {},
    {"continue_at": 0.999, "clarify_at": -1.0},
    {"continue_at": 0.3, "clarify_at": 0.2},
    {"continue_at": 0.99, "clarify_at": 0.98},
]
DATA: list[TaskData] = [task_data(**p) for p in PRESETS]


def build(specs: list[tuple[str, str, str, float]]) -> list[Turn | SessionEnd]:
    items: list[Turn | SessionEnd] = []
    minutes = 0.0
    for i, (kind, text, role, gap) in enumerate(specs):
        minutes += gap
        ts = T0 + timedelta(minutes=minutes)
        if kind == "end":
            items.append(SessionEnd(event_id=f"x{i}", session_id="s", ts=ts))
        else:
            ev = ConversationEvent(
                event_id=f"e{i}", session_id="s", turn_id=f"t{i}", ts=ts, speaker_role=role, text=text
            )  # type: ignore[arg-type]
            items.append(normalise_turn(ev, NormaliseConfig()))
    return items


def check_state(s: SessionState) -> None:
    assert (s.task_id is None) == (s.current_stage == "idle")
    if s.task_id is not None:
        assert TASK_ID.match(s.task_id)
        assert s.last_event_ts is not None
        assert s.timeout_at == s.last_event_ts + CFG.timeout
    else:
        assert s.intent_chain == ()
        assert s.critical_entities == ()
        assert s.commitments == ()
    assert len(s.critical_entities) <= CFG.max_entities
    assert len(s.previous_tasks) <= CFG.keep_previous_tasks
    assert all(a != b for a, b in zip(s.intent_chain, s.intent_chain[1:], strict=False))
    assert pickle.loads(pickle.dumps(s)) == s


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=st.lists(item_spec, min_size=1, max_size=12), preset=st.integers(0, len(PRESETS) - 1))
def test_no_illegal_transition_for_any_sequence(specs: list[tuple[str, str, str, float]], preset: int) -> None:
    data = DATA[preset]
    state: SessionState | None = None
    for item in build(specs):
        res = data.resources()
        before = state
        state, out = step(state, item, res, CFG)
        assert state is not None
        check_state(state)
        archived = [o for o in out if isinstance(o, ArchivedTask)]
        for rec in archived:
            assert rec.final_state.task_id == rec.task_id
            assert rec.task_id
            assert rec.reason in {"timeout", "session_end", "drift", "new_task"}
        if isinstance(item, SessionEnd):
            assert state.ended_at is not None
            assert state.ended_at >= item.ts
            continue
        (turn,) = [o for o in out if isinstance(o, Turn)]
        ann = turn.task
        assert ann is not None
        assert turn.task_id == state.task_id == ann.task_id
        assert ann.stage == state.current_stage
        pre_stage = (
            "idle"
            if before is None or any(r.reason in {"timeout", "session_end"} for r in archived)
            else before.current_stage
        )
        if ann.transition == "start":
            assert pre_stage == "idle" or before is None or before.task_id is None or archived
        else:
            assert pre_stage != "idle"
        if ann.transition == "start" and item.event.speaker_role != "customer":
            assert ann.stage == res.table.fallback_stage
        else:
            assert res.table.is_legal(pre_stage, ann.stage, ann.transition, ann.action), (pre_stage, ann)
        if (
            ann.transition in {"new_task", "drift"}
            and before is not None
            and before.task_id is not None
            and pre_stage != "idle"
        ):
            assert [r.reason for r in archived][-1] in {"drift", "new_task"}


class FakeClock:
    def __init__(self) -> None:
        self.now = datetime(2030, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def run_logic(items: list[Turn | SessionEnd], split: int | None) -> list[Output]:
    data, cfg, clock = DATA[0], TaskOperatorConfig(), FakeClock()
    logic = TaskLogic(None, data, cfg, clock)
    out: list[Output] = []
    for i, item in enumerate(items):
        if split is not None and i == split:
            logic = TaskLogic(pickle.loads(pickle.dumps(logic.snapshot())), data, cfg, clock)
        emitted, discard = logic.on_item(item)
        out.extend(emitted)
        assert discard is False
    emitted, discard = logic.on_eof()
    assert discard is True
    out.extend(emitted)
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=st.lists(item_spec, min_size=2, max_size=10), cut=st.integers(1, 9))
def test_snapshot_pickle_resume_gives_the_same_outputs(specs: list[tuple[str, str, str, float]], cut: int) -> None:
    items = build(specs)
    split = min(cut, len(items) - 1)
    assert run_logic(items, split) == run_logic(items, None)
