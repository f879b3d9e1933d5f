"""One bad record never stops the flow: out-of-range times and duplicate event ids through
every branch (store, task state, recall, metrics windows)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.flows.whole_flow import records, run_whole, window_totals


def _turn(event_id: str, ts: str, text: str, session: str = "s9") -> dict[str, str]:
    return {"event_id": event_id, "session_id": session, "ts": ts, "text": text}


@pytest.mark.parametrize(
    "poison_ts",
    [
        "9999-12-31T23:59:59Z",  # the window bound after it overflows
        "9999-12-31T23:00:00-05:00",  # year 10000 once in UTC
        "0001-01-01T00:00:00+01:00",  # year 0 once in UTC
    ],
)
def test_an_out_of_range_time_between_two_valid_turns_is_one_dead_letter(tmp_path: Path, poison_ts: str) -> None:
    out = run_whole(
        records(
            [
                _turn("y1", "2026-01-01T10:00:00Z", "hello, I need help with order 12345"),
                _turn("y2", poison_ts, "x"),
                _turn("y3", "2026-01-01T10:01:00Z", "when will my refund arrive?"),
            ]
        ),
        tmp_path,
    )
    [dead] = out.dead
    assert (dead.source, dead.error_type) == ("r:1", "validation")
    assert "outside the years" in dead.message
    assert sorted({p["event_id"] for p in out.stored}) == ["y1", "y3"]
    assert out.metrics, "the metrics windows kept running"
    assert window_totals(out.metrics, {"deadletters", "events"}) == {"deadletters": 1, "events": 2}
    assert {r.query_event_id for r in out.recalls} >= {"y3"}


def test_duplicate_event_ids_first_wins_and_everything_adds_up(tmp_path: Path) -> None:
    lines = [
        _turn("d1", "2026-01-01T10:00:00Z", "my order 12345 has not arrived"),
        _turn("d2", "2026-01-01T10:00:30Z", "it was due last Monday"),
        _turn("d1", "2026-01-01T10:00:00Z", "my order 12345 has not arrived"),  # redelivery
        _turn("d2", "2026-01-01T10:00:40Z", "please cancel everything"),  # same id, other content
        _turn("d3", "2026-01-01T10:01:00Z", "can you check the tracking number?"),
        _turn("d1", "2026-01-01T10:00:00+00:00", "my order 12345 has not arrived"),  # same event, other spelling
        _turn("d4", "2026-01-01T10:01:30Z", "thanks"),
    ]
    out = run_whole(records(lines), tmp_path)
    assert [(d.source, d.error_type) for d in out.dead] == [("r:3", "duplicate_event")]
    assert sorted(d.source for d in out.duplicates) == ["r:2", "r:5"]
    texts = {p["event_id"]: p["source_text"] for p in out.stored}
    assert texts["d2"] == "it was due last Monday"  # never overwritten
    assert sorted(texts) == ["d1", "d2", "d3", "d4"]
    assert len(out.stored) == len({p["memory_id"] for p in out.stored})
    assert max(s.turn_count for s in out.states) == 4  # distinct events only
    events = len({(s.session_id, s.last_event_id) for s in out.states})
    assert events + len(out.dead) + len(out.duplicates) == len(lines)
    totals = window_totals(out.metrics, {"events", "duplicates", "deadletters"})
    assert totals == {"events": 4, "duplicates": 2, "deadletters": 1}
