"""WindowMetrics: event-time tumbling-window aggregates of every decision point.

`kind="window"` is the aggregate of one closed window. `kind="late"` is a correction for a
window that already closed: `counters["late_events"]` / `counters["late_decisions"]` are
the running totals of items that arrived after it closed (counted, never silently
dropped); a consumer keeps the latest late record per window (the totals are cumulative,
so writing them again is idempotent).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from schemas.events import SCHEMA_VERSION, Record


class WindowMetrics(Record):
    schema_version: Literal[1] = SCHEMA_VERSION
    window_start: datetime
    window_end: datetime
    counters: dict[str, int]
    gauges: dict[str, float]
    alerts: tuple[str, ...] = ()
    kind: Literal["window", "late"] = "window"
