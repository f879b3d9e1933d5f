"""1 worker vs 2 workers (-w 2) vs 2 processes (-i/-a on 127.0.0.1) give the same memories.

All three consume the same input topic (4 partitions >= processes x workers) with their own
consumer group and their own memory topic. The embedded store is one directory per
process (an Edge shard cannot be opened by two processes), so each process of the cluster
writes its own store; their union must equal the single-worker store, disjointly (each
session lives on exactly one worker). The memory topics must carry the same records.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from flows.build import build_flow
from flows.cli.ops import kafka_client_config, kafka_connection
from flows.io import KafkaReplayInput
from flows.runtime import close_stores, embedder_for, execute, output_topics, outputs_for, state_mirror_for
from flows.settings import Settings
from sinks.kafka.admin import create_topics, produce_jsonl, read_topic
from tests.integration.streams import cli, config, make_archive, run_flow, store_contents

pytestmark = pytest.mark.integration


def _free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _variant(base: dict[str, Any], tmp: Path, name: str) -> dict[str, Any]:
    kafka = {
        **base["kafka"],
        "group_id": f"{base['kafka']['group_id']}-{name}",
        "memory_topic": f"{base['kafka']['memory_topic']}-{name}",
    }
    return {
        **base,
        "kafka": kafka,
        "store": {"path": str(tmp / name / "store")},
        "metrics": {**base["metrics"], "path": str(tmp / name / "metrics.jsonl")},
        "deadletter": {"path": str(tmp / name / "dead.jsonl")},
        "redis": {"enabled": False},
    }


def _source(settings: Settings) -> KafkaReplayInput:
    return KafkaReplayInput(
        kafka_client_config(settings),
        settings.kafka.input_topic,
        start="committed",
        tail=False,
        group_id=settings.kafka.group_id,
    )


def _memory_topic(settings: Settings) -> dict[str, bytes]:
    import json

    records = read_topic(kafka_connection(settings), settings.kafka.memory_topic)
    return {json.loads(v)["memory_id"]: v for _, v in records}


def test_one_worker_two_workers_and_two_processes_agree(kafka_bootstrap: str, redis_url: str, tmp_path: Path) -> None:
    base = config(tmp_path, kafka_bootstrap, redis_url)
    archive = tmp_path / "events.jsonl"
    # Sessions go to processes by a hash of their id, which carries this run's tag: with 8 sessions
    # all of them landed in one process about once in 128 runs; with 16 it is once in ~32,000.
    events = make_archive(archive, sessions=16, turns=3, tag=base["kafka"]["group_id"], bad_lines=1)
    variants = {name: _variant(base, tmp_path, name) for name in ("w1", "w2", "p2")}
    for cfg in variants.values():
        create_topics(kafka_connection(Settings(**cfg)), output_topics(Settings(**cfg)), partitions=4)
    produce_jsonl(kafka_connection(Settings(**base)), base["kafka"]["input_topic"], archive)

    one = Settings(**variants["w1"])
    run_flow(one, _source(one))
    single = store_contents(one)
    assert {p["event_id"] for p in single.values()} == {e["event_id"] for e in events}

    two = Settings(**variants["w2"])
    embedder = embedder_for(two)
    outputs = outputs_for(two, "run", state_mirror_for(two, "run"), embedder)
    execute(build_flow(two, _source(two), outputs, embedder=embedder), two, workers=2)
    close_stores()
    assert store_contents(two) == single

    cluster = variants["p2"]
    addresses = [f"127.0.0.1:{p}" for p in _free_ports(2)]
    procs = []
    for i in range(2):
        cfg = {**cluster, "store": {"path": str(tmp_path / "p2" / f"store-{i}")}}
        args = ["run", "--until-end", "-i", str(i)] + [x for a in addresses for x in ("-a", a)]
        procs.append(cli(args, cfg, tmp_path, tmp_path / f"p2-{i}.log"))
    for i, proc in enumerate(procs):
        assert proc.wait(timeout=300) == 0, (tmp_path / f"p2-{i}.log").read_text()[-3000:]
    parts = [
        store_contents(Settings(**{**cluster, "store": {"path": str(tmp_path / "p2" / f"store-{i}")}}))
        for i in range(2)
    ]
    assert parts[0], "process 0 should have owned some sessions"
    assert parts[1], "process 1 should have owned some sessions"
    assert not parts[0].keys() & parts[1].keys()
    assert {**parts[0], **parts[1]} == single

    topics = [_memory_topic(Settings(**variants[name])) for name in ("w1", "w2", "p2")]
    assert topics[0] == topics[1] == topics[2]
    assert set(topics[0]) == set(single)
