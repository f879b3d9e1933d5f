"""Helpers for the stream integration tests: archives, settings as env, runs, store contents."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from bytewax.testing import run_main

from flows.build import build_flow
from flows.cli.ops import kafka_connection
from flows.io import InputSpec
from flows.runtime import close_stores, embedder_for, open_store, outputs_for, state_mirror_for
from flows.settings import Settings
from sinks.kafka.admin import read_topic
from sinks.store.base import StoreFilter

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
TEXTS = (
    "我的订单还没到，明天下午三点之前能送到吗？",
    "The package is late again, can you check the tracking number?",
    "好的，我们会尽快处理，请稍等。",
    "Please cancel that order and refund me by next Tuesday.",
    "谢谢，收到了。",
)


def make_archive(path: Path, *, sessions: int, turns: int, tag: str, bad_lines: int = 2) -> list[dict[str, Any]]:
    """A JSONL archive of interleaved sessions (event time ascending) plus a few bad lines."""
    events = []
    for t in range(turns):
        for s in range(sessions):
            events.append(
                {
                    "event_id": f"{tag}-s{s}-t{t}",
                    "session_id": f"{tag}-s{s}",
                    "tenant_id": "acme",
                    "user_id": f"u{s}",
                    "turn_id": f"t{t}",
                    "ts": (T0 + timedelta(seconds=20 * t + s)).isoformat(),
                    "speaker_role": "customer" if t % 2 == 0 else "agent",
                    "text": TEXTS[(s + t) % len(TEXTS)],
                }
            )
    lines = [json.dumps(e, ensure_ascii=False) for e in events]
    for i in range(bad_lines):
        lines.insert(
            3 + i * 7, '{"broken json' if i % 2 == 0 else json.dumps({"event_id": f"{tag}-bad{i}", "text": "x"})
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return events


def config(tmp: Path, bootstrap: str, redis_url: str, **overrides: Any) -> dict[str, Any]:
    """A nested settings dict isolated per test: own topics, group, store, files, Redis prefix."""
    tag = uuid.uuid4().hex[:10]
    cfg: dict[str, Any] = {
        "embedder": {"kind": "static"},
        "store": {"path": str(tmp / "store")},
        "deadletter": {"path": str(tmp / "deadletter.jsonl")},
        "redis": {"url": redis_url},
        "metrics": {
            "path": str(tmp / "metrics.jsonl"),
            "redis_prefix": f"it-metrics-{tag}",
            "allowed_lateness_s": 3600,
        },
        "kafka": {
            "bootstrap_servers": bootstrap,
            "group_id": f"it-{tag}",
            "session_timeout_ms": 6000,
            **{
                name: f"it-{tag}-{name}"
                for name in (
                    "input_topic",
                    "memory_topic",
                    "recall_topic",
                    "response_request_topic",
                    "response_topic",
                    "deadletter_topic",
                    "archived_topic",
                    "metrics_topic",
                )
            },
        },
    }
    for section, values in overrides.items():
        cfg[section] = {**cfg.get(section, {}), **values}
    return cfg


def env_for(cfg: dict[str, Any]) -> dict[str, str]:
    """The same settings as RECALLFLOW_* variables, for a subprocess."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECALLFLOW_")}
    for section, values in cfg.items():
        for key, value in values.items():
            env[f"RECALLFLOW_{section.upper()}__{key.upper()}"] = (
                json.dumps(value) if isinstance(value, bool) else str(value)
            )
    env["PYTHONPATH"] = str(ROOT)
    env["HF_HUB_OFFLINE"] = "1"
    env["OMP_NUM_THREADS"] = "1"
    return env


def cli(args: list[str], cfg: dict[str, Any], cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    """Start `recallflow ARGS` as a subprocess (its own process group) logging to `log`."""
    return subprocess.Popen(
        [sys.executable, "-m", "flows.cli", *args],
        env=env_for(cfg),
        cwd=cwd,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )


def kill_mid_stream(cfg: dict[str, Any], cwd: Path, *, rate: float, at_least: int) -> tuple[int, set[str]]:
    """Run `recallflow run --until-end --rate RATE` and SIGKILL it by its PID once the memory topic
    holds `at_least` records: (records seen before the kill, the event ids with a memory after it).
    The rate must make the stream outlast that wait by far, so the kill lands mid-stream."""
    settings = Settings(**cfg)
    proc = cli(["run", "--until-end", "--rate", f"{rate:g}"], cfg, cwd, cwd / "run1.log")
    seen = 0
    try:
        deadline = time.monotonic() + 240
        while seen < at_least:
            if proc.poll() is not None:
                pytest.fail(f"the flow exited early with {proc.returncode}")
            if time.monotonic() > deadline:
                pytest.fail(f"fewer than {at_least} memories after 240 s")
            seen = len(read_topic(kafka_connection(settings), settings.kafka.memory_topic, timeout_s=30))
            time.sleep(0.3)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    records = read_topic(kafka_connection(settings), settings.kafka.memory_topic)
    return seen, {json.loads(v)["event_id"] for _, v in records}


def run_flow(settings: Settings, source: InputSpec, mode: str = "run") -> None:
    """The `recallflow run` composition, in this process, until the input ends."""
    embedder = embedder_for(settings)
    outputs = outputs_for(settings, mode, state_mirror_for(settings, mode), embedder)  # type: ignore[arg-type]
    run_main(build_flow(settings, source, outputs, embedder=embedder))
    close_stores()


def store_contents(settings: Settings) -> dict[str, dict[str, Any]]:
    """Every stored memory: id → payload (the store is closed again afterwards)."""
    try:
        store = open_store(settings)
        return {hit.id: hit.payload for hit in store.scroll(StoreFilter(), limit=100_000)}
    finally:
        close_stores()
