"""Windowed-metrics exporters: a Redis hash per window and a Prometheus endpoint.

Redis: `{prefix}:window:{window_start ISO}` is a hash with one field per counter and gauge
(`counters.events`, `gauges.entropy.p95` ...), `alerts` (JSON list), `window_start`,
`window_end`, `revision`; a later revision (late items folded in) overwrites the fields,
so a rewrite after recovery is harmless. `{prefix}:windows` is a sorted set of window keys
scored by window start (epoch seconds). Keys expire after `ttl_s`. Every write is keyed:
replays and at-least-once redelivery overwrite, never add.

Prometheus: one process-wide registry served over HTTP (`start_http_server`) with the
values of the latest closed window: `recallflow_window_value{metric}` (gauges),
`recallflow_window_count{metric}` (counters), `recallflow_window_alert{metric}` (1 while
the latest window alerts on it), `recallflow_window_end_timestamp_seconds`,
`recallflow_late_events` (late events counted in the latest revised window).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable

import redis
from bytewax.outputs import DynamicSink, StatelessSinkPartition
from prometheus_client import CollectorRegistry, Gauge, start_http_server

from schemas.errors import MetricsExportError
from schemas.metrics import WindowMetrics

log = logging.getLogger(__name__)


def redis_fields(record: WindowMetrics) -> dict[str, str]:
    """The hash fields one record writes.

    >>> from datetime import UTC, datetime
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> sorted(redis_fields(WindowMetrics(window_start=t, window_end=t, counters={"events": 3}, gauges={})))
    ['alerts', 'counters.events', 'revision', 'window_end', 'window_start']
    """
    fields = {f"counters.{k}": str(v) for k, v in record.counters.items()}
    fields |= {f"gauges.{k}": repr(v) for k, v in record.gauges.items()}
    fields |= {
        "alerts": json.dumps(list(record.alerts), ensure_ascii=False),
        "window_start": record.window_start.isoformat(),
        "window_end": record.window_end.isoformat(),
        "revision": str(record.revision),
    }
    return fields


def window_key(prefix: str, record: WindowMetrics) -> str:
    return f"{prefix}:window:{record.window_start.isoformat()}"


class _RedisPartition(StatelessSinkPartition[WindowMetrics]):
    def __init__(self, client: redis.Redis, prefix: str, ttl_s: int, retries: int) -> None:
        self._client, self._prefix, self._ttl_s, self._retries = client, prefix, ttl_s, retries

    def write_batch(self, items: list[WindowMetrics]) -> None:
        for attempt in range(1, self._retries + 1):
            try:
                pipe = self._client.pipeline(transaction=False)
                for record in items:
                    key = window_key(self._prefix, record)
                    pipe.hset(key, mapping=redis_fields(record))  # type: ignore[arg-type]  # invariant Mapping
                    pipe.expire(key, self._ttl_s)
                    pipe.zadd(f"{self._prefix}:windows", {key: record.window_start.timestamp()})
                pipe.execute()
            except redis.RedisError as exc:
                log.warning(json.dumps({"op": "metrics.redis", "attempt": attempt, "error": str(exc)}))
                if attempt == self._retries:
                    raise MetricsExportError(f"writing {len(items)} metric windows to Redis failed: {exc}") from exc
                time.sleep(0.2 * attempt)
                continue
            log.debug(json.dumps({"op": "metrics.redis", "windows": len(items)}))
            return

    def close(self) -> None:
        self._client.close()


class RedisMetricsSink(DynamicSink[WindowMetrics]):
    def __init__(
        self, url: str, prefix: str = "metrics", ttl_s: int = 7 * 24 * 3600, timeout_s: float = 2.0, retries: int = 3
    ) -> None:
        self._url, self._prefix, self._ttl_s, self._timeout_s, self._retries = url, prefix, ttl_s, timeout_s, retries

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _RedisPartition:
        client = redis.Redis.from_url(self._url, socket_timeout=self._timeout_s)
        return _RedisPartition(client, self._prefix, self._ttl_s, self._retries)


class PrometheusExporter:
    """The latest closed window as Prometheus gauges, in a registry of its own."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self._lock = threading.Lock()
        self._value = Gauge(
            "recallflow_window_value", "latest closed window: gauge value", ["metric"], registry=self.registry
        )
        self._count = Gauge(
            "recallflow_window_count", "latest closed window: counter value", ["metric"], registry=self.registry
        )
        self._alert = Gauge(
            "recallflow_window_alert",
            "1 while the latest window alerts on the metric",
            ["metric"],
            registry=self.registry,
        )
        self._end = Gauge(
            "recallflow_window_end_timestamp_seconds", "end of the latest closed window", registry=self.registry
        )
        self._late = Gauge(
            "recallflow_late_events", "late events folded into the latest revised window", registry=self.registry
        )
        self._latest_end = float("-inf")

    def update(self, record: WindowMetrics) -> None:
        with self._lock:
            if record.revision:
                self._late.set(record.counters.get("late_events", 0))
            end = record.window_end.timestamp()
            if end < self._latest_end:  # an older window or its revision: keep showing the newest
                return
            self._latest_end = end
            self._end.set(end)
            for gauge in (self._value, self._count, self._alert):
                gauge.clear()
            for name, value in record.gauges.items():
                self._value.labels(metric=name).set(value)
            for name, count in record.counters.items():
                self._count.labels(metric=name).set(count)
            for alert in record.alerts:
                self._alert.labels(metric=alert.split("=", 1)[0]).set(1)


_SERVED: dict[tuple[str, int], PrometheusExporter] = {}
_SERVED_LOCK = threading.Lock()


def serve_prometheus(
    port: int, host: str = "127.0.0.1", start: Callable[..., object] = start_http_server
) -> PrometheusExporter:
    """The exporter served on host:port (started once per process; port 0 picks a free one)."""
    with _SERVED_LOCK:
        exporter = _SERVED.get((host, port))
        if exporter is None:
            exporter = PrometheusExporter()
            try:
                start(port, addr=host, registry=exporter.registry)
            except OSError as exc:
                raise MetricsExportError(f"cannot serve Prometheus metrics on {host}:{port}: {exc}") from exc
            _SERVED[(host, port)] = exporter
        return exporter


class _PrometheusPartition(StatelessSinkPartition[WindowMetrics]):
    def __init__(self, exporter: PrometheusExporter) -> None:
        self._exporter = exporter

    def write_batch(self, items: list[WindowMetrics]) -> None:
        for record in items:
            self._exporter.update(record)


class PrometheusMetricsSink(DynamicSink[WindowMetrics]):
    """Updates the process's exporter; the HTTP server starts when the first worker builds."""

    def __init__(self, port: int, host: str = "127.0.0.1") -> None:
        self._port, self._host = port, host

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _PrometheusPartition:
        return _PrometheusPartition(serve_prometheus(self._port, self._host))
