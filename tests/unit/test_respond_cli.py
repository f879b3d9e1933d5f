"""`recallflow respond --file`: the embedded responder over a file of requests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from schemas.deadletter import DeadLetter
from schemas.events import UserCorrection
from schemas.memory import memory_id
from schemas.reflection import ReflectionRecord
from schemas.response import AgentResponse
from tests.fakes.fake_openai import FakeOpenAI
from tests.fakes.responder_factories import make_cue, make_request


@pytest.fixture
def server():
    srv = FakeOpenAI().start()
    yield srv
    srv.stop()


def test_respond_file_writes_responses(tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_text(
        "\n".join(
            r.model_dump_json()
            for r in [
                make_request("我的发票什么时候到？", make_cue(), n=1),
                make_request("月薪15000房贷8000每月能存多少", n=2, session_id="s2"),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "responses.jsonl"
    monkeypatch.setenv("RECALLFLOW_RESPONDER__BASE_URL", server.base_url)
    monkeypatch.setenv("RECALLFLOW_RESPONDER__MODEL", "fake-model")
    monkeypatch.setenv("RECALLFLOW_RESPONDER__RESPONSES_PATH", str(out))
    monkeypatch.setenv("RECALLFLOW_RESPONDER__REFLECTIONS_PATH", str(tmp_path / "reflections.jsonl"))
    result = CliRunner().invoke(app, ["respond", "--file", str(requests), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["requests"] == 2
    assert summary["fallback"] == 0
    responses = [AgentResponse.model_validate_json(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r.request_id, r.model) for r in responses] == [("req-1", "fake-model"), ("req-2", "calculator")]
    assert responses[0].cue_ids == ("mem-1",)


def test_respond_file_reflects_on_a_user_correction(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = memory_id("tenant-a", "s-old", "e1", 0)  # store ids are UUIDs
    question = make_request("哪天发货？", make_cue(wrong, text="订单5月14日发货"), n=1)
    correction = UserCorrection(
        event_id="c1", session_id=question.session_id, tenant_id="tenant-a", ts=question.ts, corrected_text="5月16日"
    )
    items = tmp_path / "response_requests.jsonl"  # what a replay writes: typed items, in session order
    items.write_text(question.model_dump_json() + "\n" + correction.model_dump_json() + "\n", encoding="utf-8")
    reflections = tmp_path / "reflections.jsonl"
    monkeypatch.setenv("RECALLFLOW_RESPONDER__BASE_URL", server.base_url)
    monkeypatch.setenv("RECALLFLOW_RESPONDER__MODEL", "fake-model")
    monkeypatch.setenv("RECALLFLOW_RESPONDER__RESPONSES_PATH", str(tmp_path / "responses.jsonl"))
    monkeypatch.setenv("RECALLFLOW_RESPONDER__REFLECTIONS_PATH", str(reflections))
    monkeypatch.setenv("RECALLFLOW_EMBEDDER__KIND", "static")
    monkeypatch.setenv("RECALLFLOW_STORE__PATH", str(tmp_path / "store"))
    result = CliRunner().invoke(app, ["respond", "--file", str(items), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert (summary["requests"], summary["corrections"], summary["reflections"]) == (1, 1, 1)
    [record] = [ReflectionRecord.model_validate_json(x) for x in reflections.read_text(encoding="utf-8").splitlines()]
    assert (record.previous_request_id, record.superseded_memory_ids) == ("req-1", (wrong,))


def test_respond_file_dead_letters_bad_lines(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    requests = tmp_path / "requests.jsonl"
    good = make_request("我的发票什么时候到？", make_cue(), n=1).model_dump_json()
    requests.write_bytes(b'{"kind": "request", "oops": 1}\n' + good.encode() + b"\nnot json \xff\n")
    dead = tmp_path / "dead.jsonl"
    monkeypatch.setenv("RECALLFLOW_RESPONDER__BASE_URL", server.base_url)
    monkeypatch.setenv("RECALLFLOW_RESPONDER__MODEL", "fake-model")
    monkeypatch.setenv("RECALLFLOW_RESPONDER__RESPONSES_PATH", str(tmp_path / "responses.jsonl"))
    monkeypatch.setenv("RECALLFLOW_RESPONDER__REFLECTIONS_PATH", str(tmp_path / "reflections.jsonl"))
    monkeypatch.setenv("RECALLFLOW_DEADLETTER__PATH", str(dead))
    result = CliRunner().invoke(app, ["respond", "--file", str(requests), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert (summary["requests"], summary["dead_letters"]) == (1, 2)
    letters = [DeadLetter.model_validate_json(line) for line in dead.read_text(encoding="utf-8").splitlines()]
    assert [(d.step, d.source.rsplit(":", 1)[1]) for d in letters] == [("respond.parse", "1"), ("respond.parse", "3")]
    assert letters[1].raw_bytes() == b"not json \xff"
