"""Replay starts a broker does not answer well: an offset past a partition's end, a start time
after every record. Each replay ends (with a warning) and replays exactly what it should."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import bytewax.operators as op
import pytest
from bytewax.dataflow import Dataflow
from bytewax.testing import TestingSink, run_main

from schemas.raw import RawRecord
from sinks.kafka.admin import KafkaConnection, create_topics, produce_jsonl
from sinks.kafka.source import KafkaReplaySource, Start, TransportError

pytestmark = pytest.mark.integration


def _replay(conn: KafkaConnection, topic: str, start: Start) -> tuple[list[RawRecord | TransportError], float]:
    out: list[RawRecord | TransportError] = []
    flow = Dataflow("edges")
    source = KafkaReplaySource(conn.client_config(), topic, start=start, tail=False)
    op.output("out", op.input("in", flow, source), TestingSink(out))
    started = time.monotonic()
    run_main(flow)
    return out, time.monotonic() - started


@pytest.fixture
def topic(kafka_conn: KafkaConnection, topic_name: Callable[[str], str], tmp_path: Path) -> str:
    name = topic_name("edges")
    create_topics(kafka_conn, [name], partitions=2)
    path = tmp_path / "few.jsonl"
    path.write_text("".join(json.dumps({"session_id": f"s{i}", "n": i}) + "\n" for i in range(6)))
    assert produce_jsonl(kafka_conn, name, path).sent == 6
    return name


def test_an_offset_past_the_end_replays_nothing_and_ends_with_a_warning(
    kafka_conn: KafkaConnection, topic: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="sinks.kafka.source"):
        out, elapsed = _replay(kafka_conn, topic, 50)
    assert out == []
    assert elapsed < 30
    assert sum("nothing more to replay" in r.getMessage() for r in caplog.records) == 2  # one per partition


def test_a_start_time_after_every_record_replays_nothing(kafka_conn: KafkaConnection, topic: str) -> None:
    out, _ = _replay(kafka_conn, topic, datetime.now(tz=UTC) + timedelta(hours=1))
    assert out == []


def test_a_start_time_before_every_record_replays_everything(kafka_conn: KafkaConnection, topic: str) -> None:
    out, _ = _replay(kafka_conn, topic, datetime.now(tz=UTC) - timedelta(hours=1))
    assert sorted(json.loads(r.payload)["n"] for r in out if isinstance(r, RawRecord)) == list(range(6))
