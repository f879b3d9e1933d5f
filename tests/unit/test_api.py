"""HTTP API: tenant isolation on every route, auth, bad input, limits, JSON errors, probes."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from flows.api.serve import build_app, build_context
from schemas.errors import StoreError
from state.core.embedding import Embedder
from tests.fakes.api_world import World, build_world

NOW = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
KEYS = {"acme": "key-acme-123", "globex": "key-globex-456"}


def _client(world: World, embedder: Embedder, **kw: Any) -> TestClient:
    ctx = build_context(world.settings, embedder=embedder, opener=lambda: world.store, clock=lambda: NOW, **kw)
    return TestClient(build_app(ctx), raise_server_exceptions=False)


@pytest.fixture
def world(tmp_path: Path, static_embedder: Embedder) -> World:
    return build_world(tmp_path, static_embedder)


@pytest.fixture
def client(world: World, static_embedder: Embedder) -> TestClient:
    return _client(world, static_embedder)


def as_tenant(tenant: str) -> dict[str, str]:
    return {"X-Tenant-Id": tenant}


def assert_error(resp: Any, status: int, code: str) -> dict[str, Any]:
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"].startswith("application/json")
    body = resp.json()
    assert body["error"]["code"] == code
    assert "Traceback" not in resp.text
    return body


# -- tenant isolation: every route ---------------------------------------------------------


def session_routes(session: str) -> list[str]:
    return [f"/sessions/{session}/{leaf}" for leaf in ("state", "history", "memories", "turns", "recalls")]


@pytest.mark.parametrize("route", session_routes("g2"))
def test_other_tenants_session_is_404_on_every_session_route(client: TestClient, route: str) -> None:
    assert client.get(route, headers=as_tenant("globex")).status_code == 200
    assert_error(client.get(route, headers=as_tenant("acme")), 404, "session_not_found")


@pytest.mark.parametrize("route", session_routes("nope"))
def test_unknown_session_is_the_same_404(client: TestClient, route: str) -> None:
    assert_error(client.get(route, headers=as_tenant("acme")), 404, "session_not_found")


def test_same_session_id_in_two_tenants_never_mixes(client: TestClient) -> None:
    acme = client.get("/sessions/s1/memories", headers=as_tenant("acme")).json()
    globex = client.get("/sessions/s1/memories", headers=as_tenant("globex")).json()
    assert {m["tenant_id"] for m in acme["items"]} == {"acme"}
    assert acme["total"] == 3
    assert {m["tenant_id"] for m in globex["items"]} == {"globex"}
    assert globex["total"] == 1
    turns = client.get("/sessions/s1/turns", headers=as_tenant("acme")).json()
    assert all("SECRET" not in t["source_text"] for t in turns["turns"])
    state = client.get("/sessions/s1/state", headers=as_tenant("acme")).json()["state"]
    assert state["tenant_id"] == "acme"
    assert state["intent_chain"] == ["track_logistics"]
    history = client.get("/sessions/s1/history", headers=as_tenant("globex")).json()
    assert [s["intent_chain"] for s in history["steps"]] == [["invoice"]]
    assert client.get("/sessions/s1/recalls", headers=as_tenant("globex")).json()["recalls"] == []


def test_session_list_is_per_tenant(client: TestClient) -> None:
    acme = client.get("/sessions", headers=as_tenant("acme")).json()
    assert {s["session_id"] for s in acme["sessions"]} == {"s1", "s2"}
    globex = client.get("/sessions", headers=as_tenant("globex")).json()
    assert {s["session_id"] for s in globex["sessions"]} == {"s1", "g2"}
    assert client.get("/sessions", headers=as_tenant("initech")).json()["sessions"] == []


def test_other_tenants_cue_is_404_by_memory_id_and_by_cue_id(client: TestClient, world: World) -> None:
    for ident in (world.ids["g2"], world.cue("g2"), world.cue("g1")):
        assert client.get(f"/cues/{ident}", headers=as_tenant("globex")).status_code == 200
        assert_error(client.get(f"/cues/{ident}", headers=as_tenant("acme")), 404, "cue_not_found")


def test_other_tenants_recall_is_404_and_its_marker_finds_nothing(client: TestClient, world: World) -> None:
    assert client.get("/recalls/q-globex-1", headers=as_tenant("globex")).status_code == 200
    assert_error(client.get("/recalls/q-globex-1", headers=as_tenant("acme")), 404, "recall_not_found")
    marker = f"[DEBUG:cue={world.cue('g2')},css=0.654]"
    assert client.get("/debug-marker", params={"marker": marker}, headers=as_tenant("acme")).json()["recalls"] == []
    found = client.get("/debug-marker", params={"marker": marker}, headers=as_tenant("globex")).json()
    assert [r["query_event_id"] for r in found["recalls"]] == ["q-globex-1"]


def test_post_recall_never_returns_another_tenants_memory(client: TestClient) -> None:
    # acme asks in globex's session id with globex's words: nothing of globex may come back.
    resp = client.post(
        "/recall",
        json={"session_id": "g2", "text": "SECRET globex warehouse outage invoice 999", "context": []},
        headers=as_tenant("acme"),
    )
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["tenant_id"] == "acme"
    assert all("SECRET" not in c["text"] for c in body["cues"])
    assert_error(
        client.post(
            "/recall", json={"session_id": "s1", "text": "hi", "tenant_id": "globex"}, headers=as_tenant("acme")
        ),
        403,
        "tenant_mismatch",
    )


def test_decision_health_counts_only_the_callers_records(client: TestClient) -> None:
    acme = client.get("/decision-health", headers=as_tenant("acme")).json()
    globex = client.get("/decision-health", headers=as_tenant("globex")).json()
    units = {p["key"]: p for p in acme["points"]}["memory_units"]
    assert acme["source"] == "computed"
    assert sum(v or 0 for v in units["values"]) == 4
    assert sum(v or 0 for v in {p["key"]: p for p in globex["points"]}["memory_units"]["values"]) == 2


# -- recall --------------------------------------------------------------------------------


def test_post_recall_returns_the_streams_record_and_is_indexed(client: TestClient, world: World) -> None:
    resp = client.post(
        "/recall",
        json={"session_id": "s1", "text": "上次说补发的快递到了吗？", "ts": "2026-11-30T09:10:00Z", "context": []},
        headers=as_tenant("acme"),
    )
    body = resp.json()
    assert resp.status_code == 200, resp.text
    assert body["user_id"] == "u-li"  # from the session's task state
    assert body["cues"]
    assert {c["memory_id"] for c in body["cues"]} <= set(world.ids.values())
    assert body["debug_marker"].startswith("[DEBUG:cue=")
    first = body["cues"][0]
    assert set(first["components"]) >= {"emotion_match", "time_proximity", "severity", "resolution_gap", "css"}
    # the result is findable by its marker and stored for the next start
    found = client.get("/debug-marker", params={"marker": body["debug_marker"]}, headers=as_tenant("acme")).json()
    assert body["query_event_id"] in [r["query_event_id"] for r in found["recalls"]]
    logged = (world.run_dir / "api_recall.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(logged[-1])["query_event_id"] == body["query_event_id"]


def test_post_recall_uses_the_stored_turns_as_context(client: TestClient) -> None:
    body = client.post(
        "/recall",
        json={"session_id": "s1", "text": "快递呢？", "ts": "2026-11-30T09:10:00Z"},
        headers=as_tenant("acme"),
    ).json()
    # a1..a3 are the last three turns: immediate context, so not retrieved again
    assert all(c["text"] not in ("好的，谢谢。",) for c in body["cues"])


def test_recall_disabled_is_503(world: World, static_embedder: Embedder) -> None:
    client = _client(world, static_embedder, with_recall=False)
    assert_error(client.post("/recall", json={"session_id": "s1", "text": "hi"}), 503, "recall_disabled")
    assert client.get("/readyz").json()["checks"]["recall"] == "disabled"


# -- auth ----------------------------------------------------------------------------------


@pytest.fixture
def keyed(tmp_path: Path, static_embedder: Embedder) -> tuple[TestClient, World]:
    world = build_world(tmp_path, static_embedder, api_keys=KEYS)
    return _client(world, static_embedder), world


DATA_ROUTES = [
    ("get", "/sessions", None),
    ("get", "/sessions/s1/state", None),
    ("get", "/sessions/s1/history", None),
    ("get", "/sessions/s1/memories", None),
    ("get", "/sessions/s1/turns", None),
    ("get", "/sessions/s1/recalls", None),
    ("get", "/recalls/q-acme-1", None),
    ("get", "/debug-marker?marker=%5BDEBUG%3Acue%3DCUE-1234%5D", None),
    ("get", "/decision-health", None),
    ("post", "/recall", {"session_id": "s1", "text": "hello"}),
]


@pytest.mark.parametrize(("method", "route", "body"), DATA_ROUTES)
def test_every_data_route_needs_a_known_key(
    keyed: tuple[TestClient, World], method: str, route: str, body: Any
) -> None:
    client, _ = keyed
    call: Callable[..., Any] = getattr(client, method)
    kwargs = {"json": body} if body is not None else {}
    assert_error(call(route, **kwargs), 401, "missing_api_key")
    assert_error(call(route, headers={"X-API-Key": "wrong"}, **kwargs), 401, "invalid_api_key")
    assert_error(
        call(route, headers={"X-API-Key": KEYS["globex"], "X-Tenant-Id": "acme"}, **kwargs), 403, "tenant_mismatch"
    )
    assert call(route, headers={"X-API-Key": KEYS["acme"]}, **kwargs).status_code == 200


def test_a_key_reaches_only_its_tenant(keyed: tuple[TestClient, World]) -> None:
    client, world = keyed
    globex = {"X-API-Key": KEYS["globex"]}
    assert {m["tenant_id"] for m in client.get("/sessions/s1/memories", headers=globex).json()["items"]} == {"globex"}
    assert_error(client.get(f"/cues/{world.ids['a1']}", headers=globex), 404, "cue_not_found")
    assert_error(client.get("/sessions/s2/state", headers=globex), 404, "session_not_found")
    # a tenant header cannot widen a key
    assert_error(client.get("/sessions/s2/state", headers={**globex, "X-Tenant-Id": "acme"}), 403, "tenant_mismatch")


def test_probes_metrics_and_page_need_no_key(keyed: tuple[TestClient, World]) -> None:
    client, _ = keyed
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").json() == {"status": "ok", "checks": {"recall": "ok", "store": "ok"}}
    assert client.get("/inspector/config").json()["auth"] == "required"
    assert client.get("/inspector/config").json()["tenants"] == []  # no tenant list when keys are on
    assert "RecallFlow inspector" in client.get("/inspector/").text
    text = client.get("/metrics").text
    assert "recallflow_api_requests_total" in text
    assert "acme" not in text


def test_auth_required_without_keys_fails_at_start(tmp_path: Path, static_embedder: Embedder) -> None:
    from schemas.errors import ConfigurationError

    world = build_world(tmp_path, static_embedder, auth="required")
    with pytest.raises(ConfigurationError, match="api_keys"):
        _client(world, static_embedder)


def test_auth_off_uses_the_default_tenant_without_a_header(tmp_path: Path, static_embedder: Embedder) -> None:
    world = build_world(tmp_path, static_embedder, default_tenant="acme")
    client = _client(world, static_embedder)
    assert {s["session_id"] for s in client.get("/sessions").json()["sessions"]} == {"s1", "s2"}
    assert set(client.get("/inspector/config").json()["tenants"]) == {"acme", "globex"}


# -- bad input and limits --------------------------------------------------------------------


@pytest.mark.parametrize(
    "route",
    [
        "/sessions/s1/memories?unit_type=bogus",
        "/sessions/s1/memories?limit=0",
        "/sessions/s1/memories?offset=-1",
        "/sessions/s1/memories?validity=forever",
        "/cues/not-a-cue",
        "/cues/CUE-zzzz",
        "/debug-marker",
    ],
)
def test_bad_query_is_422_json(client: TestClient, route: str) -> None:
    body = assert_error(client.get(route, headers=as_tenant("acme")), 422, "invalid_request")
    assert body["error"]["detail"]


def test_page_limit_and_marker_text_are_checked(client: TestClient) -> None:
    assert_error(client.get("/sessions/s1/memories?limit=201", headers=as_tenant("acme")), 422, "page_too_large")
    assert_error(client.get("/debug-marker?marker=hello", headers=as_tenant("acme")), 422, "no_marker")


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"session_id": "s1"},
        {"session_id": "s1", "text": ""},
        {"session_id": "", "text": "hi"},
        {"session_id": "s1", "text": "hi", "surprise": 1},
        {"session_id": "s1", "text": "hi", "ts": "yesterday"},
        {"session_id": "s1", "text": "hi", "context": [{"text": "a"}] * 4},
        {"session_id": "s" * 201, "text": "hi"},
        {"session_id": "s1", "text": "x" * 8001},
    ],
)
def test_bad_recall_body_is_422(client: TestClient, body: dict[str, Any]) -> None:
    assert_error(client.post("/recall", json=body, headers=as_tenant("acme")), 422, "invalid_request")


def test_malformed_json_body_is_422(client: TestClient) -> None:
    resp = client.post(
        "/recall", content=b"{not json", headers={**as_tenant("acme"), "content-type": "application/json"}
    )
    assert_error(resp, 422, "invalid_request")


def test_text_over_the_configured_limit(tmp_path: Path, static_embedder: Embedder) -> None:
    world = build_world(tmp_path, static_embedder)
    world.settings = world.settings.model_copy(
        update={"input": world.settings.input.model_copy(update={"max_text_chars": 10})}
    )
    client = _client(world, static_embedder)
    assert_error(client.post("/recall", json={"session_id": "s1", "text": "x" * 11}), 422, "text_too_long")


def test_body_over_the_limit_is_413(tmp_path: Path, static_embedder: Embedder) -> None:
    world = build_world(tmp_path, static_embedder, max_body_bytes=200)
    client = _client(world, static_embedder)
    assert_error(client.post("/recall", json={"session_id": "s1", "text": "x" * 500}), 413, "payload_too_large")

    def chunks():  # no Content-Length: counted as it streams
        yield b'{"session_id": "s1", "text": "'
        yield b"x" * 500
        yield b'"}'

    resp = client.post("/recall", content=chunks(), headers={"content-type": "application/json"})
    assert_error(resp, 413, "payload_too_large")


def test_unknown_route_and_method_are_json(client: TestClient) -> None:
    assert_error(client.get("/nowhere"), 404, "not_found")
    assert_error(client.delete("/sessions"), 405, "method_not_allowed")


def test_tenant_header_too_long_is_400(client: TestClient) -> None:
    assert_error(client.get("/sessions", headers=as_tenant("t" * 201)), 400, "bad_tenant")


# -- store trouble and unexpected errors -------------------------------------------------------


def test_store_held_elsewhere_is_503_with_retry_after(world: World, static_embedder: Embedder) -> None:
    def busy():
        raise StoreError("qdrant-edge load failed: Can't init WAL: Kind(WouldBlock)")

    ctx = build_context(world.settings, embedder=static_embedder, opener=busy, with_recall=False)
    client = TestClient(build_app(ctx), raise_server_exceptions=False)
    ready = client.get("/readyz")
    assert ready.status_code == 503
    assert "WouldBlock" in ready.json()["checks"]["store"]
    resp = client.get("/sessions", headers=as_tenant("acme"))
    assert_error(resp, 503, "store_unavailable")
    assert resp.headers["retry-after"] == "5"
    assert client.get("/healthz").status_code == 200


def test_store_failure_mid_call_is_502(world: World, static_embedder: Embedder) -> None:
    def broken_scroll(*_a: Any, **_k: Any) -> Any:
        raise StoreError("scroll failed")

    world.store.scroll = broken_scroll  # type: ignore[method-assign]
    client = _client(world, static_embedder)
    assert_error(client.get("/sessions", headers=as_tenant("acme")), 502, "store_error")


def test_unexpected_error_is_500_without_a_traceback(world: World, static_embedder: Embedder) -> None:
    def boom(_request: Any) -> Any:
        raise RuntimeError("secret internals")

    client = _client(world, static_embedder, recaller=boom)
    resp = client.post("/recall", json={"session_id": "s1", "text": "hi"}, headers=as_tenant("acme"))
    body = assert_error(resp, 500, "internal_error")
    assert "secret internals" not in json.dumps(body)


# -- listing -------------------------------------------------------------------------------------


def test_memories_filter_and_page(client: TestClient) -> None:
    h = as_tenant("acme")
    page = client.get("/sessions/s1/memories?limit=2", headers=h).json()
    assert page["total"] == 3
    assert len(page["items"]) == 2
    assert page["next_offset"] == 2
    rest = client.get("/sessions/s1/memories?limit=2&offset=2", headers=h).json()
    assert len(rest["items"]) == 1
    assert rest["next_offset"] is None
    assert [
        m["unit_type"] for m in client.get("/sessions/s1/memories?unit_type=commitment", headers=h).json()["items"]
    ] == ["commitment"]
    both = client.get("/sessions/s1/memories?unit_type=commitment&unit_type=complaint", headers=h).json()
    assert both["total"] == 2
    assert client.get("/sessions/s1/memories?intent=question", headers=h).json()["total"] == 1
    transient = client.get("/sessions/s1/memories?validity=transient", headers=h).json()["items"]
    assert [m["validity"]["validity_type"] for m in transient] == ["transient"]


def test_cue_view_has_every_annotation(client: TestClient, world: World) -> None:
    view = client.get(f"/cues/{world.cue('a1')}", headers=as_tenant("acme")).json()
    unit = view["memory"]
    assert view["cue_id"] == world.cue("a1")
    assert view["recalled_in"] == ["q-acme-1"]
    for key in ("coref", "intent", "emotion", "entropy", "validity", "unit_type", "times", "severity", "priority_flag"):
        assert key in unit
    assert unit["coref"][0]["needs_human_review"] is True
    # a cue id never seen in a recall is found by its id prefix
    assert client.get(f"/cues/{world.cue('a2')}", headers=as_tenant("acme")).json()["memory"]["event_id"] == "a2"


def test_state_leaves_vectors_out(client: TestClient) -> None:
    state = client.get("/sessions/s1/state", headers=as_tenant("acme")).json()["state"]
    assert state["goal_vector"] is None


def test_openapi_schema_lists_every_route(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for route in (
        "/recall",
        "/sessions/{session_id}/state",
        "/sessions/{session_id}/memories",
        "/cues/{cue_id}",
        "/metrics",
        "/healthz",
        "/readyz",
    ):
        assert route in paths
    assert "APIKeyHeader" in json.dumps(client.get("/openapi.json").json()["components"]["securitySchemes"])


def test_root_redirects_to_the_inspector(client: TestClient) -> None:
    resp = client.get("/", follow_redirects=False)
    assert resp.status_code in (302, 307)
    assert resp.headers["location"] == "/inspector/"
