"""`recallflow replay` twice on the same archive: output files hold each record once, and the
summary adds up (lines read = events + dead letters + duplicates)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from flows.runtime import close_stores

LINES = [
    {
        "event_id": "r1",
        "session_id": "s1",
        "tenant_id": "acme",
        "ts": "2026-01-01T10:00:00Z",
        "text": "我的订单 12345 还没到",
    },
    {
        "event_id": "r2",
        "session_id": "s1",
        "tenant_id": "acme",
        "ts": "2026-01-01T10:00:30Z",
        "speaker_role": "agent",
        "text": "好的，我帮您查一下物流",
    },
    {"event_id": "r3", "session_id": "s1", "tenant_id": "acme", "ts": "2026-01-01T10:01:00Z", "text": "什么时候能到？"},
    {"event_id": "r3", "session_id": "s1", "tenant_id": "acme", "ts": "2026-01-01T10:01:00Z", "text": "什么时候能到？"},
    {"event_id": "r2", "session_id": "s1", "tenant_id": "acme", "ts": "2026-01-01T10:01:10Z", "text": "算了"},
    {"event_id": "bad", "session_id": "s1", "ts": "9999-12-31T23:00:00-05:00", "text": "x"},
    {"kind": "session_end", "event_id": "end", "session_id": "s1", "tenant_id": "acme", "ts": "2026-01-01T10:02:00Z"},
]


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, value in {
        "EMBEDDER__KIND": "static",
        "STORE__PATH": tmp_path / "store",
        "DEADLETTER__PATH": tmp_path / "deadletter.jsonl",
        "TASK__ARCHIVED_PATH": tmp_path / "archived.jsonl",
        "TASK__STATE_LOG_PATH": tmp_path / "states.jsonl",
        "METRICS__PATH": tmp_path / "metrics.jsonl",
        "RECALL__SKIP_VERIFICATION": "true",
    }.items():
        monkeypatch.setenv(f"RECALLFLOW_{name}", str(value))
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path


def _replay(archive: Path) -> dict[str, str]:
    result = CliRunner().invoke(app, ["replay", str(archive)])
    close_stores()
    assert result.exit_code == 0, result.output
    rows = dict(re.findall(r"│ ([a-z][a-z -]+?)\s+│\s+(.+?) │", result.output))
    return rows


def _keys(path: Path, *fields: str) -> Counter[tuple[object, ...]]:
    return Counter(tuple(json.loads(line).get(f) for f in fields) for line in path.read_text().splitlines())


def test_replay_twice_writes_each_record_once_and_the_summary_adds_up(env: Path) -> None:
    archive = env / "in.jsonl"
    archive.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in LINES))
    first = _replay(archive)
    assert first["lines read"] == "7"
    assert first["events processed"] == "4"  # r1 r2 r3 + the session end
    assert first["duplicates dropped"] == "1"
    assert first["dead letters"] == "duplicate_event: 1, validation: 1"
    files = {
        "recall.jsonl": ("tenant_id", "session_id", "query_event_id"),
        "response_requests.jsonl": ("kind", "session_id", "request_id", "event_id"),
        "deadletter.jsonl": ("step", "source"),
        "archived.jsonl": ("session_id", "task_id"),
        "metrics.jsonl": ("window_start", "revision"),
    }
    before = {name: _keys(env / name, *key) for name, key in files.items()}
    assert sum(before["recall.jsonl"].values()) >= 2
    assert sum(before["deadletter.jsonl"].values()) == 2
    second = _replay(archive)
    assert second["lines read"] == first["lines read"]
    for name, key in files.items():
        after = _keys(env / name, *key)
        assert after == before[name], name
        assert max(after.values()) == 1, name
