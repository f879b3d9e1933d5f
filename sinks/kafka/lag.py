"""Consumer lag of a group on a topic, per partition."""

from __future__ import annotations

from confluent_kafka import Consumer, KafkaException, TopicPartition

# The documented import path; the package re-exports OffsetSpec without __all__, which
# mypy's no-implicit-reexport rejects.
from confluent_kafka.admin import AdminClient, OffsetSpec  # type: ignore[attr-defined]

from schemas.errors import BrokerError
from sinks.kafka.connection import KafkaConnection, client, log_call, topic_partitions

# librdkafka's committed-offset sentinel for "this group never committed here".
_NO_COMMITTED_OFFSET = -1001


def partition_lag(end: int, position: int) -> int | None:
    """Records between a group's position and the log end, or None when the broker's log end
    is below the position (it under-reports the end: Tansu 0.6 gives the base offset of the
    last batch + 1 when that batch held several records), so the true lag is unknown.

    >>> partition_lag(10, 7), partition_lag(1, 309)
    (3, None)
    """
    return end - position if end >= position else None


def consumer_lag(conn: KafkaConnection, group_id: str, topic: str, timeout_s: float = 15) -> dict[int, int | None]:
    """Records not yet committed by ``group_id``, per partition of ``topic``.

    Lag is the log-end offset minus the group's committed offset; a partition the group
    never committed counts from the earliest retained offset. For visibility only: Bytewax
    flows track their position in recovery snapshots, not in group commits. A partition
    whose reported log end is below the committed offset has lag None (unknown; see
    `partition_lag`), never a negative number.

    >>> consumer_lag(KafkaConnection("127.0.0.1:19092"), "recallflow", "events")  # doctest: +SKIP
    {0: 0, 1: 3, 2: 0}
    """
    admin = AdminClient(client(conn))
    parts = topic_partitions(admin, topic, timeout_s)
    tps = [TopicPartition(topic, p) for p in parts]
    # A consumer that is given a group id but never subscribes does not join the group;
    # it only reads the group's committed offsets.
    consumer = Consumer(client(conn, {"group.id": group_id, "enable.auto.commit": "false"}))
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
    lag = {p: partition_lag(ends[p], starts[p] if p in starts else committed[p]) for p in parts}
    log_call("consumer_lag", group_id=group_id, topic=topic, lag=lag)
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
