"""A user's correction, end to end in the embedded flow: question → answer → UserCorrection →
reflection written and the wrong memory superseded in the store.

The whole flow (build_flow with the recall branch) runs on a replay; its responder items go to
the same `ResponderSink` and file handlers that embedded mode uses, the answer comes from the
fake OpenAI-compatible endpoint, and supersedes run on the real (edge) store.
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from bytewax.testing import TestingSink, TestingSource, run_main

from flows.build import build_flow
from flows.io import OutputSpec, SourceInput
from flows.recall import RecallService
from flows.respond import file_handlers
from flows.settings import Settings
from schemas.raw import RawRecord
from schemas.reflection import ReflectionRecord
from schemas.response import AgentResponse, ResponderItem
from sinks.models.embedders import load_embedder
from sinks.respond.responder import CorrectionOutcome, Outcome
from sinks.respond.runner import ResponderRunner, ResponderSink
from sinks.store.supersede import SupersedeExecutor
from state.recall.config import tables_file
from tests.fakes.fake_openai import FakeOpenAI
from tests.fakes.responder_factories import make_responder
from tests.recall_support import fill_store, unit

EMB = load_embedder("static")
T = datetime(2026, 6, 10, 9, tzinfo=UTC)


@pytest.fixture
def server():
    srv = FakeOpenAI().start()
    yield srv
    srv.stop()


def _record(i: int, doc: dict[str, Any]) -> RawRecord:
    base = {
        "event_id": f"ev{i}",
        "tenant_id": "acme",
        "user_id": "u1",
        "ts": (T + timedelta(seconds=10 * i)).isoformat(),
    }
    return RawRecord(source=f"test:{i}", payload=json.dumps(base | doc, ensure_ascii=False).encode())


def _turn(i: int, role: str, text: str, session: str = "s-new") -> RawRecord:
    return _record(i, {"session_id": session, "speaker_role": role, "text": text})


def _correction(i: int, value: str, session: str = "s-new") -> RawRecord:
    return _record(i, {"kind": "correction", "session_id": session, "corrected_text": value})


def test_a_correction_after_an_answer_reflects_and_supersedes_the_wrong_memory(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    wrong = unit("客服：您的订单5月14日已经发货", n=1, tenant="acme", session="s-old", ts=T - timedelta(days=2))
    store = fill_store(tmp_path / "store", EMB, [wrong])
    settings = Settings.model_validate(
        {
            "responder": {
                "responses_path": tmp_path / "responses.jsonl",
                "reflections_path": tmp_path / "reflections.jsonl",
            }
        }
    )
    handlers, writers = file_handlers(settings, SupersedeExecutor(store, EMB).execute)
    outcomes: list[Outcome] = []
    lock = threading.Lock()

    def collect(outcome: Outcome) -> None:
        with lock:
            outcomes.append(outcome)

    items: list[ResponderItem] = []
    dead: list = []
    outputs = OutputSpec(
        deadletters=[TestingSink(dead)],
        memory_points=[],  # only the earlier session's memory is recalled: the answer is deterministic
        response_requests=[
            TestingSink(items),
            ResponderSink(lambda: ResponderRunner(make_responder(server.base_url), [*handlers, collect])),
        ],
    )
    records = [
        _turn(1, "customer", "我的订单哪天发货的？"),
        # straight after the question: it reaches the flow's end long before the question's request
        _correction(2, "5月16日"),
        _turn(3, "agent", "抱歉，我再核实一下"),
        _correction(4, "5月16日", session="s-never-answered"),
        _record(5, {"kind": "correction", "session_id": "s-new"}),  # no corrected_text: a dead letter
    ]
    service = RecallService(store, EMB, tables_file())
    flow = build_flow(settings, SourceInput(TestingSource(records)), outputs, embedder=EMB, recall=service)
    run_main(flow)
    for writer in writers:
        writer.close()

    # The responder got the question before its correction (the feed held it), on one typed stream.
    assert [(i.kind, i.session_id) for i in items if i.session_id == "s-new"] == [
        ("request", "s-new"),
        ("correction", "s-new"),
    ]
    [letter] = dead
    assert letter.step.endswith("parse_events")
    assert "corrected_text" in letter.message

    responses = [
        AgentResponse.model_validate_json(x) for x in settings.responder.responses_path.read_text().splitlines()
    ]
    [response] = responses
    assert response.request_id == "resp:acme:s-new:ev1"
    assert response.cue_ids == (wrong.memory_id,)
    assert "5月14日" in response.text

    [reflection] = [
        ReflectionRecord.model_validate_json(x) for x in settings.responder.reflections_path.read_text().splitlines()
    ]
    assert reflection.correction_event_id == "ev2"
    assert reflection.previous_request_id == response.request_id
    assert reflection.error_pattern == "date_parse_error", reflection.model_dump()
    assert reflection.wrong_value == "5月14日"
    assert reflection.superseded_memory_ids == (wrong.memory_id,)

    [old] = store.retrieve([wrong.memory_id])
    assert old.payload["superseded_by"] is not None
    assert old.payload["validity"]["effective_to"] == reflection.ts.isoformat()
    [new] = store.retrieve([old.payload["superseded_by"]])
    assert "5月16" in new.payload["text"] or "05-16" in new.payload["text"]
    assert new.payload["source_text"] == "5月16日"

    # A correction for a session the responder never answered: no reflection, no crash, a reason.
    [unanswered] = [o for o in outcomes if isinstance(o, CorrectionOutcome) and o.correction.session_id != "s-new"]
    assert unanswered.reflection is None
    assert unanswered.skipped == "no_previous_answer"
    store.close()
