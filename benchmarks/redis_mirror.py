"""The Redis state mirror under 1,000 concurrent sessions: write latency p50/p99.

    python -m benchmarks.redis_mirror [--url redis://127.0.0.1:6379/15] [--sessions 1000] [--rounds 20] [--threads 8]

Each session holds a realistic `SessionState` (task, entities, a 384-dim goal vector; its
JSON size is printed). In every round each of the `--sessions` sessions changes state once (a new
turn), and the mirror is written two ways, through `RedisStateMirror.write` (the code the
flow's `StateMirrorSink` calls):

* per session: `--threads` writers, each session's update its own `write([state])`, as when
  every turn is mirrored on its own (latency per write);
* batched: one `write(states)` per flow batch of `--batch` sessions, a pipeline, as the sink
  does (latency per batch and per state).

Baseline in the same run: a bare `SET key value EX ttl` of the same bytes, and `PING` (the
round trip). Uses db 15 by default and deletes its keys at the end. Measures and prints;
asserts nothing. Needs a Redis (infra/services.sh up).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from functools import partial

import numpy as np
import redis

from schemas.errors import StateMirrorError
from schemas.session import CriticalEntity, SessionState
from sinks.redis.state_mirror import RedisStateMirror, state_key

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def make_state(i: int, turn: int, rng: np.random.Generator) -> SessionState:
    vec = rng.standard_normal(384)
    vec /= np.linalg.norm(vec)
    return SessionState(
        session_id=f"bench-{i}",
        tenant_id="bench",
        user_id=f"u{i}",
        task_id=f"TSK-{i}-1",
        current_stage="investigating",
        intent_chain=("complaint", "action_request"),
        critical_entities=(CriticalEntity(kind="order", value=f"ORD-{i:08d}", turn_id=f"t{turn}"),),
        goal_text="我的订单三天了还没发货，帮我查一下",
        goal_vector=tuple(round(float(x), 6) for x in vec),
        turn_count=turn,
        last_event_id=f"e{i}-{turn}",
        last_event_ts=T0 + timedelta(seconds=turn),
    )


def _pcts(ms: Sequence[float]) -> str:
    a = np.asarray(ms)
    return f"{np.percentile(a, 50):.2f} / {np.percentile(a, 99):.2f}"


def timed(calls: Sequence[Callable[[], object]], threads: int) -> tuple[list[float], float]:
    """Run the calls on `threads` threads; per-call ms and the total seconds."""

    def one(call: Callable[[], object]) -> float:
        started = time.perf_counter()
        call()
        return (time.perf_counter() - started) * 1000

    started = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        out = list(pool.map(one, calls))
    return out, time.perf_counter() - started


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="redis://127.0.0.1:6379/15")
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--batch", type=int, default=64, help="states per batched write")
    parser.add_argument("--ttl", type=int, default=900)
    args = parser.parse_args(argv)
    client = redis.Redis.from_url(args.url, socket_timeout=2.0)
    try:
        client.ping()
    except redis.RedisError as exc:
        print(f"no Redis at {args.url} ({exc}): run infra/services.sh up", file=sys.stderr)
        return 2
    mirror = RedisStateMirror(args.url, args.ttl)
    rng = np.random.default_rng(0)
    rounds = [[make_state(i, r, rng) for i in range(args.sessions)] for r in range(args.rounds)]
    size = len(rounds[0][0].model_dump_json())
    per_state: list[float] = []
    raw_set: list[float] = []
    batch_ms: list[float] = []
    ping: list[float] = []
    per_state_s = raw_s = batch_s = 0.0
    try:
        for states in rounds:
            ms, secs = timed([partial(mirror.write, [s]) for s in states], args.threads)
            per_state += ms
            per_state_s += secs
            payloads = [(state_key(s.session_id), s.model_dump_json()) for s in states]
            ms, secs = timed([partial(client.set, k, v, ex=args.ttl) for k, v in payloads], args.threads)
            raw_set += ms
            raw_s += secs
            started = time.perf_counter()
            for i in range(0, len(states), args.batch):
                t = time.perf_counter()
                mirror.write(states[i : i + args.batch])
                batch_ms.append((time.perf_counter() - t) * 1000)
            batch_s += time.perf_counter() - started
            for _ in range(20):
                t = time.perf_counter()
                client.ping()
                ping.append((time.perf_counter() - t) * 1000)
        mirrored = sum(1 for i in range(args.sessions) if mirror.read(f"bench-{i}") is not None)
    except StateMirrorError as exc:
        print(f"mirror write failed: {exc}", file=sys.stderr)
        return 1
    finally:
        keys = [state_key(f"bench-{i}") for i in range(args.sessions)]
        for i in range(0, len(keys), 500):
            client.delete(*keys[i : i + 500])
    writes = args.sessions * args.rounds
    print(
        f"{args.sessions} sessions x {args.rounds} updates, SessionState JSON {size:,} bytes, TTL {args.ttl} s, "
        f"{args.url}; {mirrored}/{args.sessions} sessions read back"
    )
    print()
    print("| write | p50 / p99 ms | states/s | vs bare SET p50 |")
    print("|---|---:|---:|---:|")
    print(
        f"| mirror, one session per write, {args.threads} threads | {_pcts(per_state)} | {writes / per_state_s:,.0f} | "
        f"{np.median(per_state) / np.median(raw_set):.2f} x |"
    )
    print(
        f"| bare SET of the same bytes, {args.threads} threads (baseline) "
        f"| {_pcts(raw_set)} | {writes / raw_s:,.0f} | 1.00 x |"
    )
    print(
        f"| mirror, batched pipeline of {args.batch} (the sink's way), per batch | {_pcts(batch_ms)} | "
        f"{writes / batch_s:,.0f} | — |"
    )
    print(f"| same, per state (batch / {args.batch}) | {_pcts([b / args.batch for b in batch_ms])} | | |")
    print(f"| PING round trip | {_pcts(ping)} | | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
