"""The responder against a real vLLM server (started by infra/test_vllm.sh).

A replay of ResponseRequests (tests/fixtures/response_requests.jsonl) goes through a Bytewax
flow into the same `ResponderSink` the embedded flow uses, with the responder built from
settings; every answer must come from the server (not the fallback) and name the cue ids it
used. Latency per request is written to RECALLFLOW_VLLM_REPORT and printed.
"""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
from pathlib import Path

import bytewax.operators as op
import httpx
import pytest
from bytewax.dataflow import Dataflow
from bytewax.testing import TestingSource, run_main

from flows.respond import build_responder
from flows.settings import Settings
from schemas.response import ResponseRequest
from sinks.respond.responder import ResponseOutcome
from sinks.respond.runner import ResponderRunner, ResponderSink

BASE_URL = os.environ["RECALLFLOW_VLLM_BASE_URL"]
MODEL = os.environ.get("RECALLFLOW_VLLM_MODEL", "smollm2-135m")
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "response_requests.jsonl"


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    out = tmp_path_factory.mktemp("vllm")
    # CPU inference of 256 tokens takes seconds, not the GPU-sized default limit.
    return Settings.model_validate(
        {
            "responder": {
                "base_url": BASE_URL,
                "model": MODEL,
                "timeout_s": 180,
                "deadline_s": 400,
                "concurrency": 4,
                "responses_path": out / "responses.jsonl",
                "reflections_path": out / "reflections.jsonl",
            }
        }
    )


def test_the_server_serves_the_model() -> None:
    models = httpx.get(f"{BASE_URL}/models", timeout=10).json()
    assert MODEL in [m["id"] for m in models["data"]]


def test_a_flow_replay_is_answered_by_the_real_server(settings: Settings) -> None:
    requests = [ResponseRequest.model_validate_json(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    outcomes: list[ResponseOutcome] = []
    lock = threading.Lock()

    def collect(outcome: ResponseOutcome) -> None:
        with lock:
            outcomes.append(outcome)

    flow = Dataflow("vllm_replay")
    stream = op.input("requests", flow, TestingSource(requests))
    op.output(
        "respond",
        stream,
        ResponderSink(lambda: ResponderRunner(build_responder(settings), [collect], drain_timeout_s=600)),
    )
    started = time.perf_counter()
    run_main(flow)
    wall_s = time.perf_counter() - started

    by_id = {o.response.request_id: o.response for o in outcomes}
    assert sorted(by_id) == sorted(r.request_id for r in requests)
    for request in requests:
        response = by_id[request.request_id]
        offered = {c.memory_id for c in request.cues}
        assert not response.fallback, f"{request.request_id} fell back: {response.fallback_reason}"
        assert response.model == MODEL
        assert response.decisions is not None
        assert response.decisions.route == "llm"
        assert response.text.strip()
        assert response.cue_ids, f"{request.request_id} names no cue"
        assert set(response.cue_ids) <= offered
        assert response.cue_attribution in ("cited", "overlap", "supplied")
    hedged = by_id["vllm-req-6"]
    assert hedged.decisions is not None
    assert hedged.decisions.promise == "hedged"
    assert "肯定" not in hedged.text

    latencies = sorted(o.response.latency_ms for o in outcomes)
    report = {
        "model": MODEL,
        "requests": len(latencies),
        "concurrency": settings.responder.concurrency,
        "max_tokens": settings.responder.max_tokens,
        "latency_ms_p50": round(statistics.median(latencies), 1),
        "latency_ms_max": round(latencies[-1], 1),
        "latency_ms_mean": round(statistics.fmean(latencies), 1),
        "wall_s": round(wall_s, 2),
        "attribution": {
            k: sum(o.response.cue_attribution == k for o in outcomes) for k in ("cited", "overlap", "supplied")
        },
        "responses": [
            {
                "id": o.response.request_id,
                "ms": o.response.latency_ms,
                "cues": list(o.response.cue_ids),
                "how": o.response.cue_attribution,
                "text": o.response.text[:160],
            }
            for o in sorted(outcomes, key=lambda o: o.response.request_id)
        ],
    }
    path = os.environ.get("RECALLFLOW_VLLM_REPORT")
    if path:
        Path(path).write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    print("\nvLLM responder latency:", json.dumps({k: v for k, v in report.items() if k != "responses"}))
