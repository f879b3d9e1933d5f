"""Event times at the edge of the calendar through the HTTP API: a 422, never a 500, and the
decision-health panel keeps answering."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from state.core.embedding import Embedder
from tests.fakes.api_world import World, build_world
from tests.unit.test_api import _client, as_tenant, assert_error


@pytest.fixture
def world(tmp_path: Path, static_embedder: Embedder) -> World:
    return build_world(tmp_path, static_embedder)


@pytest.fixture
def client(world: World, static_embedder: Embedder) -> TestClient:
    return _client(world, static_embedder)


@pytest.mark.parametrize(
    "ts", ["9999-12-31T23:00:00-05:00", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59Z", "1899-12-31T23:59:59Z"]
)
def test_recall_with_a_time_out_of_range_is_422_and_health_still_answers(client: TestClient, ts: str) -> None:
    body = {"session_id": "a1", "text": "退款什么时候到？", "ts": ts}
    err = assert_error(client.post("/recall", json=body, headers=as_tenant("acme")), 422, "invalid_request")
    assert "outside the years" in str(err["error"])
    context = {"session_id": "a1", "text": "退款？", "context": [{"text": "hi", "ts": ts}]}
    assert_error(client.post("/recall", json=context, headers=as_tenant("acme")), 422, "invalid_request")
    assert client.get("/decision-health", headers=as_tenant("acme")).status_code == 200


def test_recall_at_the_edges_of_the_range_is_answered(client: TestClient) -> None:
    for ts in ("1900-01-01T00:00:00Z", "2999-12-31T23:59:59Z"):
        body = {"session_id": "a1", "text": "退款什么时候到？", "ts": ts}
        assert client.post("/recall", json=body, headers=as_tenant("acme")).status_code == 200
        assert client.get("/decision-health", headers=as_tenant("acme")).status_code == 200
