"""Send a JSONL file to a topic, one raw record per line, keyed by session id."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import KafkaError, KafkaException, Message, Producer
from confluent_kafka.admin import AdminClient

from schemas.errors import BrokerError
from sinks.kafka.connection import KafkaConnection, client, log_call, topic_partitions

_DeliveryCallback = Callable[[KafkaError | None, Message], None]


@dataclass(frozen=True)
class ProduceReport:
    """What `produce_jsonl` sent.

    ``sent`` counts delivered records; ``unkeyed`` counts those among them sent with key
    None (not JSON, not an object, or no string ``key_field``) that the flow will dead-letter;
    ``blank`` counts whitespace-only lines, which are skipped, not sent; ``rejected`` says,
    per line the client or the broker refused (e.g. over the message size limit),
    ``file:line: reason``. A refused line never stops the others.
    """

    topic: str
    sent: int
    unkeyed: int
    blank: int
    rejected: tuple[str, ...] = ()


def _session_key(line: bytes, key_field: str) -> bytes | None:
    """The key of one JSONL record, or None when the line cannot give one.

    Only a JSON object with a non-empty string under ``key_field`` gives a key; everything
    else is still produced (unkeyed) so the flow can dead-letter it with the raw bytes.
    """
    try:
        record = json.loads(line)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError are both ValueErrors
        return None
    if not isinstance(record, dict):
        return None
    value = record.get(key_field)
    if not isinstance(value, str) or not value:
        return None
    return value.encode("utf-8")


def produce_jsonl(
    conn: KafkaConnection,
    topic: str,
    path: Path,
    key_field: str = "session_id",
    flush_timeout_s: float = 30,
) -> ProduceReport:
    """Send each line of a JSONL file as one raw record keyed by its session id.

    The bytes are sent as they are in the file (minus the line ending): validation is the
    flow's job, and a replay must reproduce the live input byte for byte. Keying by session
    keeps a session's events on one partition, in file order. The producer is idempotent
    so a retried batch cannot be reordered or duplicated.

    A record the client or the broker refuses (too large, or its delivery failed) is listed
    in the report's ``rejected`` and the rest of the file is still sent: one bad line never
    costs the others. Raises BrokerError when the topic does not exist, the producer hits a
    fatal error, or the flush does not finish in ``flush_timeout_s`` (after flushing what
    was queued, so nothing queued before is dropped).

    >>> produce_jsonl(KafkaConnection("127.0.0.1:19092"), "events", Path("a.jsonl"))  # doctest: +SKIP
    ProduceReport(topic='events', sent=12, unkeyed=1, blank=0)
    """
    admin = AdminClient(client(conn))
    topic_partitions(admin, topic, flush_timeout_s)

    producer = Producer(client(conn, {"enable.idempotence": "true"}))
    rejected: list[tuple[int, str]] = []
    delivered = 0

    def delivery_for(lineno: int) -> _DeliveryCallback:
        def on_delivery(err: KafkaError | None, msg: Message) -> None:
            nonlocal delivered
            if err is not None:
                rejected.append((lineno, f"{path}:{lineno}: delivery failed: {err.str()}"))
            else:
                delivered += 1

        return on_delivery

    queued = unkeyed = blank = 0
    fatal: KafkaException | None = None
    with path.open("rb") as lines:
        for lineno, raw in enumerate(lines, start=1):
            value = raw.rstrip(b"\r\n")
            if not value.strip():
                blank += 1
                continue
            key = _session_key(value, key_field)
            try:
                _produce_one(producer, topic, key, value, delivery_for(lineno))
            except KafkaException as exc:
                error: KafkaError = exc.args[0]
                if error.fatal():
                    fatal = exc
                    break
                rejected.append((lineno, f"{path}:{lineno}: not sent: {_reason(error, len(value))}"))
                continue
            queued += 1
            unkeyed += key is None

    remaining = producer.flush(flush_timeout_s)
    if fatal is not None:
        msg = f"producing to {topic!r} stopped: {fatal} ({delivered} records delivered before)"
        raise BrokerError(msg) from fatal
    if remaining:
        msg = f"{remaining} of {queued} records to {topic!r} still undelivered after {flush_timeout_s} s"
        raise BrokerError(msg)
    report = ProduceReport(
        topic=topic,
        sent=delivered,
        unkeyed=unkeyed,
        blank=blank,
        rejected=tuple(reason for _, reason in sorted(rejected)),
    )
    log_call("produce_jsonl", topic=topic, path=str(path), sent=delivered, unkeyed=unkeyed, rejected=len(rejected))
    return report


def _reason(error: KafkaError, size: int) -> str:
    if error.code() == KafkaError.MSG_SIZE_TOO_LARGE:
        return f"{size} bytes is over the producer's message size limit (message.max.bytes)"
    return str(error.str())


def _produce_one(
    producer: Producer,
    topic: str,
    key: bytes | None,
    value: bytes,
    on_delivery: _DeliveryCallback,
) -> None:
    """Queue one record, waiting for room when librdkafka's local queue is full (KafkaException
    when the client refuses it)."""
    while True:
        try:
            producer.produce(topic, value=value, key=key, on_delivery=on_delivery)
        except BufferError:
            # Local queue full: serve delivery callbacks to make room, then retry.
            producer.poll(0.5)
            continue
        producer.poll(0)
        return
