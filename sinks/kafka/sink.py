"""Kafka sink for typed records: serialise once at egress, key by session id.

At-least-once: each batch is produced and flushed before Bytewax moves on; consumers
dedupe by the record's deterministic id (memory_id, event ids).
"""

from __future__ import annotations

import json
import logging
from typing import Any, Generic, TypeVar

from bytewax.outputs import DynamicSink, StatelessSinkPartition
from confluent_kafka import KafkaException, Producer
from pydantic import BaseModel

from schemas.errors import BrokerError

log = logging.getLogger(__name__)
R = TypeVar("R", bound=BaseModel)


def record_key(record: BaseModel) -> bytes | None:
    """Partition key: the record's session id when it has one."""
    session = getattr(record, "session_id", None) or getattr(record, "key", None)
    return session.encode("utf-8") if isinstance(session, str) else None


class _KafkaPartition(StatelessSinkPartition[R], Generic[R]):
    def __init__(self, config: dict[str, Any], topic: str, flush_timeout_s: float) -> None:
        self._producer = Producer(config)
        self._topic = topic
        self._flush_timeout_s = flush_timeout_s
        self._failures: list[str] = []

    def _on_delivery(self, err: Any, _msg: Any) -> None:
        if err is not None:
            self._failures.append(str(err))

    def write_batch(self, items: list[R]) -> None:
        try:
            for record in items:
                self._producer.produce(
                    self._topic,
                    key=record_key(record),
                    value=record.model_dump_json().encode(),
                    on_delivery=self._on_delivery,
                )
                self._producer.poll(0)
        except (KafkaException, BufferError) as exc:
            raise BrokerError(f"produce to {self._topic} failed: {exc}") from exc
        remaining = self._producer.flush(self._flush_timeout_s)
        if remaining or self._failures:
            failures, self._failures = self._failures, []
            raise BrokerError(f"{remaining} undelivered, {len(failures)} failed to {self._topic}: {failures[:3]}")
        log.debug(json.dumps({"op": "kafka.produce", "topic": self._topic, "records": len(items)}))

    def close(self) -> None:
        self._producer.flush(self._flush_timeout_s)


class KafkaRecordSink(DynamicSink[R], Generic[R]):
    def __init__(
        self, bootstrap_servers: str, topic: str, config: dict[str, str], flush_timeout_s: float = 30.0
    ) -> None:
        self._config: dict[str, Any] = {"bootstrap.servers": bootstrap_servers, "enable.idempotence": True, **config}
        self._topic = topic
        self._flush_timeout_s = flush_timeout_s

    @property
    def topic(self) -> str:
        return self._topic

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _KafkaPartition[R]:
        return _KafkaPartition(self._config, self._topic, self._flush_timeout_s)
