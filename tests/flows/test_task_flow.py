"""The task state machine in the real flow: the scenarios of docs/design.md#task-state-machine end to end."""

from __future__ import annotations

from tests.fixtures.task_support import dump, end_event, run_flow, turn_event


def test_logistics_then_cancel_deepens_and_carries_the_order_id() -> None:
    run = run_flow(
        [
            turn_event(1, "帮我查一下订单DD20261130001的物流到哪了"),
            turn_event(2, "您的包裹已到上海转运中心，预计明天送达", role="agent", minutes=1),
            turn_event(3, "顺便帮我取消这个订单", minutes=2),
        ]
    )
    first, cancel = run.unit("s1-e1"), run.unit("s1-e3")
    assert first.task_id is not None
    assert first.task_id.startswith("TSK-2026-11-")
    assert cancel.task_id == first.task_id  # same task: deepened, not restarted
    after_cancel = next(s for s in run.states if s.last_event_id == "s1-e3")
    assert after_cancel.current_stage == "cancellation"
    assert after_cancel.intent_chain == ("track_logistics", "cancel_order")
    assert after_cancel.anchor is not None
    assert after_cancel.anchor.decision == "shortcut"
    weak = [e for e in after_cancel.critical_entities if e.mention == "这个订单"]
    assert [(e.kind, e.value, e.bound) for e in weak] == [("order_id", "DD20261130001", True)]


def test_bill_then_points_is_flagged_not_silently_continued() -> None:
    run = run_flow([turn_event(1, "帮我查上个月账单"), turn_event(2, "顺便看看积分能换什么", minutes=1)])
    second = next(s for s in run.states if s.last_event_id == "s1-e2")
    assert second.anchor is not None
    assert second.anchor.decision in {"clarify", "drift"}
    if second.anchor.decision == "clarify":
        assert second.pending_clarification is not None
        assert second.anchor.clarification_question == "您是想继续账户账单，还是切换到优惠活动？"
        assert run.unit("s1-e2").task_id == run.unit("s1-e1").task_id
    else:
        assert run.unit("s1-e2").task_id != run.unit("s1-e1").task_id


def test_compensation_back_reference_finds_the_commitment() -> None:
    run = run_flow(
        [
            turn_event(1, "我的订单DD20261130001一直没发货，我要投诉"),
            turn_event(2, "非常抱歉，我们承诺给您补偿20元优惠券，3个工作日内到账", role="agent", minutes=1),
            turn_event(3, "好的谢谢", minutes=2),
            turn_event(4, "上次说要给我补偿，现在能到账了吗？", minutes=6),
        ]
    )
    state = next(s for s in run.states if s.last_event_id == "s1-e4")
    assert state.task_id == run.unit("s1-e1").task_id
    assert state.current_stage == "compensation"
    assert [(c.topic, c.amount, c.event_id) for c in state.commitments] == [("compensation", "20元", "s1-e2")]
    assert state.anchor is not None
    assert state.anchor.decision == "reference"


def test_fifteen_idle_minutes_archive_the_task() -> None:
    run = run_flow(
        [turn_event(1, "帮我查一下订单DD20261130001的物流"), turn_event(2, "我想改一下登录密码", minutes=16)]
    )
    timeout = [a for a in run.archived if a.reason == "timeout"]
    assert timeout[0].task_id == run.unit("s1-e1").task_id
    assert timeout[0].archived_at.isoformat() == "2026-11-30T09:15:00+00:00"
    assert timeout[0].final_state.intent_chain == ("track_logistics",)
    assert run.unit("s1-e2").task_id != run.unit("s1-e1").task_id
    fresh = next(s for s in run.states if s.last_event_id == "s1-e2")
    assert fresh.intent_chain == ("query_account",)  # the chain was cleared
    assert fresh.previous_tasks[0].task_id == run.unit("s1-e1").task_id


def test_end_of_replay_archives_open_tasks_at_their_own_timeout() -> None:
    run = run_flow([turn_event(1, "帮我查一下订单DD20261130001的物流"), turn_event(2, "好的", minutes=3)])
    assert [(a.reason, a.archived_at.isoformat()) for a in run.archived] == [("timeout", "2026-11-30T09:18:00+00:00")]
    assert run.states[-1].task_id is None
    assert run.states[-1].intent_chain == ()


def test_session_end_archives_with_reason_session_end() -> None:
    run = run_flow([turn_event(1, "我要投诉快递员态度太差"), end_event(1, minutes=2)])
    assert [(a.reason, a.archived_at.isoformat()) for a in run.archived] == [
        ("session_end", "2026-11-30T09:02:00+00:00")
    ]


def test_replay_gives_identical_task_ids_states_and_units() -> None:
    events = [
        turn_event(1, "帮我查一下订单DD20261130001的物流到哪了"),
        turn_event(2, "顺便帮我取消这个订单", minutes=1),
        turn_event(3, "帮我查上个月账单", minutes=20),
        turn_event(4, "顺便看看积分能换什么", minutes=21),
        turn_event(1, "我的快递丢了，运单号SF1234567890", session="s2"),
        turn_event(2, "我们会尽快为您补发", role="agent", minutes=2, session="s2"),
    ]
    first, second = run_flow(events), run_flow(events)
    assert dump(first) == dump(second)
    assert {u.task_id for u in first.units} == {u.task_id for u in second.units}
    assert len({u.task_id for u in first.units if u.session_id == "s1"}) >= 2


def test_units_carry_task_id_and_validity() -> None:
    run = run_flow(
        [
            turn_event(1, "东莞仓目前停电，发货会延迟吗"),
            turn_event(2, "双十一期间满300减50，每周一还有会员日", role="agent", minutes=1),
        ]
    )
    outage, promo = run.unit("s1-e1"), run.unit("s1-e2")
    assert outage.task_id
    assert outage.validity.validity_type == "transient"
    assert outage.validity.effective_to is not None
    assert outage.validity.effective_to > outage.ts
    assert promo.validity.validity_type == "periodic"
    assert promo.validity.cycle_pattern == "during_promotion:double11"
    assert all(p.unit.task_id for p in run.points)


def test_two_sessions_are_independent() -> None:
    run = run_flow([turn_event(1, "帮我查物流", session="a"), turn_event(1, "我要退货", session="b")])
    assert run.unit("a-e1").task_id != run.unit("b-e1").task_id
    assert {s.session_id: s.current_stage for s in run.states if s.task_id} == {"a": "logistics", "b": "refund"}


def test_two_workers_give_the_same_tasks_as_one() -> None:
    from bytewax.testing import TestingSink, TestingSource, cluster_main

    from flows.build import build_flow
    from flows.io import OutputSpec, SourceInput
    from flows.settings import Settings
    from tests.fixtures.task_support import HashingEmbedder, raw

    events = [
        turn_event(1, "帮我查一下订单DD20261130001的物流", session="a"),
        turn_event(1, "我要退货", session="b"),
        turn_event(2, "顺便帮我取消这个订单", minutes=1, session="a"),
        turn_event(2, "退货地址是哪里", minutes=20, session="b"),
        turn_event(1, "帮我查上个月账单", session="c"),
    ]
    one = run_flow(events)
    states: list = []
    archived: list = []
    units: list = []
    spec = OutputSpec(
        deadletters=[],
        memory_points=[],
        memory_units=[TestingSink(units)],
        states=[TestingSink(states)],
        archived=[TestingSink(archived)],
    )
    flow = build_flow(
        Settings(), SourceInput(TestingSource([raw(e) for e in events])), spec, embedder=HashingEmbedder()
    )
    cluster_main(flow, [], 0, worker_count_per_proc=2)

    def by_session(items: list) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for s in items:
            out.setdefault(s.session_id, []).append(s.model_dump_json())
        return out

    assert by_session(states) == by_session(one.states)
    assert sorted(a.model_dump_json() for a in archived) == sorted(a.model_dump_json() for a in one.archived)
    assert sorted(u.model_dump_json() for u in units) == sorted(u.model_dump_json() for u in one.units)
