"""Responder items: the runner and the Kafka service dispatch ResponseRequests and UserCorrections on type."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from schemas.deadletter import DeadLetter
from schemas.events import UserCorrection
from schemas.reflection import ReflectionRecord, SupersedeRequest
from schemas.response import AgentResponse, ResponseRequest, parse_responder_item
from sinks.respond.responder import CorrectionOutcome, Outcome, ResponseOutcome
from sinks.respond.runner import ResponderRunner, handle_all
from tests.fakes.fake_openai import FakeOpenAI, closed_port_url
from tests.fakes.responder_factories import make_cue, make_request, make_responder
from tests.unit.test_respond_service import FakeMessage, FakeProducer, _process, _service

LATER = datetime(2026, 6, 11, tzinfo=UTC)


def _fix(session: str = "sess-1", value: str = "5月16日", event_id: str = "c1") -> UserCorrection:
    return UserCorrection(event_id=event_id, session_id=session, tenant_id="tenant-a", ts=LATER, corrected_text=value)


@pytest.fixture
def server():
    srv = FakeOpenAI().start()
    yield srv
    srv.stop()


def test_items_are_typed_records_with_a_discriminator_and_old_requests_still_read() -> None:
    request = make_request("哪天发货？", make_cue())
    assert json.loads(request.model_dump_json())["kind"] == "request"
    assert json.loads(_fix().model_dump_json())["kind"] == "correction"
    assert parse_responder_item(request.model_dump_json()) == request
    assert parse_responder_item(_fix().model_dump_json()) == _fix()
    legacy = request.model_dump(mode="json")
    del legacy["kind"]  # written before responder items existed
    assert parse_responder_item(json.dumps(legacy)) == request
    with pytest.raises(ValidationError):
        parse_responder_item(json.dumps(legacy | {"kind": "resolution"}))


def test_the_runner_applies_a_correction_after_the_slow_answer_submitted_before_it(server: FakeOpenAI) -> None:
    server.delay_when = {"哪天发货": 0.5}
    seen: list[Outcome] = []
    runner = ResponderRunner(make_responder(server.base_url, timeout_s=2, deadline_s=3), [seen.append])
    runner.submit(make_request("哪天发货？", make_cue("mem-wrong", text="订单5月14日发货")))
    correction = runner.submit(_fix())
    outcome = correction.result(timeout=5)
    runner.close()
    assert isinstance(outcome, CorrectionOutcome)
    assert outcome.reflection is not None
    assert outcome.reflection.previous_request_id == "req-1"
    assert outcome.reflection.error_pattern == "date_parse_error"
    assert outcome.supersede is not None
    assert outcome.supersede.memory_ids == ("mem-wrong",)
    assert [type(o) for o in seen] == [ResponseOutcome, CorrectionOutcome]


def test_a_correction_without_a_previous_answer_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    responder = make_responder(closed_port_url(), retries=0)
    with caplog.at_level(logging.INFO, logger="sinks.respond.responder"):
        [outcome] = handle_all(responder, [_fix(session="never-answered")])
    assert isinstance(outcome, CorrectionOutcome)
    assert (outcome.reflection, outcome.supersede, outcome.skipped) == (None, None, "no_previous_answer")
    [line] = [json.loads(r.getMessage()) for r in caplog.records if '"op": "correct"' in r.getMessage()]
    assert line["skipped"] == "no_previous_answer"
    assert line["session_id"] == "never-answered"


def test_a_correction_the_answer_already_agrees_with_or_reflection_switched_off_says_why() -> None:
    ask = make_request("哪天发货？", make_cue("mem-1", text="订单5月14日发货"))
    _, agrees = handle_all(make_responder(closed_port_url(), retries=0), [ask, _fix(value="5月14日")])
    assert isinstance(agrees, CorrectionOutcome)
    assert (agrees.reflection, agrees.skipped) == (None, "no_conflict")
    _, off = handle_all(make_responder(closed_port_url(), retries=0, reflection=False), [ask, _fix()])
    assert isinstance(off, CorrectionOutcome)
    assert (off.reflection, off.skipped) == (None, "reflection_off")


def test_handle_many_orders_within_a_session_only() -> None:
    responder = make_responder(closed_port_url(), retries=0)
    items = [
        make_request("哪天发货？", make_cue("mem-wrong", text="订单5月14日发货"), n=1),
        _fix(session="other"),  # another session: nothing answered there
        _fix(),
    ]

    async def run() -> list[Outcome]:
        try:
            return await responder.handle_many(items)
        finally:
            await responder.aclose()

    first, other, mine = asyncio.run(run())
    assert isinstance(first, ResponseOutcome)
    assert isinstance(other, CorrectionOutcome)
    assert other.skipped == "no_previous_answer"
    assert isinstance(mine, CorrectionOutcome)
    assert mine.reflection is not None
    assert responder._session_locks == {}


def test_the_service_answers_requests_reflects_on_corrections_and_dead_letters_the_rest() -> None:
    superseded: list[SupersedeRequest] = []
    service = _service(superseded.append)
    producer = FakeProducer()
    ask = make_request("哪天发货？", make_cue("mem-wrong", text="订单5月14日发货"), n=1)
    legacy = ask.model_dump(mode="json")
    del legacy["kind"]
    _process(
        service,
        producer,
        [
            FakeMessage(json.dumps(legacy).encode(), 0),  # a request from before `kind`
            FakeMessage(_fix().model_dump_json().encode(), 1),
            FakeMessage(_fix(session="sess-1", event_id="c2").model_dump_json().encode()[:-2], 2),  # cut short
            FakeMessage(b'{"kind": "session_end", "session_id": "sess-1"}', 3),
        ],
    )
    by_topic: dict[str, list[bytes]] = {}
    for topic, _key, value in producer.sent:
        by_topic.setdefault(topic, []).append(value)
    [response] = [AgentResponse.model_validate_json(v) for v in by_topic["resp"]]
    assert response.request_id == "req-1"
    [reflection] = [ReflectionRecord.model_validate_json(v) for v in by_topic["refl"]]
    assert reflection.correction_event_id == "c1"
    assert reflection.previous_request_id == "req-1"
    assert [s.memory_ids for s in superseded] == [("mem-wrong",)]
    letters = [DeadLetter.model_validate_json(v) for v in by_topic["dead"]]
    assert [x.source for x in letters] == ["req/0@2", "req/0@3"]
    assert all(x.step == "respond.parse" for x in letters)
    stats = service.stats
    assert (stats.requests, stats.corrections, stats.reflections, stats.dead_letters) == (1, 1, 1, 2)


def test_the_service_survives_a_correction_for_an_unknown_session() -> None:
    service = _service()
    producer = FakeProducer()
    _process(service, producer, [FakeMessage(_fix(session="nobody").model_dump_json().encode(), 0)])
    assert producer.sent == []
    assert (service.stats.corrections, service.stats.reflections) == (1, 0)


def test_a_request_is_still_a_request() -> None:
    assert isinstance(parse_responder_item(make_request("hi").model_dump_json()), ResponseRequest)
