"""`recallflow state --session X` after `run` finds the state `run` mirrored to Redis, with
Redis left at its default (no REDIS__ENABLED needed)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from schemas.session import SessionState
from sinks.redis.state_mirror import RedisStateMirror

pytestmark = pytest.mark.integration


def test_auto_source_reads_the_redis_mirror_by_default(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = f"auto-{datetime.now(tz=UTC).timestamp()}"
    state = SessionState(
        session_id=session,
        task_id="TSK-2026-01-abcdef",
        current_stage="tracking",
        intent_chain=("query_logistics",),
        turn_count=3,
        last_event_id="e3",
        last_event_ts=datetime(2026, 1, 1, tzinfo=UTC),
    )
    mirror = RedisStateMirror(redis_url, ttl_s=60)
    mirror.write([state])
    monkeypatch.delenv("RECALLFLOW_REDIS__ENABLED", raising=False)
    monkeypatch.setenv("RECALLFLOW_REDIS__URL", redis_url)
    monkeypatch.setenv("RECALLFLOW_TASK__STATE_LOG_PATH", str(tmp_path / "none.jsonl"))
    monkeypatch.setenv("RECALLFLOW_TASK__ARCHIVED_PATH", str(tmp_path / "archived.jsonl"))
    result = CliRunner().invoke(app, ["state", "--session", session], env={"COLUMNS": "220"})
    assert result.exit_code == 0, result.output
    assert "TSK-2026-01-abcdef" in result.output
    assert redis_url in " ".join(result.output.split())
