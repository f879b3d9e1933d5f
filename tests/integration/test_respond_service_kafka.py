"""`recallflow respond` in run mode against the real broker: request topic → responses topic.

Needs the Kafka-compatible broker that `make test` starts (RECALLFLOW_KAFKA__BOOTSTRAP_SERVERS,
default 127.0.0.1:19092); fails, never skips, when none answers.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from schemas.deadletter import DeadLetter
from schemas.events import UserCorrection
from schemas.reflection import ReflectionRecord, SupersedeRequest
from schemas.response import AgentResponse
from sinks.respond.service import RespondService, RespondTopics
from tests.fakes.fake_openai import FakeOpenAI
from tests.fakes.responder_factories import make_cue, make_request, make_responder

pytestmark = pytest.mark.integration

BOOTSTRAP = os.environ.get("RECALLFLOW_KAFKA__BOOTSTRAP_SERVERS", "127.0.0.1:19092")


@pytest.fixture
def topics() -> RespondTopics:
    admin = AdminClient({"bootstrap.servers": BOOTSTRAP})
    try:
        admin.list_topics(timeout=10)
    except KafkaException as exc:
        pytest.fail(f"no Kafka broker answers at {BOOTSTRAP}: {exc}", pytrace=False)
    tag = uuid.uuid4().hex[:10]
    names = RespondTopics(requests=f"rq-{tag}", responses=f"rs-{tag}", reflections=f"rf-{tag}", deadletters=f"dl-{tag}")
    futures = admin.create_topics(
        [
            NewTopic(t, num_partitions=2, replication_factor=1)
            for t in (names.requests, names.responses, names.reflections, names.deadletters)
        ]
    )
    for future in futures.values():
        future.result(timeout=10)
    return names


@pytest.fixture
def server():
    srv = FakeOpenAI().start()
    yield srv
    srv.stop()


def _drain(topic: str, expected: int) -> list[bytes]:
    """Read a topic from the start by explicit assignment (no group join to wait for)."""
    consumer = Consumer({"bootstrap.servers": BOOTSTRAP, "group.id": "unused", "enable.auto.commit": "false"})
    partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
    values: list[bytes] = []
    try:
        for _ in range(40):
            msg = consumer.poll(0.25)
            if msg is not None and msg.error() is None:
                values.append(msg.value())
            if len(values) >= expected and msg is None:
                break
    finally:
        consumer.close()
    return values


def _service(
    topics: RespondTopics, url: str, group: str, supersede: Callable[[SupersedeRequest], object] | None = None
) -> RespondService:
    consumer = {
        "bootstrap.servers": BOOTSTRAP,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": "false",
    }
    return RespondService(
        make_responder(url),
        consumer_config=consumer,
        producer_config={"bootstrap.servers": BOOTSTRAP},
        topics=topics,
        supersede=supersede,
        poll_timeout_s=0.5,
    )


def test_requests_on_the_topic_are_answered_on_the_responses_topic(topics: RespondTopics, server: FakeOpenAI) -> None:
    producer = Producer({"bootstrap.servers": BOOTSTRAP})
    requests = [make_request(f"question {i}", make_cue(), n=i, session_id=f"s{i}") for i in range(3)]
    for r in requests:
        producer.produce(topics.requests, key=r.session_id.encode(), value=r.model_dump_json().encode())
    producer.produce(topics.requests, key=b"s9", value=b"{broken json")
    assert producer.flush(10) == 0

    group = f"responder-{uuid.uuid4().hex[:8]}"
    stats = _service(topics, server.base_url, group).run(threading.Event(), max_idle_polls=6)
    assert (stats.requests, stats.responses, stats.dead_letters) == (3, 3, 1)

    responses = [AgentResponse.model_validate_json(v) for v in _drain(topics.responses, 3)]
    assert sorted(r.request_id for r in responses) == ["req-0", "req-1", "req-2"]
    assert all(not r.fallback and r.cue_ids == ("mem-1",) for r in responses)
    [letter] = [DeadLetter.model_validate_json(v) for v in _drain(topics.deadletters, 1)]
    assert letter.raw_bytes() == b"{broken json"

    # Offsets were committed after the outputs were flushed: the group resumes after the 4 records.
    probe = Consumer({"bootstrap.servers": BOOTSTRAP, "group.id": group, "enable.auto.commit": "false"})
    try:
        partitions = probe.list_topics(topics.requests, timeout=10).topics[topics.requests].partitions
        committed = probe.committed([TopicPartition(topics.requests, p) for p in partitions], timeout=10)
    finally:
        probe.close()
    assert sum(max(tp.offset, 0) for tp in committed) == 4


def test_a_correction_on_the_topic_after_its_answer_becomes_a_reflection(
    topics: RespondTopics, server: FakeOpenAI
) -> None:
    producer = Producer({"bootstrap.servers": BOOTSTRAP})
    question = make_request("哪天发货？", make_cue("mem-wrong", text="订单5月14日发货"), n=1, session_id="s-fix")
    correction = UserCorrection(
        event_id="c1", session_id="s-fix", tenant_id="tenant-a", ts=question.ts, corrected_text="5月16日"
    )
    stranger = UserCorrection(
        event_id="c2", session_id="s-none", tenant_id="tenant-a", ts=question.ts, corrected_text="5月16日"
    )
    # One key per session: the question and its correction share a partition, in this order.
    for item in (question, correction, stranger):
        producer.produce(topics.requests, key=item.session_id.encode(), value=item.model_dump_json().encode())
    assert producer.flush(10) == 0

    superseded: list[SupersedeRequest] = []
    service = _service(topics, server.base_url, f"responder-{uuid.uuid4().hex[:8]}", superseded.append)
    stats = service.run(threading.Event(), max_idle_polls=6)
    assert (stats.requests, stats.corrections, stats.reflections, stats.dead_letters) == (1, 2, 1, 0)

    [response] = [AgentResponse.model_validate_json(v) for v in _drain(topics.responses, 1)]
    [reflection] = [ReflectionRecord.model_validate_json(v) for v in _drain(topics.reflections, 1)]
    assert reflection.previous_request_id == response.request_id == "req-1"
    assert reflection.correction_event_id == "c1"
    assert reflection.superseded_memory_ids == ("mem-wrong",)
    assert [s.memory_ids for s in superseded] == [("mem-wrong",)]
