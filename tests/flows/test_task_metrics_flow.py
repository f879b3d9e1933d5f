"""The task state machine's decision points reach the flow's metric windows: state-machine
misses, intent-chain stability, goal drift and clarification rates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.flows.whole_flow import records, run_whole, window_totals

T0 = datetime(2026, 1, 1, 10, tzinfo=UTC)
DIALOGUE = [
    ("customer", "我的订单 DD20260101001 还没发货，帮我查一下物流"),
    ("agent", "好的，我帮您查一下订单 DD20260101001 的物流"),
    ("customer", "什么时候能发货？"),
    ("agent", "预计明天发货"),
    ("customer", "能不能加急处理？"),
    ("customer", "对了，你们那个会员积分怎么兑换电影票？"),
    ("customer", "今天天气真好"),
]


def test_the_four_task_decision_points_are_in_the_windows(tmp_path: Path) -> None:
    lines = [
        {
            "event_id": f"m{i}",
            "session_id": "m1",
            "ts": (T0 + timedelta(seconds=20 * i)).isoformat(),
            "speaker_role": role,
            "text": text,
        }
        for i, (role, text) in enumerate(DIALOGUE)
    ]
    out = run_whole(records(lines), tmp_path)
    gauges: dict[str, float] = {}
    for m in out.metrics:
        gauges.update({k: v for k, v in m.gauges.items() if not k.startswith(("latency", "entropy"))})
    for name in ("state_machine_miss_rate", "intent_chain_stability", "goal_drift_rate", "clarification_rate"):
        assert name in gauges, (name, gauges)
        assert 0.0 <= gauges[name] <= 1.0
    customer_turns = sum(role == "customer" for role, _ in DIALOGUE)
    totals = window_totals(out.metrics, {"state_machine_miss_rate.n", "intent_chain_stability.n"})
    assert totals["state_machine_miss_rate.n"] == customer_turns  # one decision per customer turn
    assert 1 <= totals["intent_chain_stability.n"] <= len(DIALOGUE) - 2  # 3-turn spans of one task
