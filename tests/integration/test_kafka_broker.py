"""sinks.kafka.admin against a real broker, and Bytewax's Kafka connector reading what it wrote.

The connection-settings tests at the top need no broker and carry no marker; everything
else is `integration` and needs `infra/services.sh up` (or RECALLFLOW_KAFKA__BOOTSTRAP_SERVERS).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from bytewax import operators as op
from bytewax.connectors.kafka import KafkaError, KafkaSource, KafkaSourceMessage
from bytewax.dataflow import Dataflow
from bytewax.testing import TestingSink, cluster_main, run_main
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from schemas.errors import BrokerError, ConfigurationError
from sinks.kafka.admin import (
    KafkaConnection,
    ProduceReport,
    consumer_lag,
    create_topics,
    produce_jsonl,
    read_topic,
)

TopicName = Callable[[str], str]

# Three sessions interleaved, one line that is not JSON, one without a session id, one
# JSON array, one blank line (skipped) and one line that is not UTF-8 (sent unkeyed).
_LINES: list[bytes] = [
    b'{"session_id": "s1", "turn": 1, "text": "hello"}',
    b'{"session_id": "s2", "turn": 1, "text": "bonjour"}',
    b'{"session_id": "s1", "turn": 2, "text": "again"}',
    b"{not json",
    b'{"session_id": "s3", "turn": 1, "text": "\\u4f60\\u597d"}',
    b'{"turn": 9, "text": "no session"}',
    b'["s1"]',
    b"",
    b'{"session_id": "s2", "turn": 2, "text": "encore"}',
    b'{"session_id": "s1", "turn": 3, "text": "\xff\xfe bad utf-8"}',
    b'{"session_id": "s1", "turn": 4, "text": "last"}',
]
_SENT = [line for line in _LINES if line.strip()]


def _expected_key(line: bytes) -> bytes | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    session = record.get("session_id") if isinstance(record, dict) else None
    return session.encode() if isinstance(session, str) else None


def _write_jsonl(path: Path) -> Path:
    path.write_bytes(b"\n".join(_LINES) + b"\n")
    return path


def _by_key(records: list[tuple[bytes | None, bytes]]) -> dict[bytes | None, list[bytes]]:
    grouped: dict[bytes | None, list[bytes]] = {}
    for key, value in records:
        grouped.setdefault(key, []).append(value)
    return grouped


def _config(conn: KafkaConnection, **extra: str) -> dict[str, str | int | float | bool]:
    return {**conn.client_config(), **extra}


def _topic_exists(bootstrap: str, topic: str) -> bool:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    return topic in admin.list_topics(timeout=10).topics


# --- connection settings (no broker) ----------------------------------------------------


def test_client_config_carries_sasl_and_tls_settings() -> None:
    conn = KafkaConnection(
        "b1:9093,b2:9093",
        security_protocol="SASL_SSL",
        sasl_mechanism="SCRAM-SHA-512",
        sasl_username="svc",
        sasl_password="s3cret",
        ssl_ca_location="/etc/ca.pem",
    )
    assert conn.client_config() == {
        "bootstrap.servers": "b1:9093,b2:9093",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "svc",
        "sasl.password": "s3cret",
        "ssl.ca.location": "/etc/ca.pem",
    }
    assert "s3cret" not in repr(conn)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"bootstrap_servers": " "}, "empty"),
        ({"bootstrap_servers": "b:9092", "security_protocol": "plaintext"}, "security_protocol"),
        ({"bootstrap_servers": "b:9092", "security_protocol": "SASL_SSL"}, "sasl_mechanism"),
        ({"bootstrap_servers": "b:9092", "sasl_username": "u", "sasl_password": "p"}, "SASL settings"),
    ],
)
def test_connection_rejects_inconsistent_settings(kwargs: dict[str, str], match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        KafkaConnection(**kwargs)


@pytest.mark.parametrize(
    ("names", "partitions", "match"),
    [
        ("one-string", 1, "sequence"),
        ([], 1, "non-empty"),
        (["ok", ""], 1, "non-empty"),
        (["ok"], 0, ">= 1"),
    ],
)
def test_create_topics_rejects_bad_arguments(names: list[str], partitions: int, match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        create_topics(KafkaConnection("127.0.0.1:1"), names, partitions=partitions)


# --- against the broker -----------------------------------------------------------------


@pytest.mark.integration
def test_create_topics_is_idempotent(kafka_conn: KafkaConnection, topic_name: TopicName) -> None:
    a, b = topic_name("idem-a"), topic_name("idem-b")

    assert create_topics(kafka_conn, [a], partitions=3) == [a]
    # Second call: `a` exists (not an error, not reported), `b` is new; duplicates collapse.
    assert create_topics(kafka_conn, [a, b, b], partitions=2) == [b]
    assert create_topics(kafka_conn, [a, b], partitions=2) == []

    topics = AdminClient(_config(kafka_conn)).list_topics(timeout=10).topics
    assert sorted(topics[a].partitions) == [0, 1, 2]
    assert sorted(topics[b].partitions) == [0, 1]


@pytest.mark.integration
def test_produce_jsonl_then_read_topic_round_trips_with_keys(
    kafka_conn: KafkaConnection, topic_name: TopicName, tmp_path: Path
) -> None:
    topic = topic_name("roundtrip")
    create_topics(kafka_conn, [topic], partitions=3)

    report = produce_jsonl(kafka_conn, topic, _write_jsonl(tmp_path / "events.jsonl"))

    unkeyed = sum(_expected_key(line) is None for line in _SENT)
    assert report == ProduceReport(topic=topic, sent=len(_SENT), unkeyed=unkeyed, blank=1)
    records = read_topic(kafka_conn, topic, timeout_s=30)
    # Raw bytes, line ending stripped, nothing re-encoded (the invalid UTF-8 line included).
    assert sorted(records, key=repr) == sorted(((_expected_key(v), v) for v in _SENT), key=repr)
    # One key, one partition: each session's records come back in file order.
    got = _by_key(records)
    for key in (b"s1", b"s2", b"s3"):
        assert got[key] == [line for line in _SENT if _expected_key(line) == key]


@pytest.mark.integration
def test_produce_jsonl_refuses_a_missing_topic_without_creating_it(
    kafka_conn: KafkaConnection, kafka_bootstrap: str, topic_name: TopicName, tmp_path: Path
) -> None:
    topic = topic_name("missing")
    with pytest.raises(BrokerError, match="does not exist"):
        produce_jsonl(kafka_conn, topic, _write_jsonl(tmp_path / "events.jsonl"))
    assert not _topic_exists(kafka_bootstrap, topic)


@pytest.mark.integration
def test_a_record_over_the_size_limit_is_reported_and_the_rest_is_sent(
    kafka_conn: KafkaConnection, topic_name: TopicName, tmp_path: Path
) -> None:
    topic = topic_name("too-big")
    create_topics(kafka_conn, [topic], partitions=1)
    path = tmp_path / "big.jsonl"
    small = [json.dumps({"session_id": "s1", "n": i}).encode() for i in range(4)]
    # Over librdkafka's default message.max.bytes (1 MB): refused before it leaves the client.
    big = json.dumps({"session_id": "s1", "text": "x" * 2_000_000}).encode()
    path.write_bytes(b"\n".join([small[0], small[1], big, small[2], small[3]]) + b"\n")

    report = produce_jsonl(kafka_conn, topic, path)

    assert report.sent == 4
    [reason] = report.rejected
    assert reason.startswith(f"{path}:3: not sent:")
    assert "message size limit" in reason
    assert [value for _, value in read_topic(kafka_conn, topic, timeout_s=30)] == small


@pytest.mark.integration
def test_read_topic_refuses_a_missing_topic_without_creating_it(
    kafka_conn: KafkaConnection, kafka_bootstrap: str, topic_name: TopicName
) -> None:
    topic = topic_name("missing")
    with pytest.raises(BrokerError, match="does not exist"):
        read_topic(kafka_conn, topic, timeout_s=10)
    assert not _topic_exists(kafka_bootstrap, topic)


@pytest.mark.integration
def test_read_topic_of_an_empty_topic_is_empty(kafka_conn: KafkaConnection, topic_name: TopicName) -> None:
    topic = topic_name("empty")
    create_topics(kafka_conn, [topic], partitions=2)
    assert read_topic(kafka_conn, topic, timeout_s=30) == []


@pytest.mark.integration
def test_consumer_lag_counts_what_the_group_has_not_committed(
    kafka_conn: KafkaConnection, topic_name: TopicName
) -> None:
    topic, group = topic_name("lag"), topic_name("group")
    create_topics(kafka_conn, [topic], partitions=2)
    producer = Producer(_config(kafka_conn))
    for i in range(5):
        producer.produce(topic, value=b"v%d" % i, partition=0)
        # One request per record: Tansu 0.6 reports the log end of a partition as the base
        # offset of its last batch + 1, so a multi-record batch would under-report the end.
        assert producer.flush(10) == 0

    assert consumer_lag(kafka_conn, group, topic) == {0: 5, 1: 0}

    consumer = Consumer(_config(kafka_conn, **{"group.id": group, "enable.auto.commit": "false"}))
    try:
        consumer.commit(offsets=[TopicPartition(topic, 0, 2)], asynchronous=False)
    finally:
        consumer.close()
    assert consumer_lag(kafka_conn, group, topic) == {0: 3, 1: 0}


def _kafka_flow(flow_id: str, conn: KafkaConnection, topic: str, out: list[tuple[bytes | None, bytes]]) -> Dataflow:
    """Topic -> (key, value) -> TestingSink, ending at the end of the topic (tail=False)."""
    flow = Dataflow(flow_id)
    source = KafkaSource(
        [conn.bootstrap_servers],
        [topic],
        tail=False,
        # session.timeout.ms bounds a consumer-group join; KafkaSource assigns partitions
        # itself and never joins, but a low value keeps any accidental join short.
        add_config={**conn.client_config(), "session.timeout.ms": "6000"},
    )
    messages = op.input("kafka_in", flow, source)

    def key_value(
        msg: KafkaSourceMessage[bytes | None, bytes | None] | KafkaError[bytes | None, bytes | None],
    ) -> tuple[bytes | None, bytes]:
        # raise_on_errors=True (the default) makes the source raise instead of emitting these.
        if isinstance(msg, KafkaError):
            pytest.fail(f"KafkaSource emitted an error: {msg.err}")
        return (msg.key, msg.value or b"")

    op.output("out", op.map("key_value", messages, key_value), TestingSink(out))
    return flow


@pytest.mark.integration
@pytest.mark.parametrize("workers", [1, 2])
def test_bytewax_kafka_source_reads_what_produce_jsonl_wrote(
    kafka_conn: KafkaConnection, topic_name: TopicName, tmp_path: Path, workers: int
) -> None:
    topic = topic_name("bytewax")
    create_topics(kafka_conn, [topic], partitions=3)
    produce_jsonl(kafka_conn, topic, _write_jsonl(tmp_path / "events.jsonl"))
    out: list[tuple[bytes | None, bytes]] = []
    flow = _kafka_flow("kafka_round_trip", kafka_conn, topic, out)

    # Returns only because tail=False ends each partition at its end.
    if workers == 1:
        run_main(flow)
    else:
        cluster_main(flow, [], 0, worker_count_per_proc=workers)

    assert sorted(out, key=repr) == sorted(((_expected_key(v), v) for v in _SENT), key=repr)
    got = _by_key(out)
    for key in (b"s1", b"s2", b"s3"):
        assert got[key] == [line for line in _SENT if _expected_key(line) == key]
