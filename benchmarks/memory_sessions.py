"""Keyed state and resident memory over a replay of many short sessions.

    python -m benchmarks.memory_sessions [--sessions 10000] [--turns 2] [--ended 0.5]

Replays `--sessions` short sessions (`--turns` turns each, customer/agent alternating, one
session starting every 20 s of event time, so a day of event time holds 4,320 sessions)
through the replay flow with the static embedder, recall branch on, recovery snapshots on.
A share `--ended` of the sessions closes with a `SessionEnd`; the rest just go quiet and must
be dropped by the idle timers: the task state machine's `session_ttl_s` (event time; 1 h here
instead of 24 h) and coreference's `idle_ttl_s` / `end_grace_s` (processing time; 5 s / 1 s
here instead of 1 h / 30 s, so expiry happens inside a run of a minute) and the recall
trigger's `recall.idle_ttl_s`, tagging's, the entropy stage's and the intent-chain metric's
`idle_ttl_s` (processing time; 5 s here instead of 1 h). Two keep their own: the duplicate
filter holds a session's event ids 6 h (redeliveries within that are caught) and the units'
previous-turn context 1 h, both processing time, so their keys outlive a run of minutes.

Reported: resident memory (VmRSS) sampled every 0.5 s — before, at each tenth of the input,
peak and after — and the keyed state left at the end, counted from the recovery snapshots
(every stateful step's live keys: a key whose last snapshot is a discard does not count).
Bounded state means the count at the end is far below the sessions replayed, and RSS stops
growing with the number of sessions. Measures and prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from flows.build import build_flow
from flows.io import paced_file_input
from flows.runtime import (
    close_stores,
    embedder_for,
    execute,
    outputs_for,
    recall_service_for,
    recent_actions_for,
    replay_settings,
    state_mirror_for,
)
from flows.settings import (
    settings_over_env,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TEXTS = ("我的订单还没到，帮我查一下", "好的，正在为您查询", "Where is my parcel?", "It ships tomorrow.")


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def make_archive(path: Path, sessions: int, turns: int, ended: float) -> int:
    lines = []
    for s in range(sessions):
        start = T0 + timedelta(seconds=20 * s)
        for t in range(turns):
            lines.append(
                {
                    "event_id": f"m{s}-{t}",
                    "session_id": f"m{s}",
                    "tenant_id": "mem",
                    "user_id": f"u{s % 500}",
                    "ts": (start + timedelta(seconds=5 * t)).isoformat(),
                    "speaker_role": "customer" if t % 2 == 0 else "agent",
                    "text": TEXTS[(s + t) % len(TEXTS)],
                }
            )
        if s < sessions * ended:
            lines.append(
                {
                    "kind": "session_end",
                    "event_id": f"m{s}-end",
                    "session_id": f"m{s}",
                    "ts": (start + timedelta(seconds=5 * turns)).isoformat(),
                }
            )
    lines.sort(key=lambda e: str(e["ts"]))
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in lines), encoding="utf-8")
    return len(lines)


def live_keys(recovery_dir: Path) -> Counter[str]:
    """Live keys per stateful step in the recovery snapshots (last snapshot of a key not a discard)."""
    out: Counter[str] = Counter()
    for db in sorted(recovery_dir.glob("*.sqlite3")):
        with sqlite3.connect(db) as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "snaps" not in tables:
                continue
            rows = conn.execute(
                "SELECT step_id, state_key, ser_change FROM snaps s WHERE snap_epoch = "
                "(SELECT MAX(snap_epoch) FROM snaps t WHERE t.step_id = s.step_id AND t.state_key = s.state_key)"
            )
            for step_id, _key, change in rows:
                if change is not None:
                    out[str(step_id)] += 1
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--ended", type=float, default=0.5, help="share of sessions closed with a SessionEnd")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memory-bench-") as tmp_dir:
        tmp = Path(tmp_dir)
        archive = tmp / "events.jsonl"
        total = make_archive(archive, args.sessions, args.turns, args.ended)
        settings = replay_settings(
            settings_over_env(
                embedder={"kind": "static"},
                store={"path": tmp / "store"},
                deadletter={"path": tmp / "deadletter.jsonl"},
                metrics={"path": tmp / "metrics.jsonl", "idle_ttl_s": 5},
                task={"archived_path": tmp / "archived.jsonl", "state_log_path": None, "session_ttl_s": 3600},
                coref={"idle_ttl_s": 5, "end_grace_s": 1},
                recall={"idle_ttl_s": 5},
                tagging={"idle_ttl_s": 5},
                entropy={"idle_ttl_s": 5},
                recovery={"enabled": True, "dir": tmp / "recovery", "snapshot_interval_s": 2.0},
                redis={"enabled": False},
            )
        )
        embedder = embedder_for(settings)
        recent = recent_actions_for(settings, "replay")
        outputs = outputs_for(settings, "replay", state_mirror_for(settings, "replay"), embedder, recent)
        recall = recall_service_for(settings, embedder, recent=recent)
        flow = build_flow(settings, paced_file_input(archive, None, 256), outputs, embedder=embedder, recall=recall)
        samples: list[tuple[float, float]] = []
        stop = threading.Event()

        def sample() -> None:
            while not stop.is_set():
                samples.append((time.perf_counter(), rss_mb()))
                stop.wait(0.5)

        before = rss_mb()
        sampler = threading.Thread(target=sample, daemon=True)
        started = time.perf_counter()
        sampler.start()
        execute(flow, settings)
        elapsed = time.perf_counter() - started
        stop.set()
        sampler.join()
        close_stores()
        keys = live_keys(settings.recovery.dir)
    after = rss_mb()
    peak = max(m for _, m in samples)
    tenths = [samples[min(len(samples) - 1, int(len(samples) * f / 10))][1] for f in range(1, 11)]
    print(
        f"{args.sessions:,} sessions x {args.turns} turns ({total:,} events, {int(args.sessions * args.ended):,} "
        f"closed by SessionEnd, the rest idle), static embedder, recall on, recovery snapshots every 2 s; "
        f"{elapsed:.0f} s ({total / elapsed:.0f} events/s)"
    )
    print()
    print("| figure | value |")
    print("|---|---:|")
    print(f"| RSS before the run (models, lexicons loaded) | {before:.0f} MB |")
    print(f"| RSS at each tenth of the run | {' → '.join(f'{m:.0f}' for m in tenths)} MB |")
    print(f"| RSS peak / after | {peak:.0f} / {after:.0f} MB |")
    print(f"| growth per 1,000 sessions (peak − before) | {(peak - before) / args.sessions * 1000:.1f} MB |")
    print(f"| keyed state left at the end, all steps (live keys in the last snapshots) | {sum(keys.values()):,} |")
    for step, n in keys.most_common(8):
        print(f"| … {step} | {n:,} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
