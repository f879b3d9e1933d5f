"""Property: whatever times (years 1-9999, any offset), ids and sizes a client sends, no API
route answers 5xx; a time outside years 1900-2999 (UTC) is a 422, a valid recall a 200, and
every read route (decision health included) keeps answering afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flows.api.serve import build_app, build_context
from sinks.models.embedders import load_embedder
from tests.fakes.api_world import build_world

NOW = datetime(2026, 12, 1, tzinfo=UTC)
_OFFSET = st.integers(-(24 * 60 - 1), 24 * 60 - 1).map(lambda m: timezone(timedelta(minutes=m)))
_IDS = st.one_of(
    st.sampled_from(["s1", "g2", "crosswoz-val/11290", "../../etc/passwd\u0000😀", "a" * 200, "a" * 201]),
    st.text(min_size=1, max_size=30),
)


@st.composite
def _ts(draw: st.DrawFn) -> str | None:
    kind = draw(st.sampled_from(["none", "recent", "any", "edge"]))
    if kind == "none":
        return None
    if kind == "recent":
        return (NOW - timedelta(minutes=draw(st.integers(0, 10_000)))).astimezone(draw(_OFFSET)).isoformat()
    if kind == "edge":
        local = datetime(draw(st.sampled_from([1, 1899, 1900, 2999, 3000, 9999])), 12, 31, 23, 30)
    else:
        local = draw(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59)))
    zone = draw(st.one_of(st.none(), _OFFSET))
    return local.isoformat() if zone is None else local.replace(tzinfo=zone).isoformat()


def _in_range(ts: str | None) -> bool:
    if ts is None:
        return True
    moment = datetime.fromisoformat(ts)
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
    try:
        return 1900 <= moment.astimezone(UTC).year <= 2999
    except OverflowError:
        return False


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    embedder = load_embedder("static")
    world = build_world(tmp_path_factory.mktemp("api-property"), embedder, default_tenant="acme")
    ctx = build_context(world.settings, embedder=embedder, opener=lambda: world.store, clock=lambda: NOW)
    with TestClient(build_app(ctx), raise_server_exceptions=False) as c:
        yield c


def _routes(session: str, query: str) -> list[str]:
    s, q = quote(session, safe=""), quote(query, safe="")
    leaves = ("state", "history", "memories", "turns", "recalls")
    return ["/sessions", "/decision-health", f"/recalls/{q}", *(f"/sessions/{s}/{leaf}" for leaf in leaves)]


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(
    session=_IDS,
    event_id=st.one_of(st.none(), _IDS),
    text=st.one_of(st.text(min_size=1, max_size=60), st.integers(7_998, 8_002).map(lambda n: "订" * n)),
    ts=_ts(),
    context_ts=st.one_of(st.just("same"), _ts()),
)
def test_no_route_fails_whatever_the_times_ids_and_sizes(
    client: TestClient, session: str, event_id: str | None, text: str, ts: str | None, context_ts: str | None
) -> None:
    body: dict[str, Any] = {"session_id": session, "text": text, "ts": ts}
    if event_id is not None:
        body["event_id"] = event_id
    context = ts if context_ts == "same" else context_ts
    body["context"] = [{"text": "earlier turn", "ts": context}]
    resp = client.post("/recall", json=body)
    assert resp.status_code < 500, resp.text
    valid_ids = len(session) <= 200 and (event_id is None or len(event_id) <= 200)
    if not (_in_range(ts) and _in_range(context)):
        assert resp.status_code == 422, resp.text
    elif valid_ids and len(text) <= 8_000:
        assert resp.status_code == 200, resp.text
    for route in _routes(session, event_id or "q-acme-1"):
        got = client.get(route)
        assert got.status_code < 500, (route, got.text)
    assert client.get("/decision-health").status_code == 200


def test_the_property_reaches_both_answers(client: TestClient) -> None:
    ok = client.post("/recall", json={"session_id": "s1", "text": "退款？", "ts": "2999-12-31T23:59:59Z"})
    bad = client.post("/recall", json={"session_id": "s1", "text": "退款？", "ts": "2999-12-31T23:59:59-00:01"})
    assert (ok.status_code, bad.status_code) == (200, 422)
