"""Kill the running flow by PID mid-stream and resume: nothing lost, nothing duplicated, state resumed.

`recallflow run` runs as a subprocess from the real broker with recovery on (snapshots every
0.3 s), consuming at a set rate so the stream is still flowing when it is killed with
SIGKILL. The same command then resumes from the last snapshot and runs to the end of the
topic. The store must hold exactly the memories of an uninterrupted run (same ids, same
payloads), and each session's task state in Redis must have continued (turn count over
the whole session, same task id), not restarted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis

from flows.cli.ops import kafka_connection
from flows.io import paced_file_input
from flows.runtime import output_topics
from flows.settings import Settings
from sinks.kafka.admin import create_topics, produce_jsonl, read_topic
from tests.integration.streams import cli, config, kill_mid_stream, make_archive, run_flow, store_contents

pytestmark = pytest.mark.integration

SESSIONS, TURNS = 4, 40


def test_kill_and_resume_loses_nothing_and_duplicates_nothing(
    kafka_bootstrap: str, redis_url: str, tmp_path: Path
) -> None:
    cfg = config(
        tmp_path,
        kafka_bootstrap,
        redis_url,
        recovery={"enabled": True, "dir": str(tmp_path / "recovery"), "snapshot_interval_s": 0.3},
    )
    settings = Settings(**cfg)
    archive = tmp_path / "events.jsonl"
    events = make_archive(archive, sessions=SESSIONS, turns=TURNS, tag=cfg["kafka"]["group_id"], bad_lines=0)
    create_topics(kafka_connection(settings), output_topics(settings), partitions=4)
    produce_jsonl(kafka_connection(settings), settings.kafka.input_topic, archive)

    # Paced so that the stream outlasts the wait for the first memories by far (160 events take 32 s):
    # the kill must land mid-stream however fast the flow is.
    seen, before_kill = kill_mid_stream(cfg, tmp_path, rate=5, at_least=25)
    assert seen >= 25
    # Killed mid-stream: some events have no memory yet (memories are units, several per event).
    assert len(before_kill) < len(events), "the flow finished before it was killed; nothing was tested"

    second = cli(["run", "--until-end"], cfg, tmp_path, tmp_path / "run2.log")
    assert second.wait(timeout=300) == 0, (tmp_path / "run2.log").read_text()[-3000:]

    # The uninterrupted run of the same events, for reference.
    reference = Settings(
        **{
            **cfg,
            "store": {"path": str(tmp_path / "reference")},
            "redis": {"enabled": False},
            "recovery": {"enabled": False},
        }
    )
    run_flow(reference, paced_file_input(archive, None), mode="replay")
    expected = store_contents(reference)

    resumed = store_contents(settings)
    # Nothing lost, nothing duplicated (ids are deterministic): the same units as an uninterrupted run.
    assert {p["event_id"] for p in resumed.values()} == {e["event_id"] for e in events}
    assert len(resumed) == len(expected)
    assert resumed == expected

    # The memory topic is at-least-once: after the kill some records may come twice, never missing.
    produced = [
        json.loads(v)["memory_id"] for _, v in read_topic(kafka_connection(settings), settings.kafka.memory_topic)
    ]
    assert set(produced) == set(expected)

    # Task state resumed from the snapshot: counts run over the whole session.
    client = redis.Redis.from_url(cfg["redis"]["url"])
    try:
        for s in range(SESSIONS):
            session = f"{cfg['kafka']['group_id']}-s{s}"
            raw = client.get(f"task_state:{session}")
            assert raw is not None, session
            state = json.loads(raw)
            assert state["turn_count"] == TURNS
            assert state["last_event_id"] == f"{session}-t{TURNS - 1}"
            first_task = next(p["task_id"] for p in expected.values() if p["event_id"] == f"{session}-t0")
            # The resumed task is the one the first run opened (archived once the input ran out).
            assert first_task in [state["task_id"], *(t["task_id"] for t in state["previous_tasks"])]
    finally:
        client.delete(*[f"task_state:{cfg['kafka']['group_id']}-s{s}" for s in range(SESSIONS)])
        prefix = cfg["metrics"]["redis_prefix"]
        client.delete(f"{prefix}:windows", *client.keys(f"{prefix}:window:*"))
        client.close()
