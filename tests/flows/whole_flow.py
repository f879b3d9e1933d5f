"""The whole flow on raw records with every output collected: store, units, states, archived
tasks, recall results, response requests, metrics windows, dead letters and duplicates."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bytewax.testing import TestingSink, TestingSource, run_main

from flows.build import build_flow
from flows.io import OutputSpec, SourceInput
from flows.recall import RecallService
from flows.settings import Settings
from schemas.deadletter import DeadLetter, DuplicateDelivery
from schemas.events import InputEvent
from schemas.memory import MemoryUnit
from schemas.metrics import WindowMetrics
from schemas.raw import RawRecord
from schemas.recall import RecallResult
from schemas.response import ResponderItem
from schemas.session import ArchivedTask, SessionState
from sinks.models.embedders import load_embedder
from sinks.store.base import StoreFilter
from sinks.store.qdrant_edge import QdrantEdgeStore
from sinks.store.sink import StoreSink
from state.recall.config import tables_file

EMB = load_embedder("static")


@dataclass
class WholeRun:
    dead: list[DeadLetter] = field(default_factory=list)
    events: list[InputEvent] = field(default_factory=list)
    duplicates: list[DuplicateDelivery] = field(default_factory=list)
    units: list[MemoryUnit] = field(default_factory=list)
    states: list[SessionState] = field(default_factory=list)
    archived: list[ArchivedTask] = field(default_factory=list)
    recalls: list[RecallResult] = field(default_factory=list)
    requests: list[ResponderItem] = field(default_factory=list)
    metrics: list[WindowMetrics] = field(default_factory=list)
    stored: list[dict[str, Any]] = field(default_factory=list)


def records(lines: list[dict[str, Any] | bytes]) -> list[RawRecord]:
    return [
        RawRecord(f"r:{i}", line if isinstance(line, bytes) else json.dumps(line, ensure_ascii=False).encode())
        for i, line in enumerate(lines)
    ]


def run_whole(raws: list[RawRecord], tmp: Path, **settings: Any) -> WholeRun:
    """Run every branch of the flow (recall and metrics included) on `raws`."""
    cfg = Settings(
        embedder={"kind": "static"},
        store={"path": str(tmp / "store")},
        deadletter={"path": str(tmp / "dead.jsonl")},
        task={"archived_path": str(tmp / "archived.jsonl"), "state_log_path": None},
        metrics={"window_s": 60, "allowed_lateness_s": 3600},
        **settings,
    )
    out = WholeRun()
    store = QdrantEdgeStore(tmp / "store")
    outputs = OutputSpec(
        deadletters=[TestingSink(out.dead)],
        memory_points=[StoreSink(lambda: store, EMB.dim)],
        memory_units=[TestingSink(out.units)],
        states=[TestingSink(out.states)],
        archived=[TestingSink(out.archived)],
        recall_results=[TestingSink(out.recalls)],
        response_requests=[TestingSink(out.requests)],
        metrics=[TestingSink(out.metrics)],
        duplicates=[TestingSink(out.duplicates)],
        events=[TestingSink(out.events)],
    )
    recall = RecallService(store, EMB, tables_file())
    try:
        run_main(build_flow(cfg, SourceInput(TestingSource(raws)), outputs, embedder=EMB, recall=recall))
        out.stored = [dict(h.payload) for h in store.scroll(StoreFilter(), limit=100_000)]
    finally:
        store.close()
    return out


def window_totals(metrics: list[WindowMetrics], names: set[str]) -> dict[str, int]:
    """Counters `names` summed over the last revision of every window."""
    last: dict[Any, WindowMetrics] = {}
    for m in metrics:
        if m.window_start not in last or m.revision > last[m.window_start].revision:
            last[m.window_start] = m
    totals: dict[str, int] = {}
    for m in last.values():
        for name in names & m.counters.keys():
            totals[name] = totals.get(name, 0) + int(m.counters[name])
    return totals
