"""Replay event documents through the real write path into a store, for evaluations.

`replay_events` writes the documents to a JSONL archive and runs `build_flow` over it exactly
as `recallflow replay` does (recall switched off: the evaluation asks its own questions
through `RecallService`), with the store sink and a sink that keeps the units written.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from bytewax.testing import TestingSink, run_main

from flows.build import build_flow
from flows.io import OutputSpec, file_input
from flows.settings import RecallSettings, Settings
from schemas.deadletter import DeadLetter
from schemas.memory import MemoryUnit
from sinks.store.base import MemoryStore
from sinks.store.sink import StoreSink
from state.core.embedding import Embedder


def replay_events(
    docs: Sequence[Mapping[str, object]], store: MemoryStore, embedder: Embedder, tmp: Path
) -> list[MemoryUnit]:
    """Replay `ConversationEvent` documents through `build_flow` into `store`; returns the units written."""
    archive = tmp / "events.jsonl"
    with archive.open("w", encoding="utf-8") as fh:
        for doc in docs:
            fh.write(json.dumps(doc, ensure_ascii=False) + "\n")
    units: list[MemoryUnit] = []
    dead: list[DeadLetter] = []
    outputs = OutputSpec(
        deadletters=[TestingSink(dead)],
        memory_points=[StoreSink(lambda: store, embedder.dim)],
        memory_units=[TestingSink(units)],
    )
    settings = Settings(recall=RecallSettings(enabled=False))
    run_main(build_flow(settings, file_input(archive), outputs, embedder=embedder))
    if dead:
        print(f"{len(dead)} events went to dead letters: {dead[0].error_type}: {dead[0].message}", file=sys.stderr)
    return units
