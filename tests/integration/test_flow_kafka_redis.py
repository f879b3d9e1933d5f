"""The write path against the real broker and Redis: produce → flow from Kafka → store + Redis + topics."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from bytewax.testing import run_main

from flows.build import build_flow
from flows.runtime import close_stores, kafka_input, open_store, outputs_for, state_mirror_for
from flows.settings import Settings
from schemas.deadletter import DeadLetter
from schemas.memory import MemoryUnit
from schemas.session import SessionState
from sinks.kafka.admin import KafkaConnection, create_topics, produce_jsonl, read_topic
from sinks.redis.state_mirror import state_key
from sinks.store.base import StoreFilter
from state.core.embedding import Embedder
from tests.conftest import event_dict

pytestmark = pytest.mark.integration


def _archive(path: Path) -> Path:
    lines = [
        json.dumps(event_dict(event_id="k1", session_id="kafka-s1", text="明天下午三点开会"), ensure_ascii=False),
        json.dumps(
            event_dict(event_id="k2", session_id="kafka-s1", text="next Tuesday is fine", ts="2026-01-01T08:01:00Z")
        ),
        "{not json",
        json.dumps(event_dict(event_id="k3", session_id="kafka-s2", text="我的订单还没到")),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_kafka_to_store_redis_and_topics(
    tmp_path: Path,
    kafka_bootstrap: str,
    kafka_conn: KafkaConnection,
    topic_name: Callable[[str], str],
    redis_url: str,
    monkeypatch: pytest.MonkeyPatch,
    static_embedder: Embedder,
) -> None:
    topics = {name: topic_name(name) for name in ("in", "memory", "dead")}
    create_topics(kafka_conn, list(topics.values()), partitions=2)
    report = produce_jsonl(kafka_conn, topics["in"], _archive(tmp_path / "events.jsonl"))
    assert report.sent == 4

    for key, value in {
        "KAFKA__BOOTSTRAP_SERVERS": kafka_bootstrap,
        "KAFKA__INPUT_TOPIC": topics["in"],
        "KAFKA__MEMORY_TOPIC": topics["memory"],
        "KAFKA__DEADLETTER_TOPIC": topics["dead"],
        "KAFKA__SESSION_TIMEOUT_MS": "6000",
        "REDIS__URL": redis_url,
        "STORE__PATH": str(tmp_path / "store"),
        "DEADLETTER__PATH": str(tmp_path / "dead.jsonl"),
    }.items():
        monkeypatch.setenv(f"RECALLFLOW_{key}", value)
    settings = Settings()
    client = redis.Redis.from_url(redis_url)
    client.delete(state_key("kafka-s1"), state_key("kafka-s2"))

    outputs = outputs_for(settings, "run", state_mirror_for(settings, "run"), static_embedder)
    run_main(build_flow(settings, kafka_input(settings, tail=False), outputs, embedder=static_embedder))

    store = open_store(settings)
    try:
        stored = store.scroll(StoreFilter(match={"tenant_id": "t1"}))
        assert sorted(h.payload["event_id"] for h in stored) == ["k1", "k2", "k3"]
    finally:
        close_stores()

    state = SessionState.model_validate_json(client.get(state_key("kafka-s1")))
    assert state.turn_count == 2
    # The input ended (tail=False), so event time ran out and the open task was archived.
    assert [t.task_id[:12] for t in state.previous_tasks] == ["TSK-2026-01-"]
    assert 0 < client.ttl(state_key("kafka-s1")) <= 900

    memory_records = [MemoryUnit.model_validate_json(v) for _, v in read_topic(kafka_conn, topics["memory"])]
    assert sorted(u.event_id for u in memory_records) == ["k1", "k2", "k3"]
    dead = [(k, DeadLetter.model_validate_json(v)) for k, v in read_topic(kafka_conn, topics["dead"])]
    assert len(dead) == 1
    assert dead[0][1].error_type == "malformed"
    assert dead[0][1].source.startswith(topics["in"])
