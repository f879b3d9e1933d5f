"""Poison records through Kafka: between valid turns, a `run` killed mid-stream and restarted,
then a replay of the topic. Every valid turn is stored exactly once, each poison record is one
dead letter, and the replay stores exactly what the live run stored.

Poison kinds: event times past the calendar (year 9999, year 10000 once in UTC, year 0 once in
UTC), an event id reused with other content, malformed JSON, no session id, a record over the
flow's size limit. Also an exact redelivery (counted, not a dead letter) and a line over the
producer's message limit (reported by `produce`, every other line still sent).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis
from typer.testing import CliRunner

from flows.cli import app
from flows.cli.ops import kafka_connection
from flows.runtime import output_topics
from flows.settings import Settings
from sinks.kafka.admin import create_topics, produce_jsonl, read_topic
from tests.integration.streams import cli, config, env_for, kill_mid_stream, make_archive, store_contents

pytestmark = pytest.mark.integration

SESSIONS, TURNS = 3, 24


def _poison(tag: str, valid: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    """(line, dead-letter error type or None when the line is no dead letter) of each extra record."""
    base = {"session_id": f"{tag}-s0", "tenant_id": "acme", "text": "poison"}
    reused = {**valid[0], "text": "a different text under the same event id"}
    return [
        (json.dumps({**base, "event_id": f"{tag}-p1", "ts": "9999-12-31T23:59:59Z"}), "validation"),
        (json.dumps({**base, "event_id": f"{tag}-p2", "ts": "9999-12-31T23:00:00-05:00"}), "validation"),
        (json.dumps({**base, "event_id": f"{tag}-p3", "ts": "0001-01-01T00:00:00+01:00"}), "validation"),
        (json.dumps(reused, ensure_ascii=False), "duplicate_event"),
        ('{"event_id": "broken', "malformed"),
        (json.dumps({"event_id": f"{tag}-p5", "ts": "2026-03-02T09:00:00Z", "text": "no session"}), "validation"),
        (
            json.dumps({**base, "event_id": f"{tag}-p6", "ts": "2026-03-02T09:00:00Z", "meta": {"x": "y" * 300_000}}),
            "oversized",
        ),
        (json.dumps(valid[1], ensure_ascii=False), None),  # an exact redelivery: counted, dropped
    ]


def _dead_letters(path: Path) -> dict[str, str]:
    """source → error type, one line per source (the file is keyed)."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    sources = [d["source"] for d in lines]
    assert len(sources) == len(set(sources)), "a record dead-lettered twice"
    return {d["source"]: d["error_type"] for d in lines}


def test_poison_between_valid_records_survives_kill_restart_and_replay(
    kafka_bootstrap: str, redis_url: str, tmp_path: Path
) -> None:
    cfg = config(
        tmp_path,
        kafka_bootstrap,
        redis_url,
        recovery={"enabled": True, "dir": str(tmp_path / "recovery"), "snapshot_interval_s": 0.3},
    )
    settings = Settings(**cfg)
    tag = cfg["kafka"]["group_id"]
    archive = tmp_path / "events.jsonl"
    valid = make_archive(archive, sessions=SESSIONS, turns=TURNS, tag=tag, bad_lines=0)
    lines = archive.read_text(encoding="utf-8").splitlines()
    poison = _poison(tag, valid)
    too_big = json.dumps({**valid[2], "event_id": f"{tag}-huge", "text": "x" * 2_000_000})
    for i, (line, _) in enumerate(poison):  # spread between the valid records
        lines.insert(5 + i * 9, line)
    lines.insert(40, too_big)
    archive.write_text("\n".join(lines) + "\n", encoding="utf-8")

    create_topics(kafka_connection(settings), output_topics(settings), partitions=3)
    report = produce_jsonl(kafka_connection(settings), settings.kafka.input_topic, archive)
    assert report.sent == len(lines) - 1  # the line over the producer's limit only is refused ...
    [refused] = report.rejected
    assert refused.startswith(f"{archive}:41:")  # ... and named

    # Slow enough (~40 s for the topic) that the kill lands mid-stream however fast the flow is.
    _, before_kill = kill_mid_stream(cfg, tmp_path, rate=2, at_least=15)
    assert len(before_kill) < len(valid), "the flow finished before it was killed; nothing was tested"
    second = cli(["run", "--until-end"], cfg, tmp_path, tmp_path / "run2.log")
    assert second.wait(timeout=300) == 0, (tmp_path / "run2.log").read_text()[-3000:]

    live = store_contents(settings)
    stored = sorted(p["event_id"] for p in live.values() if p["unit_index"] == 0)
    assert stored == sorted(e["event_id"] for e in valid)  # every valid turn, exactly once
    assert {p["event_id"]: p["source_text"] for p in live.values()}[valid[0]["event_id"]] == valid[0]["text"]

    dead = _dead_letters(Path(cfg["deadletter"]["path"]))
    assert sorted(dead.values()) == sorted(kind for _, kind in poison if kind is not None)
    on_topic = {
        json.loads(v)["source"] for _, v in read_topic(kafka_connection(settings), settings.kafka.deadletter_topic)
    }
    assert on_topic == set(dead)  # at-least-once on the topic: the same records, maybe twice

    client = redis.Redis.from_url(redis_url)
    try:
        for s in range(SESSIONS):
            state = json.loads(client.get(f"task_state:{tag}-s{s}") or b"null")
            assert state is not None
            assert state["turn_count"] == TURNS  # distinct events only: no duplicate counted
    finally:
        client.delete(*[f"task_state:{tag}-s{s}" for s in range(SESSIONS)])
        prefix = cfg["metrics"]["redis_prefix"]
        client.delete(f"{prefix}:windows", *client.keys(f"{prefix}:window:*"))
        client.close()

    # The topic replayed into a fresh store: the same memories, the same dead letters.
    replay_cfg = {
        **cfg,
        "store": {"path": str(tmp_path / "replay-store")},
        "deadletter": {"path": str(tmp_path / "replay" / "deadletter.jsonl")},
        "task": {
            "archived_path": str(tmp_path / "replay" / "archived.jsonl"),
            "state_log_path": str(tmp_path / "replay" / "states.jsonl"),
        },
        "metrics": {**cfg["metrics"], "path": str(tmp_path / "replay" / "metrics.jsonl")},
        "recovery": {"enabled": False},
        "redis": {"enabled": False},
    }
    result = CliRunner().invoke(
        app, ["replay", "--topic", settings.kafka.input_topic], env={**env_for(replay_cfg), "COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    assert store_contents(Settings(**replay_cfg)) == live
    assert _dead_letters(tmp_path / "replay" / "deadletter.jsonl") == dead
