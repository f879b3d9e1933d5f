"""Prometheus endpoint and the PNG chart of a run."""

from __future__ import annotations

import socket
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from schemas.errors import MetricsExportError
from schemas.metrics import WindowMetrics
from sinks.metrics.chart import PANELS, load_windows, render_chart
from sinks.metrics.exporters import PrometheusExporter, redis_fields, serve_prometheus

T0 = datetime(2026, 1, 1, 8, tzinfo=UTC)


def _window(i: int, **kw: object) -> WindowMetrics:
    base: dict[str, object] = {
        "window_start": T0 + timedelta(minutes=i),
        "window_end": T0 + timedelta(minutes=i + 1),
        "counters": {"events": 10 + i, "deadletters": i % 2, "memory_units": 9},
        "gauges": {"entropy.p50": 0.4, "entropy.p95": 0.9, "state_machine_miss_rate": 0.02 * i},
    }
    base.update(kw)
    return WindowMetrics.model_validate(base)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_prometheus_endpoint_serves_the_latest_window() -> None:
    port = _free_port()
    exporter = serve_prometheus(port)
    assert serve_prometheus(port) is exporter  # one server per process and port
    exporter.update(_window(3, alerts=("state_machine_miss_rate=0.06 > 0.05 (n=40)",)))
    exporter.update(_window(1))  # an older window does not replace the newest
    exporter.update(_window(3, revision=1, counters={"events": 14, "late_events": 2}))
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    assert 'recallflow_window_value{metric="state_machine_miss_rate"} 0.06' in body
    assert 'recallflow_window_count{metric="late_events"} 2.0' in body
    assert "recallflow_late_events 2.0" in body
    end = exporter.registry.get_sample_value("recallflow_window_end_timestamp_seconds")
    assert end == (T0 + timedelta(minutes=4)).timestamp()


def test_prometheus_port_in_use_is_a_metrics_export_error() -> None:
    def refuse(*_: object, **__: object) -> None:
        raise OSError("address in use")

    with pytest.raises(MetricsExportError, match="cannot serve Prometheus"):
        serve_prometheus(_free_port(), start=refuse)


def test_alert_gauge_names_the_metric() -> None:
    exporter = PrometheusExporter()
    exporter.update(_window(0, alerts=("deadletters=3 > 0 (n=3)",)))
    assert exporter.registry.get_sample_value("recallflow_window_alert", {"metric": "deadletters"}) == 1.0


def test_redis_fields_flatten_a_window() -> None:
    fields = redis_fields(_window(2, revision=1))
    assert fields["counters.events"] == "12"
    assert fields["gauges.entropy.p95"] == "0.9"
    assert fields["revision"] == "1"
    assert fields["alerts"] == "[]"


def test_load_windows_keeps_the_highest_revision_per_window(tmp_path: Path) -> None:
    run = tmp_path / "metrics.jsonl"
    lines = [_window(0), _window(1), _window(1, revision=2, counters={"events": 99}), _window(1, revision=1)]
    run.write_text("".join(w.model_dump_json() + "\n" for w in lines) + "\n")
    windows = load_windows(run)
    assert [w.counters["events"] for w in windows] == [10, 99]


def test_chart_has_a_panel_per_decision_point_and_renders(tmp_path: Path) -> None:
    titles = {p.title for p in PANELS}
    for point in (
        "state_machine_miss_rate",
        "cue_activation_precision",
        "temporal_verification_fail_rate",
        "intent_chain_stability",
        "coref needs_review rate",
    ):
        assert point in titles
    out = render_chart([_window(i) for i in range(6)], tmp_path / "c.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    empty = render_chart([], tmp_path / "empty.png")
    assert empty.stat().st_size > 0
