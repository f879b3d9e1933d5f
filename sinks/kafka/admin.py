"""Typed Kafka adapters: connection settings, topic admin, JSONL replay, lag, whole-topic read.

Why a module of its own: the flow (flows/) wires Bytewax's Kafka connector, but tools and
tests need the same broker through plain confluent-kafka calls, with the same connection
settings, explicit timeouts and one error type (`BrokerError`). Nothing here imports
Bytewax.

Broker independence: nothing here relies on broker-specific behaviour. In particular topics
are never created implicitly: metadata is always requested for *all* topics, because a
metadata request naming a missing topic auto-creates it on brokers with auto-creation on
(Apache Kafka's default, and Tansu's), and producing to a missing topic is refused here
rather than left to the broker.

Each public call logs one JSON line on the ``sinks.kafka.admin`` logger.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)

# The documented import path; the package re-exports NewTopic and OffsetSpec without
# __all__, which mypy's no-implicit-reexport rejects.
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec  # type: ignore[attr-defined]

from schemas.errors import BrokerError, ConfigurationError

__all__ = [
    "KafkaConnection",
    "ProduceReport",
    "consumer_lag",
    "create_topics",
    "produce_jsonl",
    "read_topic",
]

_log = logging.getLogger("sinks.kafka.admin")

_SECURITY_PROTOCOLS = frozenset({"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"})
# librdkafka's committed-offset sentinel for "this group never committed here".
_NO_COMMITTED_OFFSET = -1001

_DeliveryCallback = Callable[[KafkaError | None, Message], None]
# What confluent-kafka's constructors accept; `client_config()` promises plain strings.
_ClientConfig = dict[str, str | int | float | bool]


def _log_call(op: str, **fields: object) -> None:
    _log.info(json.dumps({"component": "sinks.kafka.admin", "op": op, **fields}, default=str))


@dataclass(frozen=True)
class KafkaConnection:
    """Where the brokers are and how to authenticate; the one input every call here takes.

    The caller resolves secrets (e.g. ``SecretStr.get_secret_value()``) and passes the plain
    value; it is kept out of ``repr`` so it does not leak into logs or tracebacks.

    >>> KafkaConnection("127.0.0.1:19092").client_config()
    {'bootstrap.servers': '127.0.0.1:19092', 'security.protocol': 'PLAINTEXT'}
    """

    bootstrap_servers: str
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)
    ssl_ca_location: str | None = None
    log_level: int | None = None  # librdkafka's stderr log (syslog level); None: its default

    def __post_init__(self) -> None:
        # Fail at start, not at the first produce deep inside a running flow.
        if not self.bootstrap_servers.strip():
            msg = "Kafka bootstrap_servers is empty; set e.g. '127.0.0.1:19092'"
            raise ConfigurationError(msg)
        if self.security_protocol not in _SECURITY_PROTOCOLS:
            msg = f"Kafka security_protocol {self.security_protocol!r} is not one of {sorted(_SECURITY_PROTOCOLS)}"
            raise ConfigurationError(msg)
        uses_sasl = self.security_protocol.startswith("SASL_")
        if uses_sasl and not self.sasl_mechanism:
            msg = f"Kafka security_protocol {self.security_protocol} needs sasl_mechanism"
            raise ConfigurationError(msg)
        has_sasl_fields = any(v is not None for v in (self.sasl_mechanism, self.sasl_username, self.sasl_password))
        if has_sasl_fields and not uses_sasl:
            # Credentials with a non-SASL protocol would be silently ignored by librdkafka.
            msg = (
                f"Kafka SASL settings given but security_protocol is {self.security_protocol}; "
                "use SASL_PLAINTEXT or SASL_SSL"
            )
            raise ConfigurationError(msg)

    def client_config(self) -> dict[str, str]:
        """The librdkafka configuration keys for this connection (no client-role keys)."""
        config = {
            "bootstrap.servers": self.bootstrap_servers,
            "security.protocol": self.security_protocol,
        }
        optional = {
            "sasl.mechanism": self.sasl_mechanism,
            "sasl.username": self.sasl_username,
            "sasl.password": self.sasl_password,
            "ssl.ca.location": self.ssl_ca_location,
            "log_level": None if self.log_level is None else str(self.log_level),
        }
        config.update({k: v for k, v in optional.items() if v is not None})
        return config


@dataclass(frozen=True)
class ProduceReport:
    """What `produce_jsonl` sent.

    ``sent`` counts delivered records; ``unkeyed`` counts those among them sent with key
    None (not JSON, not an object, or no string ``key_field``) that the flow will dead-letter;
    ``blank`` counts whitespace-only lines, which are skipped, not sent.
    """

    topic: str
    sent: int
    unkeyed: int
    blank: int


def _client(conn: KafkaConnection, extra: Mapping[str, str] | None = None) -> _ClientConfig:
    """The connection's config plus client-role keys, typed as the clients want it."""
    config: _ClientConfig = {**conn.client_config()}
    config.update(extra or {})
    return config


def _topic_partitions(admin: AdminClient, topic: str, timeout_s: float) -> list[int]:
    """Partition ids of an existing topic; BrokerError when it is missing or unreadable."""
    try:
        # No topic argument on purpose: naming the topic would auto-create it.
        metadata = admin.list_topics(timeout=timeout_s)
    except KafkaException as exc:
        msg = f"Kafka metadata request failed: {exc}"
        raise BrokerError(msg) from exc
    topic_meta = metadata.topics.get(topic)
    if topic_meta is None:
        msg = f"Kafka topic {topic!r} does not exist; create it first (create_topics)"
        raise BrokerError(msg)
    if topic_meta.error is not None:
        msg = f"Kafka topic {topic!r} metadata error: {topic_meta.error}"
        raise BrokerError(msg)
    return sorted(topic_meta.partitions)


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
    admin = AdminClient(_client(conn))
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
    _log_call("create_topics", names=unique, created=created_in_order, partitions=partitions)
    return created_in_order


def _wait_visible(admin: AdminClient, topics: list[str], timeout_s: float) -> None:
    """Poll metadata until every topic is listed; BrokerError (chained to the last miss) if not."""
    deadline = time.monotonic() + timeout_s
    pending = list(topics)
    while pending:
        try:
            _topic_partitions(admin, pending[0], timeout_s)
        except BrokerError as exc:
            if time.monotonic() >= deadline:
                msg = f"Kafka topics {pending!r} not visible in metadata after {timeout_s} s"
                raise BrokerError(msg) from exc
            time.sleep(0.2)
            continue
        pending.pop(0)


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

    Raises BrokerError when the topic does not exist, a record cannot be queued, the flush
    does not finish in ``flush_timeout_s``, or any delivery failed (after the flush, so the
    report of what was lost is complete).

    >>> produce_jsonl(KafkaConnection("127.0.0.1:19092"), "events", Path("a.jsonl"))  # doctest: +SKIP
    ProduceReport(topic='events', sent=12, unkeyed=1, blank=0)
    """
    admin = AdminClient(_client(conn))
    _topic_partitions(admin, topic, flush_timeout_s)

    producer = Producer(_client(conn, {"enable.idempotence": "true"}))
    failures: list[str] = []
    delivered = 0

    def on_delivery(err: KafkaError | None, msg: Message) -> None:
        nonlocal delivered
        if err is not None:
            failures.append(f"partition {msg.partition()}: {err}")
        else:
            delivered += 1

    queued = unkeyed = blank = 0
    with path.open("rb") as lines:
        for lineno, raw in enumerate(lines, start=1):
            value = raw.rstrip(b"\r\n")
            if not value.strip():
                blank += 1
                continue
            key = _session_key(value, key_field)
            if key is None:
                unkeyed += 1
            _produce_one(producer, topic, key, value, on_delivery, where=f"{path}:{lineno}")
            queued += 1

    remaining = producer.flush(flush_timeout_s)
    if remaining:
        msg = f"{remaining} of {queued} records to {topic!r} still undelivered after {flush_timeout_s} s"
        raise BrokerError(msg)
    if failures:
        shown = "; ".join(failures[:5])
        msg = f"{len(failures)} of {queued} records to {topic!r} failed delivery: {shown}"
        raise BrokerError(msg)
    report = ProduceReport(topic=topic, sent=delivered, unkeyed=unkeyed, blank=blank)
    _log_call("produce_jsonl", topic=topic, path=str(path), sent=delivered, unkeyed=unkeyed)
    return report


def _produce_one(
    producer: Producer,
    topic: str,
    key: bytes | None,
    value: bytes,
    on_delivery: _DeliveryCallback,
    *,
    where: str,
) -> None:
    """Queue one record, waiting for room when librdkafka's local queue is full."""
    while True:
        try:
            producer.produce(topic, value=value, key=key, on_delivery=on_delivery)
        except BufferError:
            # Local queue full: serve delivery callbacks to make room, then retry.
            producer.poll(0.5)
            continue
        except KafkaException as exc:
            msg = f"cannot queue record {where} for {topic!r}: {exc}"
            raise BrokerError(msg) from exc
        producer.poll(0)
        return


def consumer_lag(conn: KafkaConnection, group_id: str, topic: str, timeout_s: float = 15) -> dict[int, int]:
    """Records not yet committed by ``group_id``, per partition of ``topic``.

    Lag is the log-end offset minus the group's committed offset; a partition the group
    never committed counts from the earliest retained offset. For visibility only: Bytewax
    flows track their position in recovery snapshots, not in group commits. The value is
    not clamped: a negative lag means the broker reported a log end below the committed
    offset (Tansu 0.6 does, when the last batch held several records).

    >>> consumer_lag(KafkaConnection("127.0.0.1:19092"), "recallflow", "events")  # doctest: +SKIP
    {0: 0, 1: 3, 2: 0}
    """
    admin = AdminClient(_client(conn))
    parts = _topic_partitions(admin, topic, timeout_s)
    tps = [TopicPartition(topic, p) for p in parts]
    # A consumer that is given a group id but never subscribes does not join the group;
    # it only reads the group's committed offsets.
    consumer = Consumer(_client(conn, {"group.id": group_id, "enable.auto.commit": "false"}))
    try:
        committed = {tp.partition: tp.offset for tp in consumer.committed(tps, timeout=timeout_s)}
        ends = _list_offsets(admin, tps, OffsetSpec.latest(), timeout_s)  # type: ignore[no-untyped-call]
        needs_start = [tp for tp in tps if committed[tp.partition] == _NO_COMMITTED_OFFSET]
        starts = _list_offsets(admin, needs_start, OffsetSpec.earliest(), timeout_s)  # type: ignore[no-untyped-call]
    except KafkaException as exc:
        msg = f"reading lag of group {group_id!r} on {topic!r} failed: {exc}"
        raise BrokerError(msg) from exc
    finally:
        consumer.close()
    lag = {p: ends[p] - (starts[p] if p in starts else committed[p]) for p in parts}
    _log_call("consumer_lag", group_id=group_id, topic=topic, lag=lag)
    return lag


def _list_offsets(admin: AdminClient, tps: list[TopicPartition], spec: OffsetSpec, timeout_s: float) -> dict[int, int]:
    if not tps:
        return {}
    futures = admin.list_offsets({tp: spec for tp in tps}, request_timeout=timeout_s)
    try:
        return {tp.partition: f.result(timeout=timeout_s).offset for tp, f in futures.items()}
    except TimeoutError as exc:
        msg = f"listing offsets timed out after {timeout_s} s"
        raise BrokerError(msg) from exc


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
    admin = AdminClient(_client(conn))
    parts = _topic_partitions(admin, topic, timeout_s)
    consumer = Consumer(
        _client(
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
    _log_call("read_topic", topic=topic, records=len(records))
    return records
