"""Endpoint down, slow or garbage → a cue-grounded template flagged fallback; nothing blocks."""

from __future__ import annotations

import asyncio
import re
import threading
import time

import pytest

from schemas.memory import EmotionLoad
from sinks.respond.runner import answer_all
from state.respond.decisions import DecisionSwitches
from tests.fakes.fake_openai import FakeOpenAI, closed_port_url
from tests.fakes.responder_factories import make_cue, make_request, make_responder


@pytest.fixture
def server():
    srv = FakeOpenAI().start()
    yield srv
    srv.stop()


def _facts_only(text: str, *cue_texts: str) -> bool:
    """Every digit run in the answer comes from a cue: the template adds no facts."""
    allowed = set(re.findall(r"\d+", " ".join(cue_texts)))
    return set(re.findall(r"\d+", text)) <= allowed


def test_endpoint_down_answers_from_the_cues_flagged_fallback() -> None:
    cue = make_cue(text="客服承诺发票6月16日寄出")
    [outcome] = answer_all(make_responder(closed_port_url()), [make_request("我的发票什么时候到？", cue)])
    r = outcome.response
    assert r.fallback
    assert r.fallback_reason == "endpoint_down"
    assert r.attempts == 2  # the first call and its one retry
    assert r.model == "template"
    assert r.cue_ids == ("mem-1",)
    assert "客服承诺发票6月16日寄出" in r.text
    assert _facts_only(r.text, cue.text)


def test_slow_endpoint_times_out_within_the_deadline(server: FakeOpenAI) -> None:
    server.mode, server.delay_s = "slow", 3.0
    started = time.perf_counter()
    [outcome] = answer_all(
        make_responder(server.base_url, timeout_s=0.2, deadline_s=1.0),
        [make_request("When will my invoice arrive?", make_cue(text="Invoice mailed on June 16"))],
    )
    elapsed = time.perf_counter() - started
    assert outcome.response.fallback_reason == "timeout"
    assert outcome.response.text == "According to our records: Invoice mailed on June 16."
    assert elapsed < server.delay_s  # the responder gave up; it did not wait for the server


@pytest.mark.parametrize(
    ("mode", "reason"), [("garbage", "garbage"), ("no_choices", "garbage"), ("error", "http_error")]
)
def test_garbage_or_errors_are_retried_once_then_fall_back(server: FakeOpenAI, mode: str, reason: str) -> None:
    server.mode = mode
    [outcome] = answer_all(
        make_responder(server.base_url), [make_request("hi there", make_cue(text="Refund approved"))]
    )
    assert outcome.response.fallback_reason == reason
    assert server.calls == 2


def test_no_cues_gives_a_factless_fallback() -> None:
    [zh, en] = answer_all(
        make_responder(closed_port_url()),
        [make_request("我的发票呢"), make_request("where is my invoice", n=2, session_id="s2")],
    )
    assert zh.response.text == "暂时没有查到与您问题相关的记录，我们已记下，会尽快跟进。"
    assert en.response.text.startswith("I could not find a record")
    assert zh.response.cue_ids == ()
    assert zh.response.cue_attribution == "none"


def test_uncertain_urgent_cue_lowers_the_promise_in_the_fallback() -> None:
    shaky = make_cue(text="客服说发票下周二肯定能给到", emotion=EmotionLoad(certainty=0.3, urgency=0.9))
    [outcome] = answer_all(make_responder(closed_port_url()), [make_request("发票下周二能到吗", shaky)])
    r = outcome.response
    assert r.decisions is not None
    assert r.decisions.promise == "hedged"
    assert "预计可提供" in r.text
    assert "肯定" not in r.text
    assert "预计" in r.text


def test_uncertain_urgent_cue_lowers_the_promise_in_english() -> None:
    shaky = make_cue(
        text="Agent said the invoice will definitely arrive Tuesday", emotion=EmotionLoad(certainty=0.3, urgency=0.9)
    )
    [outcome] = answer_all(make_responder(closed_port_url()), [make_request("Will my invoice arrive Tuesday?", shaky)])
    assert "is expected to arrive Tuesday" in outcome.response.text
    assert "definitely" not in outcome.response.text
    assert "estimates" in outcome.response.text


def test_hedged_promise_softens_the_models_answer_too(server: FakeOpenAI) -> None:
    shaky = make_cue(text="客服说发票下周二肯定能给到", emotion=EmotionLoad(certainty=0.3, urgency=0.9))
    [outcome] = answer_all(make_responder(server.base_url), [make_request("发票下周二能到吗", shaky)])
    assert not outcome.response.fallback
    assert "肯定" not in outcome.response.text
    assert "预计可提供" in outcome.response.text
    assert "do not promise" in server.requests[0]["messages"][0]["content"]


def test_llm_switch_off_answers_from_the_template_without_calling(server: FakeOpenAI) -> None:
    responder = make_responder(server.base_url, switches=DecisionSwitches(llm_enabled=False))
    [outcome] = answer_all(responder, [make_request("我的发票呢", make_cue())])
    assert outcome.response.fallback_reason == "switched_off"
    assert server.calls == 0


def test_one_hanging_request_does_not_hold_the_others(server: FakeOpenAI) -> None:
    server.delay_when = {"HANG": 1.5}
    responder = make_responder(server.base_url, timeout_s=0.8, deadline_s=0.9, retries=1, concurrency=4)
    requests = [make_request("HANG please", make_cue(), n=0, session_id="s0")] + [
        make_request(f"question {i}", make_cue(), n=i, session_id=f"s{i}") for i in range(1, 6)
    ]
    finished: list[str] = []

    async def run() -> None:
        async def one(req):  # type: ignore[no-untyped-def]
            outcome = await responder.respond(req)
            finished.append(outcome.response.request_id)
            return outcome

        outcomes = await asyncio.gather(*(one(r) for r in requests))
        await responder.aclose()
        by_id = {o.response.request_id: o.response for o in outcomes}
        assert by_id["req-0"].fallback_reason == "timeout"
        assert all(not by_id[f"req-{i}"].fallback for i in range(1, 6))

    asyncio.run(run())
    assert finished[-1] == "req-0"  # the five others were answered while it hung
    assert set(finished[:5]) == {f"req-{i}" for i in range(1, 6)}


def test_concurrency_is_bounded_by_the_semaphore(server: FakeOpenAI) -> None:
    server.mode, server.delay_s = "slow", 0.2
    live = {"now": 0, "max": 0}
    lock = threading.Lock()
    original = server._server.RequestHandlerClass.do_POST

    def counting(handler):  # type: ignore[no-untyped-def]
        with lock:
            live["now"] += 1
            live["max"] = max(live["max"], live["now"])
        try:
            original(handler)
        finally:
            with lock:
                live["now"] -= 1

    server._server.RequestHandlerClass.do_POST = counting
    requests = [make_request(f"q{i}", make_cue(), n=i, session_id=f"s{i}") for i in range(6)]
    outcomes = answer_all(make_responder(server.base_url, timeout_s=2, deadline_s=5, concurrency=2), requests)
    assert all(not o.response.fallback for o in outcomes)
    assert live["max"] == 2


def test_an_answer_that_only_echoes_the_prompt_is_garbage(server: FakeOpenAI) -> None:
    import tests.fakes.fake_openai as fake

    original = fake._answer
    fake._answer = lambda user: user[user.index("<memory_data>") : user.index("</memory_data>") + 14]  # type: ignore[assignment]
    try:
        [outcome] = answer_all(make_responder(server.base_url), [make_request("hi", make_cue(text="Refund approved"))])
    finally:
        fake._answer = original
    assert outcome.response.fallback_reason == "garbage"
    assert "<memory_data>" not in outcome.response.text
