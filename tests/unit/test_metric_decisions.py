"""Decision extraction per record type, and per-stage latency marks."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from schemas.deadletter import DeadLetter
from schemas.events import SessionEnd
from schemas.memory import CorefAnchor, MemoryUnit
from schemas.recall import Cue, RecallResult, ScoreComponents, ValidityDecision
from schemas.response import AgentResponse
from schemas.session import SessionState
from state.metrics.decisions import (
    MAX_IN_FLIGHT,
    StageMark,
    decisions_of,
    event_time_of_raw,
    mark_stage,
    register_extractor,
)
from state.metrics.windows import Decision

T0 = datetime(2026, 1, 1, 8, tzinfo=UTC)


def _names(record: object) -> list[tuple[str, float]]:
    return [(d.name, d.value) for d in decisions_of(record)]


def test_dead_letters_carry_their_events_time_when_the_bytes_have_one() -> None:
    dated = DeadLetter.from_raw(
        step="s",
        key=None,
        source="f:1",
        error_type="validation",
        message="m",
        raw=b'{"ts": "2026-01-01T08:00:00Z"}',
        at=datetime(2030, 1, 1, tzinfo=UTC),
    )
    undated = DeadLetter.from_raw(
        step="s",
        key=None,
        source="f:2",
        error_type="malformed",
        message="m",
        raw=b"\xff",
        at=datetime(2030, 1, 1, tzinfo=UTC),
    )
    assert [(d.name, d.ts) for d in decisions_of(dated)] == [("deadletters", T0), ("deadletters.validation", T0)]
    assert [d.ts for d in decisions_of(undated)] == [None, None]  # never the processing clock


def test_event_time_of_raw_tolerates_any_bytes() -> None:
    assert event_time_of_raw(b'{"ts": 5}') is None
    assert event_time_of_raw(b'{"ts": "yesterday"}') is None
    assert event_time_of_raw(b"[1]") is None


def test_units_give_throughput_entropy_and_coref_review() -> None:
    unit = MemoryUnit(
        memory_id="m",
        unit_index=0,
        tenant_id="t",
        session_id="s",
        turn_id="t1",
        event_id="e",
        ts=T0,
        text="x",
        source_text="x",
        entropy=0.8,
        coref=(CorefAnchor(mention="它", needs_human_review=True), CorefAnchor(mention="this")),
    )
    assert _names(unit) == [
        ("memory_units", 1.0),
        ("entropy", 0.8),
        ("coref_needs_review_rate", 1.0),
        ("coref_needs_review_rate", 0.0),
    ]


def test_archived_tasks_are_counted_by_reason() -> None:
    from schemas.session import ArchivedTask

    task = ArchivedTask(
        session_id="s", task_id="TSK-1", reason="drift", archived_at=T0, final_state=SessionState(session_id="s")
    )
    assert _names(task) == [("archived_tasks", 1.0), ("archived_tasks.drift", 1.0)]


def test_input_events_count_events_and_states_carry_none() -> None:
    assert _names(SessionEnd(event_id="e", session_id="s", ts=T0)) == [("events", 1.0)]
    assert _names(SessionState(session_id="s", last_event_ts=T0)) == []


def test_recall_results_give_verification_fail_rate_over_verified_candidates_only() -> None:
    cue = Cue(memory_id="m", text="x", unit_type="complaint", score=0.9, components=ScoreComponents(), explanation="e")
    result = RecallResult(
        query_event_id="q",
        session_id="s",
        tenant_id="t",
        query_text="?",
        ts=T0,
        cues=(cue,),
        validity_decisions=(
            ValidityDecision(memory_id="a", decision="verified"),
            ValidityDecision(memory_id="b", decision="verify_failed_dropped"),
            ValidityDecision(memory_id="c", decision="kept"),
        ),
    )
    assert _names(result) == [
        ("recalls", 1.0),
        ("recall_empty_rate", 0.0),
        ("temporal_verification_fail_rate", 0.0),
        ("temporal_verification_fail_rate", 1.0),
    ]


def test_responses_give_fallback_rate_and_responder_latency() -> None:
    response = AgentResponse(
        request_id="r", session_id="s", tenant_id="t", text="hi", model="m", latency_ms=120.0, fallback=True, ts=T0
    )
    assert _names(response) == [("responses", 1.0), ("response_fallback_rate", 1.0), ("latency_ms.responder", 120.0)]


def test_ready_made_decisions_pass_through_and_extractors_plug_in() -> None:
    ready = Decision(T0, "goal_drift_rate", 1.0)
    assert decisions_of(ready) == [ready]
    assert decisions_of(object()) == []

    class Handoff:
        ts = T0

    register_extractor(Handoff, lambda h: [Decision(h.ts, "handoff_rate", 1.0)])
    assert _names(Handoff()) == [("handoff_rate", 1.0)]


def test_latency_marks_give_one_decision_per_stage_and_a_total() -> None:
    state = None
    for stage, at in (("parsed", 0), ("units", 5_000_000), ("normalise", 2_000_000)):  # arrival order need not match
        state, out = mark_stage(state, StageMark("s", "e", T0, stage, at))
        assert out == []
    state, out = mark_stage(state, StageMark("s", "e", T0, "embed", 9_000_000, final=True))
    assert state is None  # nothing in flight: the key is discarded
    assert [(d.name, d.value) for d in out] == [
        ("latency_ms.normalise", 2.0),
        ("latency_ms.units", 3.0),
        ("latency_ms.embed", 4.0),
        ("latency_ms.total", 9.0),
    ]


def test_latency_state_is_bounded_per_session() -> None:
    state = None
    for i in range(MAX_IN_FLIGHT + 5):
        state, _ = mark_stage(state, StageMark("s", f"e{i}", T0, "parsed", i))
    assert state is not None
    assert len(state.in_flight) == MAX_IN_FLIGHT


@given(st.lists(st.integers(min_value=0, max_value=10**9), min_size=1, max_size=6, unique=True))
def test_stage_latencies_are_non_negative_and_sum_to_the_total(times: list[int]) -> None:
    state = None
    for i, at in enumerate(times[:-1]):
        state, _ = mark_stage(state, StageMark("s", "e", T0, f"stage{i}", at))
    _, out = mark_stage(state, StageMark("s", "e", T0, "last", times[-1], final=True))
    steps = [d.value for d in out if d.name != "latency_ms.total"]
    assert all(v >= 0 for v in steps)
    if len(times) > 1:
        total = next(d.value for d in out if d.name == "latency_ms.total")
        assert abs(sum(steps) - total) < 1e-6
