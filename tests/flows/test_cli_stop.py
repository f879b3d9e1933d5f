"""Ctrl-C on a running flow: a clean stop with the summary table, no traceback (`replay` here;
`run` uses the same stop, see tests/integration/test_run_command.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ctrl_c_stops_a_paced_replay_with_its_summary(tmp_path: Path) -> None:
    run = tmp_path / "var"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECALLFLOW_")}
    env |= {
        "PYTHONPATH": str(ROOT),
        "COLUMNS": "160",
        "RECALLFLOW_EMBEDDER__KIND": "static",
        "RECALLFLOW_STORE__PATH": str(tmp_path / "store"),
        "RECALLFLOW_DEADLETTER__PATH": str(run / "deadletter.jsonl"),
        "RECALLFLOW_TASK__STATE_LOG_PATH": str(run / "task_states.jsonl"),
        "RECALLFLOW_TASK__ARCHIVED_PATH": str(run / "archived_tasks.jsonl"),
        "RECALLFLOW_METRICS__PATH": str(run / "metrics.jsonl"),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "flows.cli", "replay", str(ROOT / "examples" / "demo.jsonl"), "--rate", "0.5"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        states = run / "task_states.jsonl"
        while not (states.exists() and states.stat().st_size > 0):  # the flow is running
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the replay wrote no task state in 120 s"
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, out + err
    assert "replay of demo.jsonl (stopped early)" in out
    assert "events processed" in out
    assert "Traceback" not in out + err
    assert "panicked" not in err
