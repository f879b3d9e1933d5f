"""The responder as the flow's sink: the dataflow hands requests over and never waits on the model."""

from __future__ import annotations

import threading

import bytewax.operators as op
import pytest
from bytewax.dataflow import Dataflow
from bytewax.testing import TestingSource, run_main

from sinks.respond.responder import ResponseOutcome
from sinks.respond.runner import ResponderRunner, ResponderSink
from tests.fakes.fake_openai import FakeOpenAI
from tests.fakes.responder_factories import make_cue, make_request, make_responder


@pytest.fixture
def server():
    srv = FakeOpenAI().start()
    yield srv
    srv.stop()


def test_a_hanging_answer_does_not_block_the_flow(server: FakeOpenAI) -> None:
    server.delay_when = {"HANG": 1.0}
    events: list[str] = []
    lock = threading.Lock()

    def note(what: str) -> None:
        with lock:
            events.append(what)

    def on_outcome(outcome: ResponseOutcome) -> None:
        note(f"answered:{outcome.response.request_id}")

    requests = [make_request("HANG", make_cue(), n=0, session_id="s0")] + [
        make_request(f"question {i}", make_cue(), n=i, session_id=f"s{i}") for i in range(1, 5)
    ]

    def runner() -> ResponderRunner:
        responder = make_responder(server.base_url, timeout_s=0.7, deadline_s=0.8, retries=1)
        return ResponderRunner(responder, [on_outcome], drain_timeout_s=5)

    flow = Dataflow("responder_sink_test")
    stream = op.input("requests", flow, TestingSource(requests))
    passed = op.map("mark", stream, lambda r: (note(f"flowed:{r.request_id}"), r)[1])
    op.output("respond", passed, ResponderSink(runner))
    run_main(flow)

    flowed = [e for e in events if e.startswith("flowed:")]
    answered = [e for e in events if e.startswith("answered:")]
    assert len(flowed) == 5
    assert len(answered) == 5
    # Every request went through the flow before the hanging one was answered ...
    assert events.index("answered:req-0") > max(events.index(f) for f in flowed)
    # ... and the others were answered while it hung.
    assert answered[-1] == "answered:req-0"


def test_runner_delivers_outcomes_and_refuses_work_after_close(server: FakeOpenAI) -> None:
    seen: list[ResponseOutcome] = []
    runner = ResponderRunner(make_responder(server.base_url), [seen.append])
    future = runner.submit(make_request("hello", make_cue()))
    assert future.result(timeout=5).response.request_id == "req-1"
    runner.close()
    runner.close()  # idempotent
    assert [o.response.request_id for o in seen] == ["req-1"]
    assert runner.in_flight() == 0
    with pytest.raises(RuntimeError, match="closed"):
        runner.submit(make_request("late"))


def test_close_abandons_answers_past_the_drain_timeout(server: FakeOpenAI) -> None:
    server.mode, server.delay_s = "slow", 1.0
    seen: list[ResponseOutcome] = []
    runner = ResponderRunner(
        make_responder(server.base_url, timeout_s=3, deadline_s=3), [seen.append], drain_timeout_s=0.1
    )
    runner.submit(make_request("hello", make_cue()))
    runner.close()
    assert seen == []


def test_two_workers_share_one_runner_and_answer_everything(server: FakeOpenAI) -> None:
    from bytewax.testing import cluster_main

    made: list[ResponderRunner] = []
    seen: list[str] = []
    lock = threading.Lock()

    def on_outcome(outcome: ResponseOutcome) -> None:
        with lock:
            seen.append(outcome.response.request_id)

    def runner() -> ResponderRunner:
        made.append(ResponderRunner(make_responder(server.base_url), [on_outcome]))
        return made[-1]

    requests = [make_request(f"q{i}", make_cue(), n=i, session_id=f"s{i}") for i in range(8)]
    flow = Dataflow("responder_sink_two_workers")
    stream = op.input("requests", flow, TestingSource(requests))
    op.output("respond", stream, ResponderSink(runner))
    cluster_main(flow, [], 0, worker_count_per_proc=2)
    assert sorted(seen) == sorted(r.request_id for r in requests)
    assert len(made) == 1
