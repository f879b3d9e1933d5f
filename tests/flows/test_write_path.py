"""The write path as a flow: bad lines dead-lettered, good lines stored, ids deterministic."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from bytewax.testing import TestingSink, TestingSource, run_main

from flows.build import build_flow
from flows.io import OutputSpec, SourceInput, file_input
from flows.settings import Settings
from schemas.deadletter import DeadLetter
from schemas.memory import EmbeddedUnit
from schemas.raw import RawRecord
from schemas.session import SessionState
from state.core.embedding import Embedder
from tests.conftest import event_dict, raw

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "demo.jsonl"


def _run(records: list[RawRecord], embedder: Embedder, clock: Callable[[], datetime]) -> tuple[list, list, list]:
    dead: list[DeadLetter] = []
    points: list[EmbeddedUnit] = []
    states: list[SessionState] = []
    outputs = OutputSpec(
        deadletters=[TestingSink(dead)], memory_points=[TestingSink(points)], states=[TestingSink(states)]
    )
    run_main(build_flow(Settings(), SourceInput(TestingSource(records)), outputs, embedder=embedder, clock=clock))
    return dead, points, states


def test_bad_inputs_are_dead_lettered_and_good_ones_processed(static_embedder: Embedder, clock) -> None:
    records = [
        raw(event_dict(event_id="ok1", text="明天下午三点开会")),
        raw(b"{broken", "f:2"),
        raw(b"\xff\xfe\xfd", "f:3"),
        raw({k: v for k, v in event_dict(event_id="nosid").items() if k != "session_id"}, "f:4"),
        raw(event_dict(event_id="wrongtype", ts="soon", speaker_role="boss"), "f:5"),
        raw(event_dict(event_id="huge", text="x" * 9000), "f:6"),
        raw(event_dict(event_id="ok2", text="next Tuesday works for me")),
    ]
    dead, points, states = _run(records, static_embedder, clock)
    assert sorted(d.source for d in dead) == ["f:2", "f:3", "f:4", "f:5", "f:6"]
    assert {d.error_type for d in dead} == {"malformed", "validation", "oversized"}
    assert all(d.message for d in dead)
    assert next(d for d in dead if d.source == "f:3").raw_bytes() == b"\xff\xfe\xfd"
    assert sorted(p.unit.event_id for p in points) == ["ok1", "ok2"]
    assert {s.session_id for s in states} == {"s1"}
    assert len(states) >= 2  # one per processed turn, plus the archive at end of input


def test_times_are_computed_from_each_events_own_ts(static_embedder: Embedder, clock) -> None:
    records = [
        raw(event_dict(event_id="a", ts="2026-01-01T08:00:00Z", text="明天下午三点开会")),
        raw(event_dict(event_id="b", session_id="s2", ts="2026-06-15T08:00:00Z", text="明天下午三点开会")),
        raw(event_dict(event_id="c", session_id="s3", ts="2026-06-15T08:00:00Z", text="Let's talk next Tuesday")),
    ]
    _, points, _ = _run(records, static_embedder, clock)
    starts = {p.unit.event_id: p.unit.times[0].start.isoformat() for p in points}
    assert starts == {
        "a": "2026-01-02T15:00:00+00:00",
        "b": "2026-06-16T15:00:00+00:00",
        "c": "2026-06-23T00:00:00+00:00",  # a Monday: "next Tuesday" is the Tuesday of next week
    }
    assert {p.unit.times[0].original_form for p in points} == {"明天下午三点", "next Tuesday"}


def test_replaying_the_example_twice_gives_same_ids(static_embedder: Embedder, clock) -> None:
    def ids() -> list[str]:
        dead: list[DeadLetter] = []
        points: list[EmbeddedUnit] = []
        outputs = OutputSpec(deadletters=[TestingSink(dead)], memory_points=[TestingSink(points)])
        run_main(build_flow(Settings(), file_input(EXAMPLE), outputs, embedder=static_embedder, clock=clock))
        assert len(dead) == 2
        return sorted(p.unit.memory_id for p in points)

    first = ids()
    assert first == ids()
    assert len(first) == len(set(first)) > 0
