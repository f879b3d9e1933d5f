"""The recall branch inside the flow: customer turns → RecallResult and ResponseRequest."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bytewax.testing import TestingSink, TestingSource, cluster_main, run_main

from flows.build import build_flow
from flows.io import OutputSpec, SourceInput
from flows.recall import RecallService
from flows.settings import RecallSettings, Settings
from schemas.raw import RawRecord
from sinks.models.embedders import load_embedder
from sinks.store.qdrant_edge import QdrantEdgeStore
from sinks.store.sink import StoreSink
from state.recall.config import tables_file
from tests.recall_support import fill_store, unit

EMB = load_embedder("static")
T = datetime(2025, 6, 8, 9, tzinfo=UTC)


def _event(i: int, role: str, text: str, tenant: str = "acme", session: str = "s-new") -> RawRecord:
    doc = {
        "event_id": f"ev{i}",
        "session_id": session,
        "tenant_id": tenant,
        "user_id": "u1",
        "ts": (T + timedelta(seconds=i)).isoformat(),
        "speaker": "李雷" if role == "customer" else "客服小王",
        "speaker_role": role,
        "text": text,
    }
    return RawRecord(source=f"test:{i}", payload=json.dumps(doc, ensure_ascii=False).encode())


def _run(
    tmp_path: Path, settings: Settings, records: list[RawRecord], workers: int = 1, *, write_units: bool = True
) -> tuple[list, list, QdrantEdgeStore]:
    store = fill_store(
        tmp_path,
        EMB,
        [
            unit(
                "客服态度很差，我要投诉",
                n=1,
                tenant="acme",
                unit_type="complaint",
                topic="service_attitude",
                severity="high",
                resolution_status="pending",
                ts=T - timedelta(days=6),
            ),
            unit("另一个租户：客服态度很差", n=2, tenant="other", ts=T - timedelta(days=6)),
        ],
    )
    service = RecallService(store, EMB, tables_file())
    results: list = []
    responses: list = []
    outputs = OutputSpec(
        deadletters=[],
        # Under 2 workers each StoreSink partition re-opens the edge shard (ensure_collection) and
        # the second open hits the WAL lock; the recall branch is what is tested there.
        memory_points=[StoreSink(lambda: store, EMB.dim)] if write_units else [],
        recall_results=[TestingSink(results)],
        response_requests=[TestingSink(responses)],
    )
    flow = build_flow(settings, SourceInput(TestingSource(records)), outputs, embedder=EMB, recall=service)
    if workers == 1:
        run_main(flow)
    else:
        cluster_main(flow, [], 0, worker_count_per_proc=workers)
    return results, responses, store


def test_customer_turns_get_explained_recall_and_a_response_request(tmp_path: Path) -> None:
    records = [
        _event(1, "customer", "你好"),
        _event(2, "agent", "您好，请问有什么可以帮您"),
        _event(3, "customer", "客服态度又这么差，太失望了"),
        _event(4, "customer", "bad json"),
    ]
    records[3] = RawRecord(source="test:4", payload=b"{not json")
    results, responses, store = _run(tmp_path, Settings(), records)
    assert [r.query_event_id for r in results] == ["ev1", "ev3"]
    last = results[-1]
    assert last.cues[0].text == "客服态度很差，我要投诉"
    assert "[DEBUG:cue=" in last.debug_marker
    assert all(c.text != "另一个租户：客服态度很差" for r in results for c in r.cues)
    assert [r.query_event_id for r in responses] == ["ev1", "ev3"]
    assert responses[-1].cues == last.cues
    assert responses[-1].task_id is not None
    store.close()


def test_the_override_switch_turns_recall_off(tmp_path: Path) -> None:
    settings = Settings(recall=RecallSettings(enabled=False))
    results, responses, store = _run(tmp_path, settings, [_event(1, "customer", "客服态度又这么差")])
    assert results == []
    assert responses == []
    store.close()


def test_two_workers_give_the_same_results(tmp_path: Path) -> None:
    records = [
        _event(i, "customer", text, session=f"s{i % 3}")
        for i, text in enumerate(
            ["客服态度又这么差", "你好", "客服态度很差，太失望了", "订单到哪了", "again the same problem", "谢谢"]
        )
    ]
    one, _, store = _run(tmp_path / "one", Settings(), records, write_units=False)
    store.close()
    two, responses, store = _run(tmp_path / "two", Settings(), records, workers=2, write_units=False)
    store.close()
    key = lambda r: r.query_event_id  # noqa: E731
    assert [(r.query_event_id, [c.memory_id for c in r.cues]) for r in sorted(one, key=key)] == [
        (r.query_event_id, [c.memory_id for c in r.cues]) for r in sorted(two, key=key)
    ]
    assert len(responses) == len(records)
