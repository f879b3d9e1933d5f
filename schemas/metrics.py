"""WindowMetrics: event-time tumbling-window aggregates of every decision point.

A window is emitted when it closes (`revision` 0). Items that arrive after their window
closed are counted (`counters["late_events"]`, `counters["late_decisions"]`) and folded
into the window, which is emitted again with the next `revision`: nothing is dropped, and
a consumer keeps the highest revision of each `window_start` (every sink write is keyed by
the window, so rewriting it after recovery is harmless).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from schemas.events import SCHEMA_VERSION, Record


class WindowMetrics(Record):
    schema_version: Literal[1] = SCHEMA_VERSION
    window_start: datetime
    window_end: datetime
    counters: dict[str, int]
    gauges: dict[str, float]
    alerts: tuple[str, ...] = ()
    revision: int = Field(default=0, ge=0, description="0 at close; +1 each time late items are folded in")
