"""`recallflow run` against a real broker: a live line while it runs, and Ctrl-C stops it cleanly
with the summary table (no traceback); the next run continues from the committed offsets."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from flows.runtime import output_topics
from flows.settings import Settings
from sinks.kafka.admin import KafkaConnection, create_topics, produce_jsonl
from tests.integration.streams import cli, config, make_archive, store_contents

pytestmark = pytest.mark.integration


def test_ctrl_c_stops_run_with_its_summary_and_a_restart_continues(
    tmp_path: Path, kafka_bootstrap: str, redis_url: str
) -> None:
    cfg = config(tmp_path, kafka_bootstrap, redis_url, redis={"enabled": False}, metrics={"enabled": False})
    settings = Settings(**cfg)
    conn = KafkaConnection(kafka_bootstrap)
    create_topics(conn, output_topics(settings), partitions=2)
    archive = tmp_path / "events.jsonl"
    events = make_archive(archive, sessions=2, turns=4, tag=cfg["kafka"]["group_id"], bad_lines=1)
    produce_jsonl(conn, settings.kafka.input_topic, archive)

    log = tmp_path / "run.log"
    proc = cli(["run"], cfg, tmp_path, log)
    try:
        deadline = time.monotonic() + 180
        states = Path(settings.deadletter.path)  # the bad line's dead letter: the flow is running
        while not (states.exists() and states.stat().st_size > 0):
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        time.sleep(3)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out = log.read_text()
    assert f"run on {settings.kafka.input_topic}" in out
    assert "events processed" in out
    assert "dead letters" in out
    assert "stopped: the next `recallflow run` continues" in out
    assert "Traceback" not in out
    assert "panicked" not in out

    # A restart reads on from the committed offsets: every event stored, none lost.
    again = cli(["run", "--until-end"], cfg, tmp_path, tmp_path / "run2.log")
    assert again.wait(timeout=240) == 0, (tmp_path / "run2.log").read_text()[-3000:]
    stored = {p["event_id"] for p in store_contents(settings).values()}
    assert {e["event_id"] for e in events} <= stored


@pytest.mark.parametrize("command", [["run"], ["replay", "--topic", "recallflow-it-missing"]])
def test_a_missing_topic_is_two_lines_with_the_fix(
    tmp_path: Path, kafka_bootstrap: str, redis_url: str, command: list[str]
) -> None:
    cfg = config(tmp_path, kafka_bootstrap, redis_url, redis={"enabled": False})
    log = tmp_path / "missing.log"
    proc = cli(command, cfg, tmp_path, log)
    assert proc.wait(timeout=120) == 3, log.read_text()
    lines = log.read_text().strip().splitlines()
    assert lines[-2].startswith("Kafka topic "), lines
    assert "does not exist" in lines[-2]
    assert lines[-1].startswith("fix: create the flow's topics with `recallflow topics create`")
    assert "Traceback" not in log.read_text()
    assert "panicked" not in log.read_text()
