"""Property-based fuzzing of the HTTP API from its own OpenAPI schema (schemathesis): whatever a
client sends that the schema allows (and much that it does not), the server never answers 5xx.

Two apps: auth off (tenant header) and auth on (API key), over the two-tenant test world with
the real recall service and the static embedder. Examples per operation are bounded so the
whole module runs in well under a minute on 2 cores.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error

from flows.api.serve import build_app, build_context
from sinks.models.embedders import load_embedder
from tests.fakes.api_world import build_world

EXAMPLES = 20
KEY = "fuzz-key-acme"


def _schema(tmp: Path, **serve: object) -> schemathesis.BaseSchema:
    embedder = load_embedder("static")
    world = build_world(tmp, embedder, **serve)
    ctx = build_context(
        world.settings, embedder=embedder, opener=lambda: world.store, clock=lambda: datetime(2026, 12, 1, tzinfo=UTC)
    )
    return schemathesis.openapi.from_asgi("/openapi.json", build_app(ctx))


@pytest.fixture(scope="module")
def open_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[schemathesis.BaseSchema]:
    return _schema(tmp_path_factory.mktemp("fuzz-open"), default_tenant="acme")


@pytest.fixture(scope="module")
def keyed_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[schemathesis.BaseSchema]:
    return _schema(tmp_path_factory.mktemp("fuzz-keyed"), api_keys={"acme": KEY})


_FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def _fuzz(schema: schemathesis.BaseSchema, headers: dict[str, str]) -> tuple[list[str], Counter[int]]:
    """Every operation of the schema, up to EXAMPLES generated cases each: the operations run and
    the status codes seen."""
    ran = []
    statuses: Counter[int] = Counter()
    for result in schema.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy())
        @_FUZZ
        def check(case: schemathesis.Case) -> None:
            response = case.call_and_validate(headers=headers, checks=[not_a_server_error])
            statuses[response.status_code] += 1

        check()
        ran.append(f"{operation.method.upper()} {operation.path}")
    return ran, statuses


def test_no_server_error_with_auth_off(open_schema: schemathesis.BaseSchema) -> None:
    ran, statuses = _fuzz(open_schema, {})
    assert "POST /recall" in ran
    assert "GET /cues/{cue_id}" in ran
    assert len(ran) >= 12
    assert sum(statuses.values()) >= 5 * len(ran)
    assert statuses[200] > 0
    assert statuses[422] > 0
    print(f"auth off: {sum(statuses.values())} requests over {len(ran)} operations, status codes {dict(statuses)}")


def test_no_server_error_with_a_key(keyed_schema: schemathesis.BaseSchema) -> None:
    ran, statuses = _fuzz(keyed_schema, {"X-API-Key": KEY})
    assert "GET /sessions/{session_id}/memories" in ran
    assert statuses[200] > 0
    print(f"with a key: {sum(statuses.values())} requests over {len(ran)} operations, status codes {dict(statuses)}")
