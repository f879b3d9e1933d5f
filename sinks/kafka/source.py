"""Kafka topic as a replay source: from the beginning, an offset, or a time; resumable.

One Bytewax partition per Kafka partition, read by assignment (no consumer group: the
position lives in the recovery snapshot, like Bytewax's own KafkaSource). Where to start
when there is no snapshot: `"beginning"`, `"end"`, an offset (the same offset in every
partition), or a timezone-aware datetime (each partition's first record at or after it,
via the broker's time index). With `tail=False` a partition ends at its end offset as of
the read, which is what a backfill wants.

Items: `RawRecord` (bytes as produced, key, `topic/partition@offset` as source) or
`TransportError` for a consumer error on a partition (the flow dead-letters it).

Topics are never created here: partitions are listed from metadata of all topics (naming
one topic in a metadata request auto-creates it on brokers that allow it).

Ends that brokers do not signal: a start offset past a partition's end, or a partition whose
end the broker under-reports, never gets an end-of-partition event. With `tail=False` a
partition that yields nothing for `idle_end_s` while its position is at or past the reported
end is treated as ended, with a warning naming the offsets (never a silent hang). A start
time is also applied to each record's own timestamp: a broker whose time index answers
offset 0 for any time (Tansu does) cannot make `--since` replay everything.

Consumer lag: with a `group_id` the position read so far is committed to that group
(asynchronously, about once a second) so `recallflow lag` and any Kafka tool can show the
flow's lag; `start="committed"` resumes from that position when there is no snapshot. The
commit tracks what was *read*: at-least-once delivery after a crash comes from recovery
snapshots, not from the group.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from bytewax.inputs import FixedPartitionedSource, StatefulSourcePartition
from confluent_kafka import (
    OFFSET_BEGINNING,
    OFFSET_END,
    OFFSET_STORED,
    Consumer,
    KafkaError,
    KafkaException,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient

from schemas.errors import BrokerError, ConfigurationError
from schemas.raw import RawRecord

Start = Literal["beginning", "end", "committed"] | int | datetime
_log = logging.getLogger("sinks.kafka.source")


@dataclass(frozen=True, slots=True)
class TransportError:
    """A consumer-level error on one partition (the record, if any, is kept for the dead letter)."""

    source: str
    key: bytes | None
    value: bytes
    message: str


def list_partitions(config: dict[str, Any], topic: str, timeout_s: float = 15.0) -> list[int]:
    """Partition ids of an existing topic; BrokerError if it does not exist."""
    try:
        metadata = AdminClient(config).list_topics(timeout=timeout_s)
    except KafkaException as exc:
        raise BrokerError(f"Kafka metadata request failed: {exc}") from exc
    meta = metadata.topics.get(topic)
    if meta is None or meta.error is not None:
        raise BrokerError(f"Kafka topic {topic!r} does not exist or is unreadable ({getattr(meta, 'error', None)})")
    return sorted(meta.partitions)


def resolve_start(consumer: Consumer, topic: str, partition: int, start: Start, timeout_s: float) -> int:
    """The offset to read a partition from, for a start spec without a snapshot."""
    if start == "beginning":
        return OFFSET_BEGINNING
    if start == "end":
        return OFFSET_END
    if start == "committed":
        return OFFSET_STORED
    if isinstance(start, datetime):
        if start.tzinfo is None:
            raise ConfigurationError(f"replay start time {start!r} must be timezone-aware")
        wanted = TopicPartition(topic, partition, int(start.timestamp() * 1000))
        try:
            (found,) = consumer.offsets_for_times([wanted], timeout=timeout_s)
        except KafkaException as exc:
            raise BrokerError(f"looking up offsets for time {start.isoformat()} on {topic}/{partition}: {exc}") from exc
        # -1: no record at or after that time in this partition → nothing to replay from it.
        return OFFSET_END if found.offset < 0 else int(found.offset)
    if isinstance(start, int) and start >= 0:
        return start
    raise ConfigurationError(f"replay start must be 'beginning', 'end', an offset >= 0 or a datetime; got {start!r}")


class _TopicPartition(StatefulSourcePartition[RawRecord | TransportError, int]):
    def __init__(
        self,
        config: dict[str, Any],
        topic: str,
        partition: int,
        start: Start,
        resume: int | None,
        batch_size: int,
        tail: bool,
        timeout_s: float,
        group_id: str | None,
        idle_end_s: float = 5.0,
    ) -> None:
        conf = {**config, "group.id": group_id or "recallflow-replay", "enable.partition.eof": str(not tail).lower()}
        if group_id:
            conf |= {
                "enable.auto.commit": "true",
                "enable.auto.offset.store": "false",
                "auto.commit.interval.ms": "1000",
                "auto.offset.reset": "earliest",
            }
        else:
            conf |= {"enable.auto.commit": "false"}
        self._commit = bool(group_id)
        self._consumer = Consumer(conf)
        self._topic, self._partition, self._batch_size = topic, partition, batch_size
        offset = resume if resume is not None else resolve_start(self._consumer, topic, partition, start, timeout_s)
        self._offset = offset
        self._consumer.assign([TopicPartition(topic, partition, offset)])
        self._eof = False
        self._tail, self._timeout_s, self._idle_end_s = tail, timeout_s, idle_end_s
        self._since_ms = int(start.timestamp() * 1000) if isinstance(start, datetime) else None
        self._skipped_before_since = 0
        self._idle_from = time.monotonic()

    def next_batch(self) -> list[RawRecord | TransportError]:
        if self._eof:
            raise StopIteration
        batch: list[RawRecord | TransportError] = []
        messages = self._consumer.consume(self._batch_size, 0.05)
        for msg in messages:
            err = msg.error()
            where = f"{self._topic}/{self._partition}@{msg.offset()}"
            if err is not None and err.code() == KafkaError._PARTITION_EOF:
                self._eof = True
                break
            if err is not None:
                batch.append(TransportError(where, msg.key(), msg.value() or b"", str(err)))
                continue
            self._offset = (msg.offset() or 0) + 1
            if self._before_since(msg.timestamp()):
                continue
            batch.append(RawRecord(source=where, payload=msg.value() or b"", key=msg.key()))
        if messages:
            self._idle_from = time.monotonic()
        elif not self._tail and time.monotonic() - self._idle_from > self._idle_end_s:
            self._eof = self._past_end()
        if self._commit and self._offset >= 0:
            self._consumer.store_offsets(offsets=[TopicPartition(self._topic, self._partition, self._offset)])
        return batch

    def _before_since(self, timestamp: tuple[int, int]) -> bool:
        kind, ms = timestamp
        if self._since_ms is None or kind == 0 or ms >= self._since_ms:  # 0: TIMESTAMP_NOT_AVAILABLE
            return False
        if self._skipped_before_since == 0:
            _log.warning(
                "%s/%s: the broker's time index pointed before the start time; "
                "records older than it are skipped by their own timestamps",
                self._topic,
                self._partition,
            )
        self._skipped_before_since += 1
        return True

    def _past_end(self) -> bool:
        """Nothing came for `idle_end_s`: ended if the position is at or past the reported end."""
        self._idle_from = time.monotonic()
        tp = TopicPartition(self._topic, self._partition)
        try:
            low, high = self._consumer.get_watermark_offsets(tp, timeout=self._timeout_s, cached=False)
            (fetching,) = self._consumer.position([tp])
        except KafkaException as exc:
            raise BrokerError(f"reading the end offset of {self._topic}/{self._partition}: {exc}") from exc
        if self._offset >= 0:
            position = self._offset
        elif fetching.offset >= 0:
            position = fetching.offset
        elif self._offset == OFFSET_BEGINNING:
            position = low
        else:
            return False  # no position known yet: keep waiting
        if position < high:
            return False
        _log.warning(
            "%s/%s: no record for %.0f s at offset %s and the partition ends at %s: nothing more to replay from it",
            self._topic,
            self._partition,
            self._idle_end_s,
            position,
            high,
        )
        return True

    def snapshot(self) -> int:
        # Before the first record the offset may still be a sentinel (beginning/end): resume the same way.
        return self._offset

    def close(self) -> None:
        self._consumer.close()


class KafkaReplaySource(FixedPartitionedSource[RawRecord | TransportError, int]):
    """Read `topic` from `start` (see module doc); `config` holds bootstrap servers and security keys."""

    def __init__(
        self,
        config: dict[str, Any],
        topic: str,
        *,
        start: Start = "beginning",
        tail: bool = False,
        batch_size: int = 500,
        timeout_s: float = 15.0,
        group_id: str | None = None,
    ) -> None:
        if "bootstrap.servers" not in config:
            raise ConfigurationError("KafkaReplaySource config needs 'bootstrap.servers'")
        self._config, self._topic, self._start = dict(config), topic, start
        self._tail, self._batch_size, self._timeout_s, self._group_id = tail, batch_size, timeout_s, group_id

    def list_parts(self) -> list[str]:
        return [str(p) for p in list_partitions(self._config, self._topic, self._timeout_s)]

    def build_part(self, step_id: str, for_part: str, resume_state: int | None) -> _TopicPartition:
        return _TopicPartition(
            self._config,
            self._topic,
            int(for_part),
            self._start,
            resume_state,
            self._batch_size,
            self._tail,
            self._timeout_s,
            self._group_id,
        )
