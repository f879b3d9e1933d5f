"""Topic admin and whole-topic reads: create topics (idempotent), read every record of a topic."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, TopicPartition

# The documented import path; the package re-exports NewTopic without __all__, which
# mypy's no-implicit-reexport rejects.
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from schemas.errors import BrokerError, ConfigurationError
from sinks.kafka.connection import KafkaConnection, client, log_call, topic_partitions


def create_topics(
    conn: KafkaConnection,
    names: Sequence[str],
    partitions: int,
    replication: int = 1,
    timeout_s: float = 15,
) -> list[str]:
    """Create the topics that do not exist yet and return the names this call created.

    Idempotent: a topic that already exists is not an error (its partition count is left
    as it is). Returns only after every named topic is visible in metadata, because on a
    multi-broker cluster a fresh topic can be unknown to the next request for a moment.

    >>> create_topics(KafkaConnection("127.0.0.1:19092"), ["events"], partitions=3)  # doctest: +SKIP
    ['events']
    """
    if isinstance(names, str):
        msg = "create_topics takes a sequence of topic names, not one string"
        raise ConfigurationError(msg)
    if not names or any(not n for n in names):
        msg = f"create_topics needs non-empty topic names, got {list(names)!r}"
        raise ConfigurationError(msg)
    if partitions < 1 or replication < 1:
        msg = f"partitions and replication must be >= 1, got {partitions} and {replication}"
        raise ConfigurationError(msg)

    unique = list(dict.fromkeys(names))
    admin = AdminClient(client(conn))
    new = [NewTopic(n, num_partitions=partitions, replication_factor=replication) for n in unique]
    futures = admin.create_topics(new, operation_timeout=timeout_s, request_timeout=timeout_s)
    created: set[str] = set()
    for name, future in futures.items():
        try:
            future.result(timeout=timeout_s)
        except KafkaException as exc:
            if exc.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS:
                continue
            msg = f"creating Kafka topic {name!r} failed: {exc}"
            raise BrokerError(msg) from exc
        except TimeoutError as exc:
            msg = f"creating Kafka topic {name!r} timed out after {timeout_s} s"
            raise BrokerError(msg) from exc
        created.add(name)

    _wait_visible(admin, unique, timeout_s)
    created_in_order = [n for n in unique if n in created]
    log_call("create_topics", names=unique, created=created_in_order, partitions=partitions)
    return created_in_order


def _wait_visible(admin: AdminClient, topics: list[str], timeout_s: float) -> None:
    """Poll metadata until every topic is listed; BrokerError (chained to the last miss) if not."""
    deadline = time.monotonic() + timeout_s
    pending = list(topics)
    while pending:
        try:
            topic_partitions(admin, pending[0], timeout_s)
        except BrokerError as exc:
            if time.monotonic() >= deadline:
                msg = f"Kafka topics {pending!r} not visible in metadata after {timeout_s} s"
                raise BrokerError(msg) from exc
            time.sleep(0.2)
            continue
        pending.pop(0)


def read_topic(conn: KafkaConnection, topic: str, timeout_s: float = 30) -> list[tuple[bytes | None, bytes]]:
    """Every record of ``topic`` from offset 0, as (key, value), for tests and tools.

    Stops when each partition has reported its end (records produced meanwhile may or may
    not be included). Order is preserved within a partition, hence within a key; across
    partitions it is interleaved. Reads by assignment with a throwaway group id and no
    commits, so it neither joins nor disturbs any consumer group. A record with a null
    value (a tombstone) is returned with value ``b""``.

    Raises BrokerError when the topic is missing, the consumer reports an error, or the end
    of every partition is not reached within ``timeout_s`` (a partial read is never
    returned as if it were the whole topic).

    >>> read_topic(KafkaConnection("127.0.0.1:19092"), "events", timeout_s=10)  # doctest: +SKIP
    [(b's1', b'{"session_id": "s1", ...}'), ...]
    """
    admin = AdminClient(client(conn))
    parts = topic_partitions(admin, topic, timeout_s)
    consumer = Consumer(
        client(
            conn,
            {
                "group.id": f"recallflow-read-{uuid.uuid4().hex}",
                "enable.auto.commit": "false",
                "enable.partition.eof": "true",
            },
        )
    )
    records: list[tuple[bytes | None, bytes]] = []
    pending = set(parts)
    deadline = time.monotonic() + timeout_s
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in parts])
        while pending:
            left = deadline - time.monotonic()
            if left <= 0:
                msg = (
                    f"reading {topic!r}: partitions {sorted(pending)} not at their end after "
                    f"{timeout_s} s ({len(records)} records read)"
                )
                raise BrokerError(msg)
            message = consumer.poll(min(left, 0.5))
            if message is None:
                continue
            err = message.error()
            if err is None:
                records.append((message.key(), message.value() or b""))
            elif err.code() == KafkaError._PARTITION_EOF:
                pending.discard(message.partition())
            else:
                msg = f"reading {topic!r} failed: {err}"
                raise BrokerError(msg)
    finally:
        consumer.close()
    log_call("read_topic", topic=topic, records=len(records))
    return records
