"""`recallflow state --session ID` over what a replay wrote (state log and archived tasks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from sinks.files.jsonl_sink import JsonlSink
from tests.fixtures.task_support import turn_event


@pytest.fixture
def replayed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    log, arch = tmp_path / "states.jsonl", tmp_path / "archived.jsonl"
    events = [
        turn_event(1, "帮我查一下订单DD20261130001的物流到哪了"),
        turn_event(2, "顺便帮我取消这个订单", minutes=1),
        turn_event(3, "帮我查上个月账单", minutes=30),
    ]
    from bytewax.testing import TestingSink, TestingSource, run_main

    from flows.build import build_flow
    from flows.io import OutputSpec, SourceInput
    from flows.settings import Settings
    from tests.fixtures.task_support import HashingEmbedder, raw

    settings = Settings(task={"archive_on_eof": False})
    spec = OutputSpec(
        deadletters=[],
        memory_points=[],
        states=[JsonlSink(log)],
        archived=[JsonlSink(arch)],
        memory_units=[TestingSink([])],
    )
    run_main(
        build_flow(settings, SourceInput(TestingSource([raw(e) for e in events])), spec, embedder=HashingEmbedder())
    )
    monkeypatch.setenv("RECALLFLOW_TASK__STATE_LOG_PATH", str(log))
    monkeypatch.setenv("RECALLFLOW_TASK__ARCHIVED_PATH", str(arch))
    monkeypatch.setenv("RECALLFLOW_REDIS__ENABLED", "false")
    return log, arch


def test_state_command_prints_the_current_task(replayed: tuple[Path, Path]) -> None:
    result = CliRunner().invoke(app, ["state", "--session", "s1"], env={"COLUMNS": "220"})
    assert result.exit_code == 0, result.output
    assert "current_stage" in result.output
    assert "account" in result.output
    assert "archived tasks" in result.output
    assert "timeout" in result.output
    assert "DD20261130001" in result.output


def test_state_command_json(replayed: tuple[Path, Path]) -> None:
    result = CliRunner().invoke(app, ["state", "--session", "s1", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["state"]["current_stage"] == "account"
    assert [a["final_state"]["current_stage"] for a in doc["archived"]] == ["cancellation"]
    assert "goal_vector" not in doc["state"]


def test_state_command_for_an_unknown_session(replayed: tuple[Path, Path]) -> None:
    result = CliRunner().invoke(app, ["state", "--session", "nobody"])
    assert result.exit_code == 0
    assert "no task state" in result.output


def test_state_command_reports_an_unreachable_redis(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECALLFLOW_REDIS__URL", "redis://127.0.0.1:1/15")
    monkeypatch.setenv("RECALLFLOW_REDIS__TIMEOUT_S", "0.2")
    result = CliRunner().invoke(app, ["state", "--session", "s1", "--source", "redis"])
    assert result.exit_code == 2
    assert "redis mirror read failed" in result.output


def test_auto_source_falls_back_to_the_state_log_when_redis_does_not_answer(
    replayed: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.delenv("RECALLFLOW_REDIS__ENABLED")  # the default: `run` mirrors to Redis
    monkeypatch.setenv("RECALLFLOW_REDIS__URL", f"redis://127.0.0.1:{port}/15")
    monkeypatch.setenv("RECALLFLOW_REDIS__TIMEOUT_S", "0.2")
    result = CliRunner().invoke(app, ["state", "--session", "s1"], env={"COLUMNS": "220"})
    assert result.exit_code == 0, result.output
    assert "current_stage" in result.output
    only_redis = CliRunner().invoke(app, ["state", "--session", "s1", "--source", "redis"])
    assert only_redis.exit_code == 2
    missing = CliRunner().invoke(app, ["state", "--session", "nobody"], env={"COLUMNS": "220"})
    assert "not answering" in missing.output
    assert "states.jsonl" in missing.output
