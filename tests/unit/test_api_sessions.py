"""HTTP API: session ids with a slash (every CrossWOZ and DailyDialog id) and what makes a session
exist (stored turns and task states, never a recall request)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from flows.api.serve import build_app, build_context
from sinks.store.base import StoredPoint
from state.core.embedding import Embedder
from tests.fakes.api_world import T0, World, build_world, state, unit

NOW = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
SLASHED = "crosswoz-val/11290"
LEAVES = ("state", "history", "memories", "turns", "recalls")


@pytest.fixture
def world(tmp_path: Path, static_embedder: Embedder) -> World:
    world = build_world(tmp_path, static_embedder)
    row = dict(t="acme", s=SLASHED, u="u-wu", e="crosswoz-val/11290-0", role="customer", text="帮我订一家酒店。")
    row.update(ut="action_request", il="request", v="permanent")
    u = unit(row, 6)
    world.store.upsert([StoredPoint(u.memory_id, static_embedder.passage([u.text])[0], u.model_dump(mode="json"))])
    log = world.run_dir / "task_states.jsonl"
    with log.open("a", encoding="utf-8") as fh:
        fh.write(state("acme", SLASHED, "u-wu", 1, ("book_hotel",), "first").model_dump_json() + "\n")
    return world


@pytest.fixture
def client(world: World, static_embedder: Embedder) -> TestClient:
    ctx = build_context(world.settings, embedder=static_embedder, opener=lambda: world.store, clock=lambda: NOW)
    return TestClient(build_app(ctx), raise_server_exceptions=False)


ACME = {"X-Tenant-Id": "acme"}
GLOBEX = {"X-Tenant-Id": "globex"}


@pytest.mark.parametrize("leaf", LEAVES)
def test_a_session_id_with_a_slash_opens_on_every_route(client: TestClient, leaf: str) -> None:
    resp = client.get(f"/sessions/{quote(SLASHED, safe='')}/{leaf}", headers=ACME)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    ids = {m["session_id"] for m in body["items"]} if leaf == "memories" else {body["session_id"]}
    assert ids == {SLASHED}


def test_a_slashed_session_has_its_turns_and_state(client: TestClient) -> None:
    enc = quote(SLASHED, safe="")
    turns = client.get(f"/sessions/{enc}/turns", headers=ACME).json()["turns"]
    assert [t["event_id"] for t in turns] == ["crosswoz-val/11290-0"]
    assert client.get(f"/sessions/{enc}/state", headers=ACME).json()["state"]["intent_chain"] == ["book_hotel"]
    assert SLASHED in {s["session_id"] for s in client.get("/sessions", headers=ACME).json()["sessions"]}


@pytest.mark.parametrize("leaf", LEAVES)
def test_a_slashed_session_of_another_tenant_is_404(client: TestClient, leaf: str) -> None:
    resp = client.get(f"/sessions/{quote(SLASHED, safe='')}/{leaf}", headers=GLOBEX)
    assert resp.status_code == 404
    assert resp.json()["error"]["code"] == "session_not_found"


def test_a_slash_does_not_reach_another_route(client: TestClient) -> None:
    # "s1/state" is not a session: the id ends at the last known suffix, not at the first slash
    assert client.get("/sessions/s1%2Fstate/turns", headers=ACME).status_code == 404
    assert client.get("/sessions/s1/unknown", headers=ACME).status_code == 404


def test_a_recall_query_id_with_a_slash_is_found(client: TestClient) -> None:
    body = {"session_id": SLASHED, "text": "酒店订好了吗？", "ts": T0.isoformat(), "event_id": "crosswoz/q-1"}
    posted = client.post("/recall", json=body, headers=ACME)
    assert posted.status_code == 200, posted.text
    qid = posted.json()["query_event_id"]
    assert qid == "crosswoz/q-1"
    resp = client.get(f"/recalls/{quote(qid, safe='')}", headers=ACME)
    assert resp.status_code == 200, resp.text
    assert resp.json()["query_event_id"] == qid


HOSTILE = ["brand-new", "../../etc/passwd\u0000😀", "g2", "s2/x"]


@pytest.mark.parametrize("session", HOSTILE)
def test_a_recall_request_does_not_create_a_session(client: TestClient, session: str) -> None:
    before = {s["session_id"] for s in client.get("/sessions", headers=ACME).json()["sessions"]}
    resp = client.post("/recall", json={"session_id": session, "text": "我的快递呢？"}, headers=ACME)
    assert resp.status_code == 200, resp.text
    after = {s["session_id"] for s in client.get("/sessions", headers=ACME).json()["sessions"]}
    assert after == before
    for leaf in LEAVES:
        got = client.get(f"/sessions/{quote(session, safe='')}/{leaf}", headers=ACME)
        assert got.status_code == 404, (leaf, got.text)


def test_a_recall_in_another_tenants_session_leaves_it_404_for_the_caller(client: TestClient) -> None:
    client.post("/recall", json={"session_id": "g2", "text": "warehouse outage?"}, headers=ACME)
    assert client.get("/sessions/g2/recalls", headers=ACME).status_code == 404
    assert client.get("/sessions/g2/state", headers=GLOBEX).status_code == 200
    assert "g2" not in {s["session_id"] for s in client.get("/sessions", headers=ACME).json()["sessions"]}


def test_a_recall_in_an_existing_session_is_listed_with_it(client: TestClient) -> None:
    client.post("/recall", json={"session_id": "s2", "text": "refund?"}, headers=ACME)
    recalls = client.get("/sessions/s2/recalls", headers=ACME).json()["recalls"]
    assert len(recalls) == 1
    listed = {s["session_id"]: s for s in client.get("/sessions", headers=ACME).json()["sessions"]}
    assert listed["s2"]["recalls"] == 1
