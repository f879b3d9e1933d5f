"""End to end: replay the demo into a temp store, start `recallflow serve`, and drive the inspector
in Debian's headless chromium (playwright-core, tests/e2e/inspector.mjs): open a session, paste a
debug marker, check the recall view.

Needs /usr/bin/chromium and tests/e2e/node_modules; `make e2e-setup` installs both (idempotent)
and `make test` runs it first. Set RECALLFLOW_E2E_SCREENSHOT=docs/inspector.png to refresh the
screenshot in the docs.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
E2E = ROOT / "tests" / "e2e"
CHROMIUM = Path("/usr/bin/chromium")

pytestmark = pytest.mark.browser

SLASHED = "crosswoz-val/11290"
SLASHED_EVENTS = [
    {
        "event_id": f"{SLASHED}-{i}",
        "session_id": SLASHED,
        "tenant_id": "acme",
        "user_id": "u-wu",
        "ts": f"2026-11-30T10:0{i}:00Z",
        "speaker_role": role,
        "text": text,
    }
    for i, (role, text) in enumerate(
        [("customer", "帮我找一家北京的五星级酒店。"), ("agent", "好的，王府井希尔顿酒店可以吗？")]
    )
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(tmp: Path) -> dict[str, str]:
    run = tmp / "var"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECALLFLOW_")}
    env.update(
        PYTHONPATH=str(ROOT),
        HF_HUB_OFFLINE="1",
        OMP_NUM_THREADS="1",
        RECALLFLOW_EMBEDDER__KIND="static",
        RECALLFLOW_STORE__PATH=str(tmp / "store"),
        RECALLFLOW_DEADLETTER__PATH=str(run / "deadletter.jsonl"),
        RECALLFLOW_TASK__STATE_LOG_PATH=str(run / "task_states.jsonl"),
        RECALLFLOW_TASK__ARCHIVED_PATH=str(run / "archived_tasks.jsonl"),
        COLUMNS="160",
    )
    return env


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    if not CHROMIUM.exists() or not (E2E / "node_modules" / "playwright-core").exists():
        pytest.fail("browser test set-up missing: run `make e2e-setup` (Debian chromium + npm ci in tests/e2e)")
    tmp = tmp_path_factory.mktemp("e2e")
    env = _env(tmp)
    replay = subprocess.run(
        [sys.executable, "-m", "flows.cli", "replay", str(ROOT / "examples" / "demo.jsonl")],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert replay.returncode == 0, replay.stdout + replay.stderr
    # A dialogue whose session id has a slash, as every CrossWOZ and DailyDialog id does.
    slashed = tmp / "slashed.jsonl"
    slashed.write_text("".join(json.dumps(ev, ensure_ascii=False) + "\n" for ev in SLASHED_EVENTS), encoding="utf-8")
    more = subprocess.run(
        [sys.executable, "-m", "flows.cli", "replay", str(slashed)],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert more.returncode == 0, more.stdout + more.stderr
    port = _free_port()
    log = (tmp / "serve.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "flows.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=tmp,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail("recallflow serve did not become ready: " + (tmp / "serve.log").read_text())
            time.sleep(0.5)
        yield base, tmp
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def test_inspector_opens_a_session_and_jumps_to_a_pasted_marker(served: tuple[str, Path]) -> None:
    base, tmp = served
    tenant = {"X-Tenant-Id": "acme"}
    # A recall run through the API (the marker an agent would append to its answer).
    body = {"session_id": "demo-zh", "text": "补偿什么时候能到账？", "ts": "2026-11-30T01:03:00Z", "context": []}
    result = httpx.post(f"{base}/recall", json=body, headers=tenant, timeout=30).json()
    assert result["cues"], result
    marker = result["debug_marker"].split(" ")[0]
    top = result["cues"][0]["cue_id"]
    assert marker == f"[DEBUG:cue={top},css={result['cues'][0]['components']['css']:.3f}]"

    shot = tmp / "inspector.png"
    node = shutil.which("node")
    assert node is not None, "node is needed for the browser test"
    run = subprocess.run(
        [
            node,
            str(E2E / "inspector.mjs"),
            "--url",
            base,
            "--session",
            "demo-zh",
            "--marker",
            f"the answer text {marker}",
            "--cue",
            top,
            "--slashed",
            SLASHED,
            "--screenshot",
            str(shot),
            "--profile",
            str(tmp / "chromium-profile"),
            "--chromium",
            str(CHROMIUM),
        ],
        cwd=E2E,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["steps"] == [
        "sessions listed",
        "session opened",
        "slashed session opened",
        "marker found its recall",
        "health panel shown",
        "screenshot",
    ]
    assert seen["sessions"] == 4
    assert seen["slashedTurns"] == len(SLASHED_EVENTS)
    assert seen["turns"] == 3
    assert seen["units"] >= 3
    assert seen["intentBars"] >= 3
    assert seen["stateRows"] >= 2  # header + the task state after each turn
    assert seen["cues"] == len(result["cues"])
    assert seen["topCue"] == top
    assert seen["why"].startswith("why: " + top)
    assert seen["compareRows"] >= 10  # why the top three won: one row per score component
    assert seen["hash"] == f"#recall={result['query_event_id']}"
    assert seen["healthRows"] > 5
    assert seen["healthSource"] == "from the flow's metrics"  # the replay wrote its window metrics
    assert seen["errors"] == []
    assert shot.stat().st_size > 10_000
    target = os.environ.get("RECALLFLOW_E2E_SCREENSHOT")
    if target:
        shutil.copyfile(shot, ROOT / target)
