"""A conversation replayed through the whole flow is answered by the real vLLM server.

Two replays, as a backfill then live traffic would: the history lands in the store, then the
customers' questions trigger recall inside the flow; the flow's ResponseRequests go to the
responder (real server, started by infra/test_vllm.sh) and every answer names the cues it used.
"""

from __future__ import annotations

import os
from pathlib import Path

from bytewax.testing import TestingSink, run_main

from flows.build import build_flow
from flows.io import OutputSpec, file_input
from flows.respond import build_responder
from flows.runtime import close_stores, open_store, recall_service_for
from flows.settings import Settings
from schemas.response import ResponseRequest
from sinks.models.embedders import load_embedder
from sinks.respond.runner import answer_all
from sinks.store.sink import StoreSink

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
BASE_URL = os.environ["RECALLFLOW_VLLM_BASE_URL"]
MODEL = os.environ.get("RECALLFLOW_VLLM_MODEL", "smollm2-135m")


def _replay(settings: Settings, archive: Path) -> list[ResponseRequest]:
    embedder = load_embedder("static")
    requests: list[ResponseRequest] = []
    outputs = OutputSpec(
        deadletters=[],
        memory_points=[StoreSink(lambda: open_store(settings), dim=embedder.dim)],
        response_requests=[TestingSink(requests)],
    )
    recall = recall_service_for(settings, embedder)
    run_main(build_flow(settings, file_input(archive), outputs, embedder=embedder, recall=recall))
    return requests


def test_a_replayed_conversation_is_answered_by_the_real_server(tmp_path: Path) -> None:
    settings = Settings.model_validate(
        {
            "embedder": {"kind": "static"},
            "store": {"path": tmp_path / "store"},
            "deadletter": {"path": tmp_path / "dead.jsonl"},
            "task": {"archived_path": tmp_path / "archived.jsonl", "state_log_path": None},
            "metrics": {"enabled": False},
            "responder": {
                "base_url": BASE_URL,
                "model": MODEL,
                "timeout_s": 180,
                "deadline_s": 400,
                "concurrency": 2,
                "responses_path": tmp_path / "responses.jsonl",
                "reflections_path": tmp_path / "reflections.jsonl",
            },
        }
    )
    try:
        _replay(settings, FIXTURES / "vllm_history.jsonl")
        requests = [r for r in _replay(settings, FIXTURES / "vllm_questions.jsonl") if r.cues]
    finally:
        close_stores()
    assert {r.query_event_id for r in requests} == {"vq-1", "vq-2"}  # both questions recalled history

    outcomes = answer_all(build_responder(settings), requests)
    assert len(outcomes) == len(requests)
    for request, outcome in zip(requests, outcomes, strict=True):
        response = outcome.response
        assert not response.fallback, response.fallback_reason
        assert response.model == MODEL
        assert response.text.strip()
        assert response.cue_ids
        assert set(response.cue_ids) <= {c.memory_id for c in request.cues}
        print(
            f"{request.query_event_id}: {response.latency_ms:.0f} ms, cues {list(response.cue_ids)}: "
            f"{response.text[:120]!r}"
        )
