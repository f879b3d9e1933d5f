"""Write-path throughput with windowed metrics off, on without stage latency, and fully on.

    python -m benchmarks.metrics_overhead [ARCHIVE] [--limit N]

ARCHIVE defaults to var/eval/dev-events.jsonl (made by `python -m evals.metrics_report`).
Static embedder, 1 worker, embedded store in a temporary directory. Prints events/s per
variant; measures, never asserts (the machine's load moves the figures).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from flows.build import build_flow
from flows.io import paced_file_input
from flows.runtime import close_stores, embedder_for, execute, outputs_for, replay_settings, state_mirror_for
from flows.settings import (
    settings_over_env,
)


def _run(archive: Path, metrics: dict[str, object], tmp: Path) -> float:
    settings = replay_settings(
        settings_over_env(
            embedder={"kind": "static"},
            store={"path": tmp / "store"},
            deadletter={"path": tmp / "dead.jsonl"},
            metrics={"path": tmp / "metrics.jsonl", **metrics},
        )
    )
    embedder = embedder_for(settings)
    outputs = outputs_for(settings, "replay", state_mirror_for(settings, "replay"), embedder)
    flow = build_flow(settings, paced_file_input(archive, None, batch_size=256), outputs, embedder=embedder)
    started = time.perf_counter()
    execute(flow, settings)
    elapsed = time.perf_counter() - started
    close_stores()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("archive", type=Path, nargs="?", default=Path("var/eval/dev-events.jsonl"))
    parser.add_argument("--limit", type=int, default=4000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        lines = args.archive.read_text(encoding="utf-8").splitlines()[: args.limit]
        archive = tmp / "events.jsonl"
        archive.write_text("\n".join(lines) + "\n", encoding="utf-8")
        variants: dict[str, dict[str, object]] = {
            "metrics off": {"enabled": False},
            "metrics on, no stage latency": {"stage_latency": False},
            "metrics on": {},
        }
        for name, metrics in variants.items():
            elapsed = _run(archive, metrics, tmp / name.replace(" ", "_").replace(",", ""))
            print(f"{name:32s} {len(lines) / elapsed:7.1f} events/s ({elapsed:.1f} s for {len(lines)} events)")


if __name__ == "__main__":
    main()
