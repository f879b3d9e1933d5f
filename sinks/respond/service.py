"""The run-mode responder service: response-request topic → responder → responses topic.

Input: `ResponderItem` JSON on the request topic (key = session id), discriminated by `kind`:
a `ResponseRequest` ("request"; a record without `kind` is one too) or a `UserCorrection`
("correction"), which the flow puts on the topic after the request whose answer it corrects (one
partition per session keeps that order). Output: `AgentResponse` on the response topic,
`ReflectionRecord` (from a request's marker words or from a correction) on the reflection topic,
supersede requests executed through the given callable, dead letters (unreadable items) on the
dead-letter topic. State: the responder's per-session previous answer; Kafka offsets.

At-least-once: a polled batch is answered concurrently (bounded by the responder's semaphore;
each answer bounded by the chat deadline, so one slow answer holds the batch for at most that
long and never blocks the dataflow, which runs in another process), every output is produced
and flushed, and only then are the offsets committed. A replayed batch yields the same
response ids (request ids) and the same supersede writes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer
from pydantic import BaseModel, ValidationError

from schemas.deadletter import DeadLetter
from schemas.errors import BrokerError
from schemas.reflection import SupersedeRequest
from schemas.response import ResponderItem, parse_responder_item
from sinks.respond.responder import CorrectionOutcome, Responder

log = logging.getLogger(__name__)


def _system_clock() -> datetime:
    return datetime.now(tz=UTC)


@dataclass
class RespondStats:
    requests: int = 0
    corrections: int = 0
    responses: int = 0
    fallbacks: int = 0
    reflections: int = 0
    dead_letters: int = 0
    latencies_ms: list[float] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class RespondTopics:
    requests: str
    responses: str
    reflections: str
    deadletters: str


class RespondService:
    def __init__(
        self,
        responder: Responder,
        *,
        consumer_config: dict[str, Any],
        producer_config: dict[str, Any],
        topics: RespondTopics,
        supersede: Callable[[SupersedeRequest], object] | None = None,
        batch_size: int = 32,
        poll_timeout_s: float = 1.0,
        flush_timeout_s: float = 30.0,
        clock: Callable[[], datetime] = _system_clock,
    ) -> None:
        self._responder = responder
        self._consumer_config = consumer_config
        self._producer_config = producer_config
        self._topics = topics
        self._supersede = supersede
        self._batch_size = batch_size
        self._poll_timeout_s = poll_timeout_s
        self._flush_timeout_s = flush_timeout_s
        self._clock = clock
        self._failures: list[str] = []
        self.stats = RespondStats()

    def _on_delivery(self, err: Any, _msg: Any) -> None:
        if err is not None:
            self._failures.append(str(err))

    def _produce(self, producer: Producer, topic: str, record: BaseModel, key: str | None) -> None:
        try:
            producer.produce(
                topic,
                key=key.encode() if key else None,
                value=record.model_dump_json().encode(),
                on_delivery=self._on_delivery,
            )
            producer.poll(0)
        except (KafkaException, BufferError) as exc:
            raise BrokerError(f"produce to {topic} failed: {exc}") from exc

    def _read(self, producer: Producer, messages: list[Message]) -> list[ResponderItem]:
        items: list[ResponderItem] = []
        for msg in messages:
            err = msg.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    continue
                raise BrokerError(f"consume from {self._topics.requests} failed: {err}")
            raw = msg.value() or b""
            try:
                items.append(parse_responder_item(raw))
            except ValidationError as exc:
                letter = DeadLetter.from_raw(
                    step="respond.parse",
                    key=(msg.key() or b"").decode("utf-8", "replace") or None,
                    source=f"{msg.topic()}/{msg.partition()}@{msg.offset()}",
                    error_type="validation",
                    message=str(exc),
                    raw=raw,
                    at=self._clock(),
                )
                self._produce(producer, self._topics.deadletters, letter, letter.key)
                self.stats.dead_letters += 1
        return items

    def process(self, loop: asyncio.AbstractEventLoop, producer: Producer, messages: list[Message]) -> None:
        """Handle one polled batch and produce every output (the caller commits afterwards).

        Requests and corrections are handled concurrently across sessions and in topic order
        within one (the responder's per-session lock), so a correction sees the answer before it.
        """
        items = self._read(producer, messages)
        outcomes = loop.run_until_complete(self._responder.handle_many(items)) if items else []
        for outcome in outcomes:
            if isinstance(outcome, CorrectionOutcome):
                self.stats.corrections += 1
            else:
                response = outcome.response
                self._produce(producer, self._topics.responses, response, response.session_id)
                self.stats.requests += 1
                self.stats.responses += 1
                self.stats.fallbacks += int(response.fallback)
                self.stats.latencies_ms.append(response.latency_ms)
            if outcome.reflection is not None:
                self._produce(producer, self._topics.reflections, outcome.reflection, outcome.reflection.session_id)
                self.stats.reflections += 1
            if outcome.supersede is not None and self._supersede is not None:
                self._supersede(outcome.supersede)
        remaining = producer.flush(self._flush_timeout_s)
        if remaining or self._failures:
            failures, self._failures = self._failures, []
            raise BrokerError(f"{remaining} undelivered, {len(failures)} failed: {failures[:3]}")

    def run(self, stop: threading.Event, *, max_idle_polls: int | None = None) -> RespondStats:
        """Consume until `stop` is set (or `max_idle_polls` empty polls in a row, for tests)."""
        consumer = Consumer(self._consumer_config)
        producer = Producer(self._producer_config)
        loop = asyncio.new_event_loop()
        idle = 0
        try:
            consumer.subscribe([self._topics.requests])
            while not stop.is_set():
                messages = consumer.consume(num_messages=self._batch_size, timeout=self._poll_timeout_s)
                if not messages:
                    # Idle only counts once partitions are assigned (a group join takes seconds).
                    idle += 1 if consumer.assignment() else 0
                    if max_idle_polls is not None and idle >= max_idle_polls:
                        break
                    continue
                idle = 0
                self.process(loop, producer, messages)
                consumer.commit(asynchronous=False)
                log.info(json.dumps({"op": "respond.batch", "messages": len(messages), "total": self.stats.requests}))
        finally:
            loop.run_until_complete(self._responder.aclose())
            loop.close()
            producer.flush(self._flush_timeout_s)
            consumer.close()
        return self.stats
