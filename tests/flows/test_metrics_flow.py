"""Windowed metrics inside the whole flow: event-time windows, dead letters, late items, latency."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from bytewax.testing import TestingSink, TestingSource, run_main

from flows.build import build_flow
from flows.io import OutputSpec, SourceInput
from flows.settings import Settings
from schemas.metrics import WindowMetrics
from schemas.raw import RawRecord
from state.core.embedding import Embedder
from tests.conftest import event_dict, raw


def _metrics(
    records: list[RawRecord], embedder: Embedder, clock: Callable[[], datetime], **metrics: object
) -> list[WindowMetrics]:
    out: list[WindowMetrics] = []
    settings = Settings(metrics={"window_s": 60, "allowed_lateness_s": 0, **metrics})
    outputs = OutputSpec(deadletters=[], memory_points=[], metrics=[TestingSink(out)])
    run_main(build_flow(settings, SourceInput(TestingSource(records)), outputs, embedder=embedder, clock=clock))
    return out


def _ts(minute: int, second: int = 0) -> str:
    return f"2026-01-01T08:{minute:02d}:{second:02d}Z"


def test_windows_count_events_units_dead_letters_and_latency(static_embedder: Embedder, clock) -> None:
    records = [
        raw(event_dict(event_id="a1", session_id="s1", ts=_ts(0, 5), text="明天下午三点开会")),
        raw(event_dict(event_id="a2", session_id="s2", ts=_ts(0, 30), text="next Tuesday works")),
        raw(b'{"event_id": "bad", "ts": "2026-01-01T08:00:40Z"}', "f:3"),  # no session id: dead letter with a ts
        raw(event_dict(event_id="a3", session_id="s1", ts=_ts(1, 10), text="好的")),
        raw(b"{not json", "f:5"),  # undated dead letter: stamped with the latest event time seen
    ]
    # Tasks archived at the end of input (event time 08:15+) must not make these windows late.
    windows = [m for m in _metrics(records, static_embedder, clock, allowed_lateness_s=3600) if m.revision == 0]
    by_start = {m.window_start: m for m in windows}
    first = by_start[datetime(2026, 1, 1, 8, 0, tzinfo=UTC)]
    second = by_start[datetime(2026, 1, 1, 8, 1, tzinfo=UTC)]
    assert first.counters["events"] == 2
    assert first.counters["memory_units"] == 2
    assert first.counters["deadletters"] == 1
    assert first.counters["deadletters.validation"] == 1
    assert second.counters["events"] == 1
    assert sum(m.counters.get("deadletters.malformed", 0) for m in windows) == 1
    assert first.gauges["events_per_s"] == 2 / 60
    assert first.counters["entropy.n"] == 2
    assert sum(v for k, v in first.counters.items() if k.startswith("entropy.bin.")) == 2
    assert first.counters["latency_ms.total.n"] == 2
    assert first.gauges["latency_ms.total.p95"] >= 0
    assert any(a.startswith("deadletters=1 > 0") for a in first.alerts)
    assert (first.window_end - first.window_start).total_seconds() == 60


def test_late_events_are_counted_and_folded_into_their_window(static_embedder: Embedder, clock) -> None:
    # Zero lateness and a fixed wall clock: the watermark is the latest event time, so an
    # event two minutes older than one already seen belongs to a closed window.
    records = [
        raw(event_dict(event_id="n1", session_id="s1", ts=_ts(5))),
        raw(event_dict(event_id="n2", session_id="s1", ts=_ts(9))),
    ]
    records += [raw(event_dict(event_id="old", session_id="s2", ts=_ts(1)))]
    out = _metrics(records, static_embedder, clock)
    revised = [m for m in out if m.revision > 0]
    assert revised, out
    last = max(revised, key=lambda m: m.revision)
    assert last.window_start == datetime(2026, 1, 1, 8, 1, tzinfo=UTC)
    assert last.counters["late_events"] == 1
    assert last.counters["late_decisions"] >= 3  # events, memory_units, entropy (+ latency)
    assert last.counters["events"] == 1  # folded in, not dropped
    assert last.counters["memory_units"] == 1
    on_time = {m.window_start: m for m in out if m.revision == 0}
    assert on_time[datetime(2026, 1, 1, 8, 5, tzinfo=UTC)].counters["events"] == 1


def test_metrics_off_builds_no_metric_steps(static_embedder: Embedder, clock) -> None:
    out: list[WindowMetrics] = []
    points: list[object] = []
    settings = Settings(metrics={"enabled": False})
    outputs = OutputSpec(deadletters=[], memory_points=[TestingSink(points)], metrics=[TestingSink(out)])
    flow = build_flow(
        settings, SourceInput(TestingSource([raw(event_dict())])), outputs, embedder=static_embedder, clock=clock
    )
    run_main(flow)
    assert len(points) == 1
    assert out == []
