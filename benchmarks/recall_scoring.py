"""Scoring 200 candidates in one vectorised pass (docs/design.md#recall: a request scores a pool of ~200 cues).

    python -m benchmarks.recall_scoring [--candidates 200] [--repeats 300]

Prints p50/p95 of: `score_pool` on a prepared batch (the scoring itself; wall and thread CPU
time, since on a shared 2-core machine p95 wall time mostly measures preemption), `candidate_batch`
(payload dicts → arrays, tokens cached as in a warm service) and the two together.
"""

from __future__ import annotations

import argparse
import random
import time
from datetime import timedelta

import numpy as np

from schemas.memory import EmotionLoad, MemoryUnit, Validity, memory_id
from state.recall.config import load_tables
from state.recall.query import analyse_query
from state.recall.scoring import candidate_batch, score_pool, top_indices
from tests.recall_support import T0

WORDS = [
    "订单",
    "快递",
    "发货",
    "退款",
    "客服",
    "态度",
    "优惠",
    "活动",
    "仓库",
    "维修",
    "order",
    "parcel",
    "refund",
    "support",
    "discount",
    "warehouse",
    "repair",
    "again",
]


def _payloads(n: int, rng: random.Random) -> list[dict[str, object]]:
    out = []
    for i in range(n):
        u = MemoryUnit(
            memory_id=memory_id("t", f"s{i % 7}", f"e{i}", 0),
            unit_index=0,
            tenant_id="t",
            session_id=f"s{i % 7}",
            user_id="u",
            turn_id=f"e{i}",
            event_id=f"e{i}",
            ts=T0 - timedelta(hours=rng.uniform(0, 2000)),
            text=" ".join(rng.choices(WORDS, k=12)),
            source_text="x",
            speaker=rng.choice(["Ann", "Bob"]),
            unit_type=rng.choice(["complaint", "statement", "smalltalk"]),
            severity=rng.choice(["high", "medium", "low"]),
            resolution_status=rng.choice(["pending", "resolved", "none"]),
            resolved_at=T0 - timedelta(hours=10),
            emotion=EmotionLoad(stress=rng.random(), urgency=rng.random()),
            commitment_strength=rng.random(),
            validity=Validity(
                validity_type=rng.choice(["permanent", "periodic", "transient"]),
                effective_to=T0 + timedelta(days=rng.uniform(-5, 30)),
            ),
        )
        out.append(u.model_dump(mode="json"))
    return out


def _pct(xs: list[float]) -> str:
    a = np.array(xs) * 1000
    return f"p50 {np.percentile(a, 50):.2f} ms  p95 {np.percentile(a, 95):.2f} ms  (n={len(a)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--candidates", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=300)
    args = parser.parse_args()
    rng = random.Random(7)
    tables = load_tables()
    payloads = _payloads(args.candidates, rng)
    ids = [str(p["memory_id"]) for p in payloads]
    sims = [rng.uniform(0.6, 0.9) for _ in payloads]
    query = analyse_query("客服态度又这么差，上次的退款 refund 还没到", tables)
    batch = candidate_batch(ids, payloads, sims, tables.stopwords)  # warm the token cache
    build, score, both, cpu = [], [], [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        batch = candidate_batch(ids, payloads, sims, tables.stopwords)
        t1 = time.perf_counter()
        c1 = time.thread_time()
        s = score_pool(query, batch, tables, T0, known_people=("Ann",))
        top_indices(s, 3)
        c2 = time.thread_time()
        t2 = time.perf_counter()
        build.append(t1 - t0)
        score.append(t2 - t1)
        both.append(t2 - t0)
        cpu.append(c2 - c1)
    print(f"{args.candidates} candidates")
    print(f"  score_pool (one vectorised pass):  {_pct(score)}")
    print(f"  score_pool, thread CPU time:       {_pct(cpu)}  (immune to a busy machine's preemption)")
    print(f"  candidate_batch (payloads→arrays): {_pct(build)}")
    print(f"  both:                              {_pct(both)}")


if __name__ == "__main__":
    main()
