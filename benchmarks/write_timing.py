"""Instruments for `benchmarks.write_path`: stage timers, stamped source and store, a recording
embedder, and the embedder floor (the embedder alone on the flow's texts, batching and threads).

Measures only; asserts nothing.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from bytewax.inputs import StatefulSourcePartition

from schemas.raw import RawRecord
from sinks.files.jsonl_source import JsonlSource
from sinks.store.base import MemoryStore, StoredPoint
from state.core.embedding import Embedder, Matrix, embed_modes


class Timers:
    """Per-call durations of each stage's function (patched in for the run), and per-turn stamps."""

    def __init__(self) -> None:
        self.calls: dict[str, list[tuple[float, int]]] = defaultdict(list)  # stage -> (seconds, items)
        self.emitted: dict[str, float] = {}  # source line -> time the source handed it to the flow
        self.stored: dict[str, float] = {}  # event id -> time its first unit reached the store

    def wrap(
        self, stage: str, fn: Callable[..., Any], items: Callable[..., int] = lambda *a, **k: 1
    ) -> Callable[..., Any]:
        def timed(*a: Any, **k: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                self.calls[stage].append((time.perf_counter() - started, items(*a, **k)))

        return timed


class StampedPartition(StatefulSourcePartition[RawRecord, Any]):
    def __init__(self, inner: StatefulSourcePartition[RawRecord, Any], emitted: dict[str, float]) -> None:
        self._inner, self._emitted = inner, emitted

    def next_batch(self) -> list[RawRecord]:
        batch = list(self._inner.next_batch())
        now = time.perf_counter()
        for record in batch:
            self._emitted[record.source.rsplit(":", 1)[1]] = now
        return batch

    def snapshot(self) -> Any:
        return self._inner.snapshot()

    def close(self) -> None:
        self._inner.close()


class StampedSource(JsonlSource):
    def __init__(self, path: Path, batch_size: int, emitted: dict[str, float]) -> None:
        super().__init__(path, batch_size)
        self._emitted = emitted

    def build_part(self, step_id: str, for_part: str, resume_state: Any) -> StampedPartition:  # type: ignore[override]
        return StampedPartition(super().build_part(step_id, for_part, resume_state), self._emitted)


class TimedStore:
    """The real store; stamps when each turn's first unit is written."""

    def __init__(self, inner: MemoryStore, timers: Timers) -> None:
        self._inner, self._timers = inner, timers

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def upsert(self, points: Sequence[StoredPoint]) -> None:
        started = time.perf_counter()
        self._inner.upsert(points)
        now = time.perf_counter()
        self._timers.calls["store upsert"].append((now - started, len(points)))
        for p in points:
            self._timers.stored.setdefault(str(p.payload["event_id"]), now)


class RecordingEmbedder:
    """The model as the flow reaches it (under the memo): times each call and keeps its texts by mode
    (one entry per call; a round of several modes, `embed_modes`, is one entry)."""

    def __init__(self, inner: Embedder, timers: Timers) -> None:
        self._inner, self._timers = inner, timers
        self.name, self.dim = inner.name, inner.dim
        self.requests: list[dict[str, list[str]]] = []

    def passage(self, texts: Sequence[str]) -> Matrix:
        self.requests.append({"passage": list(texts)})
        out: Matrix = self._timers.wrap("model: passage (memory vectors)", self._inner.passage, len)(texts)
        return out

    def query(self, texts: Sequence[str]) -> Matrix:
        self.requests.append({"query": list(texts)})
        out: Matrix = self._timers.wrap("model: query (anchoring, recall)", self._inner.query, len)(texts)
        return out

    def embed_modes(self, by_mode: Mapping[str, Sequence[str]]) -> dict[str, Matrix]:
        self.requests.append({mode: list(texts) for mode, texts in by_mode.items() if texts})
        wrapped = self._timers.wrap(
            "model: one round of every mode (prefetch)", lambda b: embed_modes(self._inner, b), _texts_in
        )
        out: dict[str, Matrix] = wrapped(by_mode)
        return out


def _texts_in(by_mode: Mapping[str, Sequence[str]]) -> int:
    return sum(len(texts) for texts in by_mode.values())


@dataclass(frozen=True)
class Rate:
    wall: float  # items per wall second
    cpu: float  # items per CPU second of the whole process (every thread)


def embedder_floor(texts: Sequence[str], embedder: Embedder, batch: int, mode: str) -> Rate:
    """The embedder alone: each turn's text once, in the flow's batches and mode (its threads are the model's)."""
    call = embedder.query if mode == "query" else embedder.passage
    started, cpu0 = time.perf_counter(), time.process_time()
    for i in range(0, len(texts), batch):
        call(list(texts[i : i + batch]))
    return Rate(len(texts) / (time.perf_counter() - started), len(texts) / (time.process_time() - cpu0))


def replayed_floor(requests: Sequence[Mapping[str, list[str]]], embedder: Embedder, turns: int) -> Rate:
    """The embedder alone making exactly the flow's model calls (same texts, modes, call sizes, rounds,
    threads) → turns' worth per wall and CPU second."""
    started, cpu0 = time.perf_counter(), time.process_time()
    for by_mode in requests:
        embed_modes(embedder, by_mode)
    return Rate(turns / (time.perf_counter() - started), turns / (time.process_time() - cpu0))


def median_spread(values: Sequence[float]) -> str:
    """'median (min–max)' of repeated measurements."""
    a = np.asarray(values, dtype=float)
    return f"{float(np.median(a)):.1f} ({a.min():.1f}–{a.max():.1f})"


def percentiles(values: list[float]) -> str:
    a = np.asarray(values)
    p50, p95, p99 = (float(np.percentile(a, q)) for q in (50, 95, 99))
    return f"{p50:.1f} / {p95:.1f} / {p99:.1f}"


def stage_table(timers: Timers, turns: int) -> list[str]:
    lines = [
        "| stage | calls | items | per call p50 / p95 / p99 ms | per turn ms (stage total / turns) |",
        "|---|---:|---:|---:|---:|",
    ]
    for stage, calls in timers.calls.items():
        ms = [c[0] * 1000 for c in calls]
        items = sum(c[1] for c in calls)
        lines.append(f"| {stage} | {len(calls)} | {items} | {percentiles(ms)} | {sum(ms) / turns:.2f} |")
    return lines


def split_held(latencies: list[float], hold_s: float) -> tuple[list[float], int]:
    """Latencies of the turns not held back to the entropy stage's processing-time release, and how many were.

    A session's last turn waits for a next turn (or the hold timeout) before its units are cut.
    """
    kept = [ms for ms in latencies if ms < 0.9 * hold_s * 1000]
    return kept, len(latencies) - len(kept)


def end_to_end(timers: Timers, line_events: dict[str, str]) -> list[float]:
    """Source → stored milliseconds of every turn that reached the store."""
    out = []
    for line, emitted in timers.emitted.items():
        stored = timers.stored.get(line_events.get(line, ""))
        if stored is not None:
            out.append((stored - emitted) * 1000)
    return out
