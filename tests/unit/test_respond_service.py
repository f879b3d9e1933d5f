"""The run-mode responder service, batch by batch, with an in-memory producer (no broker)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from confluent_kafka import KafkaError

from schemas.deadletter import DeadLetter
from schemas.errors import BrokerError
from schemas.reflection import ReflectionRecord, SupersedeRequest
from schemas.response import AgentResponse
from sinks.respond.service import RespondService, RespondTopics
from tests.fakes.fake_openai import closed_port_url
from tests.fakes.responder_factories import make_cue, make_request, make_responder

TOPICS = RespondTopics(requests="req", responses="resp", reflections="refl", deadletters="dead")


class FakeMessage:
    def __init__(self, value: bytes, offset: int, error: Any = None) -> None:
        self._value, self._offset, self._error = value, offset, error

    def error(self) -> Any:
        return self._error

    def value(self) -> bytes:
        return self._value

    def key(self) -> bytes:
        return b"sess-1"

    def topic(self) -> str:
        return "req"

    def partition(self) -> int:
        return 0

    def offset(self) -> int:
        return self._offset


class FakeError:
    def __init__(self, code: int) -> None:
        self._code = code

    def code(self) -> int:
        return self._code

    def __str__(self) -> str:
        return f"error {self._code}"


class FakeProducer:
    def __init__(self, *, fail_delivery: bool = False, raise_on_produce: bool = False) -> None:
        self.sent: list[tuple[str, bytes | None, bytes]] = []
        self._callbacks: list[Any] = []
        self.fail_delivery = fail_delivery
        self.raise_on_produce = raise_on_produce

    def produce(self, topic: str, key: bytes | None, value: bytes, on_delivery: Any) -> None:
        if self.raise_on_produce:
            raise BufferError("queue full")
        self.sent.append((topic, key, value))
        self._callbacks.append(on_delivery)

    def poll(self, _timeout: float) -> int:
        return 0

    def flush(self, _timeout: float) -> int:
        for cb in self._callbacks:
            cb("delivery failed" if self.fail_delivery else None, None)
        self._callbacks.clear()
        return 0


def _service(supersede: Any = None) -> RespondService:
    return RespondService(
        make_responder(closed_port_url(), retries=0),
        consumer_config={},
        producer_config={},
        topics=TOPICS,
        supersede=supersede,
        clock=lambda: datetime(2026, 6, 10, tzinfo=UTC),
    )


def _process(service: RespondService, producer: FakeProducer, messages: list[FakeMessage]) -> None:
    loop = asyncio.new_event_loop()
    try:
        service.process(loop, producer, messages)  # type: ignore[arg-type]
    finally:
        loop.close()


def test_requests_become_responses_reflections_and_supersedes_bad_ones_dead_letters() -> None:
    superseded: list[SupersedeRequest] = []
    service = _service(superseded.append)
    producer = FakeProducer()
    first = make_request("哪天发货？", make_cue("mem-wrong", text="订单5月14日发货"), n=1)
    _process(
        service,
        producer,
        [
            FakeMessage(first.model_dump_json().encode(), 0),
            FakeMessage(b'{"not": "a request"}', 1),
            FakeMessage(b"", 2, FakeError(KafkaError._PARTITION_EOF)),
        ],
    )
    correction = make_request("不对，是上个月15号", n=2)
    _process(service, producer, [FakeMessage(correction.model_dump_json().encode(), 3)])

    by_topic: dict[str, list[bytes]] = {}
    for topic, key, value in producer.sent:
        by_topic.setdefault(topic, []).append(value)
        assert key == b"sess-1"
    responses = [AgentResponse.model_validate_json(v) for v in by_topic["resp"]]
    assert [r.request_id for r in responses] == ["req-1", "req-2"]
    [reflection] = [ReflectionRecord.model_validate_json(v) for v in by_topic["refl"]]
    assert reflection.error_pattern == "date_parse_error"
    [letter] = [DeadLetter.model_validate_json(v) for v in by_topic["dead"]]
    assert letter.source == "req/0@1"
    assert letter.raw_bytes() == b'{"not": "a request"}'
    assert [s.memory_ids for s in superseded] == [("mem-wrong",)]
    assert (service.stats.requests, service.stats.responses, service.stats.fallbacks) == (2, 2, 2)
    assert (service.stats.reflections, service.stats.dead_letters) == (1, 1)


def test_a_consume_error_is_a_broker_error() -> None:
    with pytest.raises(BrokerError, match="consume from req failed"):
        _process(_service(), FakeProducer(), [FakeMessage(b"", 0, FakeError(KafkaError._TRANSPORT))])


def test_undelivered_outputs_fail_the_batch_so_offsets_are_not_committed() -> None:
    request = make_request("hi", make_cue())
    with pytest.raises(BrokerError, match="failed"):
        _process(_service(), FakeProducer(fail_delivery=True), [FakeMessage(request.model_dump_json().encode(), 0)])


def test_a_full_producer_queue_is_a_broker_error() -> None:
    request = make_request("hi", make_cue())
    with pytest.raises(BrokerError, match="produce to resp failed"):
        _process(_service(), FakeProducer(raise_on_produce=True), [FakeMessage(request.model_dump_json().encode(), 0)])


def test_dead_letter_payload_is_json() -> None:
    service = _service()
    producer = FakeProducer()
    _process(service, producer, [FakeMessage(b"\xff\xfe", 0)])
    [(topic, _key, value)] = producer.sent
    assert topic == "dead"
    assert json.loads(value)["error_type"] == "validation"
