"""The CLI's failures: one or two lines with the fix, a traceback only with --debug."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException

from flows.cli import main
from flows.cli.errors import DEBUG_ENV, describe
from schemas.errors import BrokerError, ConfigurationError, StoreError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _no_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    # setenv (not delenv) so that whatever a command sets is undone after the test
    monkeypatch.setenv(DEBUG_ENV, "0")
    monkeypatch.setenv("RECALLFLOW_KAFKA__LOG_LEVEL", "2")


def test_broker_unreachable_is_one_line_and_the_fix() -> None:
    failure = describe(KafkaException(KafkaError(KafkaError._TRANSPORT, "Failed to get metadata")))
    assert "unreachable" in failure.message
    assert "infra/services.sh up" in (failure.fix or "")
    assert len(failure.lines()) == 2


def test_unknown_topic_says_how_to_create_it() -> None:
    failure = describe(BrokerError("Kafka topic 'nope' does not exist or is unreadable (None)"))
    assert "'nope'" in failure.message
    assert "recallflow topics create" in (failure.fix or "")


def test_an_error_wrapped_by_the_dataflow_runtime_is_found_in_its_chain() -> None:
    try:
        try:
            raise BrokerError("Kafka topic 'nope' does not exist or is unreadable (None)")
        except BrokerError as inner:
            raise RuntimeError("(src/worker.rs:149:10): error building production dataflow") from inner
    except RuntimeError as wrapped:
        failure = describe(wrapped)
    assert failure.message.startswith("Kafka topic 'nope' does not exist")
    assert failure.exit_code == 3


def test_a_locked_store_names_serve_and_the_setting() -> None:
    failure = describe(StoreError("qdrant-edge load failed: Can't init WAL: Kind(WouldBlock)"))
    assert "locked by another process" in failure.message
    assert "serve" in (failure.fix or "")
    assert "RECALLFLOW_STORE__PATH" in (failure.fix or "")


def test_configuration_and_unexpected_errors() -> None:
    assert describe(ConfigurationError("unknown backend 'x'")).exit_code == 2
    unexpected = describe(RuntimeError("boom\nsecond line\nthird"))
    assert unexpected.message == "unexpected error: RuntimeError: boom"
    assert "--debug" in (unexpected.fix or "")


HOLD = """
import sys, time
from pathlib import Path
from sinks.store.qdrant_edge import QdrantEdgeStore
store = QdrantEdgeStore(Path(sys.argv[1]))
store.ensure_collection(8)
print("held", flush=True)
time.sleep(120)
"""


@pytest.fixture
def held_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An embedded store held by another process, as a running `recallflow serve` holds it."""
    path = tmp_path / "store"
    monkeypatch.setenv("RECALLFLOW_STORE__PATH", str(path))
    monkeypatch.setenv("RECALLFLOW_EMBEDDER__KIND", "static")
    monkeypatch.setenv("RECALLFLOW_REDIS__ENABLED", "false")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path / "edge")],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        yield path
    finally:
        holder.kill()
        holder.wait()


def test_recall_on_a_store_held_by_another_process_is_two_lines(
    held_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["recall", "where is my parcel?", "--tenant", "acme"])
    err = capsys.readouterr().err
    assert ended.value.code == 4
    assert "locked by another process" in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 2


def test_replay_into_a_store_held_by_serve_is_two_lines(
    held_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RECALLFLOW_DEADLETTER__PATH", str(tmp_path / "var" / "deadletter.jsonl"))
    monkeypatch.setenv("RECALLFLOW_TASK__STATE_LOG_PATH", str(tmp_path / "var" / "task_states.jsonl"))
    monkeypatch.setenv("RECALLFLOW_TASK__ARCHIVED_PATH", str(tmp_path / "var" / "archived_tasks.jsonl"))
    with pytest.raises(SystemExit) as ended:
        main(["replay", str(ROOT / "examples" / "demo.jsonl")])
    err = capsys.readouterr().err
    assert ended.value.code == 4
    assert len(err.strip().splitlines()) == 2, err
    assert "stop the running `recallflow serve`" in err


def test_debug_shows_the_traceback(held_store: Path) -> None:
    with pytest.raises(StoreError, match="WouldBlock"):
        main(["--debug", "recall", "where is my parcel?"])
    assert os.environ[DEBUG_ENV] == "1"


def test_a_bad_at_time_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["recall", "hi", "--at", "not a time"])
    err = capsys.readouterr().err
    assert ended.value.code == 2
    assert "'not a time' is not an ISO 8601 time" in err
    assert "Traceback" not in err


def test_an_unreachable_broker_prints_no_librdkafka_lines() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECALLFLOW_")}
    env |= {"PYTHONPATH": str(ROOT), "RECALLFLOW_KAFKA__BOOTSTRAP_SERVERS": "127.0.0.1:9", "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-m", "flows.cli", "topics", "list"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 3, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("Kafka broker at 127.0.0.1:9 is unreachable"), done.stderr
    assert len(lines) == 2, done.stderr
    assert "rdkafka" not in done.stderr + done.stdout
