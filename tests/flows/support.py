"""Flow-test support: raw records from dicts, a whole write-path run, its collected outputs."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from bytewax.testing import TestingSink, TestingSource, run_main

from flows.build import build_flow
from flows.io import OutputSpec, SourceInput
from flows.settings import Settings
from schemas.deadletter import DeadLetter
from schemas.memory import EmbeddedUnit, MemoryUnit
from schemas.raw import RawRecord
from sinks.models.embedders import load_embedder

BASE = datetime(2026, 3, 4, 10, 15, tzinfo=UTC)


def turn(session: str, n: int, text: str, **extra: Any) -> dict[str, Any]:
    """A conversation-turn event `n` of `session`, 30 s apart from BASE."""
    return {
        "event_id": f"{session}-e{n}",
        "session_id": session,
        "turn_id": f"{session}-t{n}",
        "ts": (BASE + timedelta(seconds=30 * n)).isoformat(),
        "text": text,
        **extra,
    }


def raw(records: Iterable[dict[str, Any]]) -> list[RawRecord]:
    return [RawRecord(f"test:{i}", json.dumps(r, ensure_ascii=False).encode()) for i, r in enumerate(records)]


@dataclass
class Outputs:
    units: list[MemoryUnit] = field(default_factory=list)
    points: list[EmbeddedUnit] = field(default_factory=list)
    dead: list[DeadLetter] = field(default_factory=list)

    def by_turn(self) -> dict[str, MemoryUnit]:
        return {u.turn_id: u for u in self.units}


def run_flow(source: Any, settings: Settings | None = None, *, out: Outputs | None = None) -> Outputs:
    """Run the whole write path on `source` (a TestingSource or any Source of RawRecord)."""
    out = out if out is not None else Outputs()
    spec = OutputSpec(
        deadletters=[TestingSink(out.dead)],
        memory_points=[TestingSink(out.points)],
        memory_units=[TestingSink(out.units)],
    )
    # the processing clock stays the real one: idle timers run on processing time, and a fixed clock in
    # the past would fire them between two turns of the same session
    flow = build_flow(settings or Settings(), SourceInput(source), spec, embedder=load_embedder("static"))
    run_main(flow)
    return out


def run_records(records: Iterable[dict[str, Any]], settings: Settings | None = None) -> Outputs:
    return run_flow(TestingSource(raw(records)), settings)
