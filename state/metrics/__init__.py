"""Windowed metrics: decision records taken from what the flow emits, event-time tumbling windows,
per-stage latency marks and the metric catalog's alerts.

In: decision records. Out: `MetricWindow`s. May import: `schemas`, `state.core`.
"""
