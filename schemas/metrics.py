"""WindowMetrics: event-time tumbling-window aggregates of every decision point."""

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
