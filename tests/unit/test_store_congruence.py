"""One scenario on every store backend: same ids, same order, same counts, same survivals.

Each backend is checked against a brute-force oracle written here in numpy (cosine on
normalised vectors, StoreFilter semantics as documented in `sinks.store.base`), and the
backends are checked against each other in one run. The server backend joins only when
RECALLFLOW_TEST_QDRANT_URL is set.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from qdrant_client import QdrantClient
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from schemas.errors import ConfigurationError, StoreError
from schemas.memory import MemoryUnit, Validity, ValidityType, memory_id
from sinks.store.base import (
    DATETIME_INDEXES,
    FLOAT_INDEXES,
    KEYWORD_INDEXES,
    Hit,
    MemoryStore,
    StoredPoint,
    StoreFilter,
)
from sinks.store.qdrant_client_store import QdrantClientStore, is_transient
from sinks.store.qdrant_edge import QdrantEdgeStore

DIM = 32
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
VALID_AT = (T0 + timedelta(days=10)).isoformat()

# --- the scenario --------------------------------------------------------------------------


def _scenario() -> list[StoredPoint]:
    """48 memories: 2 tenants x 3 users, permanent/periodic/transient, some already expired."""
    rng = np.random.default_rng(20250301)
    points: list[StoredPoint] = []
    validity_types: tuple[ValidityType, ...] = ("permanent", "periodic", "transient")
    for i in range(48):
        tenant = f"tenant-{i % 2}"
        user = f"user-{(i // 2) % 3}"
        vtype = validity_types[i % 3]
        effective_to = None if vtype == "permanent" else T0 + timedelta(days=int(rng.integers(1, 21)))
        unit = MemoryUnit(
            memory_id=memory_id(tenant, f"s-{user}", f"e-{i}", 0),
            unit_index=0,
            tenant_id=tenant,
            session_id=f"s-{user}",
            user_id=user,
            task_id=f"TSK-2025-03-{i % 4:06d}",
            turn_id=f"turn-{i}",
            event_id=f"e-{i}",
            ts=T0 + timedelta(hours=i),
            text=f"memory {i}",
            source_text=f"memory {i} as said",
            unit_type="complaint" if i % 5 == 0 else "statement",
            confidence_score=round(float(rng.uniform(0.2, 1.0)), 3),
            validity=Validity(validity_type=vtype, effective_to=effective_to),
        )
        vector = rng.standard_normal(DIM).astype(np.float32)
        points.append(StoredPoint(unit.memory_id, vector, unit.model_dump(mode="json")))
    return points


POINTS = _scenario()
QUERIES = np.random.default_rng(7).standard_normal((4, DIM)).astype(np.float32)

FILTERS: dict[str, StoreFilter] = {
    "none": StoreFilter(),
    "tenant": StoreFilter(match={"tenant_id": "tenant-1"}),
    "users_any_of": StoreFilter(match={"user_id": ["user-0", "user-2"]}),
    "nested_keyword": StoreFilter(match={"validity.validity_type": "transient"}),
    "min_confidence": StoreFilter(min_confidence=0.6),
    "ts_window": StoreFilter(
        not_before=(T0 + timedelta(hours=10)).isoformat(), not_after=(T0 + timedelta(hours=30)).isoformat()
    ),
    "valid_at": StoreFilter(valid_at=VALID_AT),
    # A naive bound is read as UTC by every backend (the Qdrant engine's rule).
    "valid_at_naive": StoreFilter(valid_at=(T0 + timedelta(days=6)).replace(tzinfo=None).isoformat()),
    "recall_shape": StoreFilter(match={"tenant_id": "tenant-0", "user_id": "user-1"}, valid_at=VALID_AT),
    "everything": StoreFilter(
        match={"tenant_id": "tenant-0", "user_id": ["user-0", "user-1"], "unit_type": "statement"},
        min_confidence=0.3,
        not_before=T0.isoformat(),
        valid_at=VALID_AT,
    ),
    "no_match": StoreFilter(match={"tenant_id": "tenant-9"}),
}


def _get(payload: dict[str, Any], path: str) -> Any:
    value: Any = payload
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _when(iso: str) -> datetime:
    parsed = datetime.fromisoformat(iso)
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _matches(payload: dict[str, Any], flt: StoreFilter) -> bool:
    """The documented StoreFilter semantics, evaluated by hand."""
    for key, wanted in flt.match.items():
        allowed = {wanted} if isinstance(wanted, str) else set(wanted)
        if _get(payload, key) not in allowed:
            return False
    if flt.min_confidence is not None and payload["confidence_score"] < flt.min_confidence:
        return False
    ts = _when(payload["ts"])
    if flt.not_before is not None and ts < _when(flt.not_before):
        return False
    if flt.not_after is not None and ts > _when(flt.not_after):
        return False
    end = _get(payload, "validity.effective_to")
    return not (flt.valid_at is not None and end is not None and _when(end) < _when(flt.valid_at))


def _unit(v: np.ndarray | None) -> np.ndarray:
    assert v is not None
    return np.asarray(v / np.linalg.norm(v))


def oracle_search(points: Sequence[StoredPoint], query: np.ndarray, flt: StoreFilter, limit: int) -> list[str]:
    scored = [(float(_unit(p.vector) @ _unit(query)), p.id) for p in points if _matches(p.payload, flt)]
    return [pid for _, pid in sorted(scored, reverse=True)[:limit]]


def oracle_ids(points: Sequence[StoredPoint], flt: StoreFilter) -> list[str]:
    return sorted(p.id for p in points if _matches(p.payload, flt))


def test_scenario_exercises_every_filter() -> None:
    """Guard the scenario itself: each filter keeps some but not all points (bar no_match)."""
    for name, flt in FILTERS.items():
        kept = len(oracle_ids(POINTS, flt))
        if name == "none":
            assert kept == len(POINTS)
        elif name == "no_match":
            assert kept == 0
        else:
            assert 0 < kept < len(POINTS), name


# --- backends --------------------------------------------------------------------------------


@dataclass
class Backend:
    """A store under test, how to reopen it (None when it lives only in memory), how to clean up."""

    store: MemoryStore
    reopen: Callable[[], MemoryStore] | None
    cleanup: Callable[[], None] = lambda: None


def _edge(tmp: Path) -> Backend:
    return Backend(QdrantEdgeStore(tmp / "edge"), lambda: QdrantEdgeStore(tmp / "edge"))


def _local_memory(tmp: Path) -> Backend:
    return Backend(QdrantClientStore.local(None), None)


def _local_disk(tmp: Path) -> Backend:
    return Backend(QdrantClientStore.local(tmp / "local"), lambda: QdrantClientStore.local(tmp / "local"))


def _server(tmp: Path) -> Backend:
    url = os.environ["RECALLFLOW_TEST_QDRANT_URL"]
    key = os.environ.get("RECALLFLOW_TEST_QDRANT_API_KEY")
    collection = f"recallflow-test-{uuid.uuid4().hex[:12]}"

    def drop() -> None:
        QdrantClient(url=url, api_key=key).delete_collection(collection)

    return Backend(
        QdrantClientStore.server(url, key, collection),
        lambda: QdrantClientStore.server(url, key, collection),
        drop,
    )


BACKENDS: dict[str, Callable[[Path], Backend]] = {
    "edge": _edge,
    "local_memory": _local_memory,
    "local_disk": _local_disk,
}
PERSISTENT = ["edge", "local_disk"]
if os.environ.get("RECALLFLOW_TEST_QDRANT_URL"):
    BACKENDS["server"] = _server
    PERSISTENT.append("server")


def _loaded(name: str, tmp_path: Path) -> Iterator[Backend]:
    made = BACKENDS[name](tmp_path)
    made.store.ensure_collection(DIM)
    made.store.upsert(POINTS)
    yield made
    made.store.close()
    made.cleanup()


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """A fresh loaded store, for tests that change it."""
    yield from _loaded(request.param, tmp_path)


@pytest.fixture(scope="module", params=sorted(BACKENDS))
def shared(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """One loaded store per backend for the read-only tests (building a shard is not free)."""
    yield from _loaded(request.param, tmp_path_factory.mktemp(request.param))


@pytest.fixture(params=PERSISTENT)
def persistent(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    yield from _loaded(request.param, tmp_path)


def _ids(hits: Sequence[Hit]) -> list[str]:
    return [h.id for h in hits]


# --- congruence with the oracle ----------------------------------------------------------------


@pytest.mark.parametrize("filter_name", sorted(FILTERS))
@pytest.mark.parametrize("limit", [5, 100])
def test_search_matches_oracle(shared: Backend, filter_name: str, limit: int) -> None:
    flt = FILTERS[filter_name]
    for query in QUERIES:
        hits = shared.store.search(query, flt, limit)
        assert _ids(hits) == oracle_search(POINTS, query, flt, limit)
        expected = [float(_unit(query) @ _unit(p.vector)) for p in shared.store.retrieve(_ids(hits), with_vectors=True)]
        assert [h.score for h in hits] == pytest.approx(expected, abs=1e-4)
        assert all(_matches(h.payload, flt) for h in hits)


def test_search_returns_normalised_vectors_on_request(shared: Backend) -> None:
    hits = shared.store.search(QUERIES[0], StoreFilter(), 3, with_vectors=True)
    by_id = {p.id: p for p in POINTS}
    for hit in hits:
        assert hit.vector is not None
        np.testing.assert_allclose(hit.vector, _unit(by_id[hit.id].vector), atol=1e-5)
    assert all(h.vector is None for h in shared.store.search(QUERIES[0], StoreFilter(), 3))


@pytest.mark.parametrize("filter_name", sorted(FILTERS))
def test_count_and_scroll_match_oracle(shared: Backend, filter_name: str) -> None:
    flt = FILTERS[filter_name]
    expected = oracle_ids(POINTS, flt)
    assert shared.store.count(flt) == len(expected)
    hits = shared.store.scroll(flt)
    assert _ids(hits) == expected
    assert all(h.score == 0.0 for h in hits)
    assert _ids(shared.store.scroll(flt, limit=3)) == expected[:3]


def test_count_without_filter_is_everything(shared: Backend) -> None:
    assert shared.store.count() == len(POINTS)


def test_retrieve_keeps_request_order_and_skips_missing(shared: Backend) -> None:
    wanted = [POINTS[5].id, str(uuid.uuid4()), POINTS[0].id, POINTS[5].id]
    hits = shared.store.retrieve(wanted)
    assert _ids(hits) == [POINTS[5].id, POINTS[0].id]
    assert hits[0].payload == POINTS[5].payload
    assert all(h.score == 0.0 and h.vector is None for h in hits)
    assert shared.store.retrieve([]) == []


def test_delete_removes_from_every_read(backend: Backend) -> None:
    gone = [POINTS[1].id, POINTS[2].id, POINTS[3].id]
    backend.store.delete([*gone, str(uuid.uuid4())])
    backend.store.delete([])
    rest = [p for p in POINTS if p.id not in gone]
    assert backend.store.count() == len(rest)
    assert backend.store.retrieve(gone) == []
    assert _ids(backend.store.scroll(StoreFilter())) == oracle_ids(rest, StoreFilter())
    assert _ids(backend.store.search(QUERIES[1], StoreFilter(), 100)) == oracle_search(
        rest, QUERIES[1], StoreFilter(), 100
    )


def test_reupsert_is_idempotent_and_overwrites(backend: Backend) -> None:
    backend.store.upsert(POINTS)
    backend.store.upsert([])
    assert backend.store.count() == len(POINTS)
    assert _ids(backend.store.scroll(StoreFilter())) == oracle_ids(POINTS, StoreFilter())
    changed = StoredPoint(POINTS[0].id, POINTS[0].vector, {**POINTS[0].payload, "tenant_id": "tenant-9"})
    backend.store.upsert([changed])
    assert backend.store.count() == len(POINTS)
    assert _ids(backend.store.scroll(FILTERS["no_match"])) == [POINTS[0].id]


def test_ensure_collection_is_idempotent(backend: Backend) -> None:
    backend.store.ensure_collection(DIM)
    assert backend.store.count() == len(POINTS)


def test_survives_close_and_reopen(persistent: Backend) -> None:
    assert persistent.reopen is not None
    persistent.store.delete([POINTS[0].id])
    persistent.store.close()
    reopened = persistent.reopen()
    persistent.store = reopened  # the fixture closes whatever is current
    reopened.ensure_collection(DIM)
    rest = POINTS[1:]
    assert reopened.count() == len(rest)
    flt = FILTERS["recall_shape"]
    assert _ids(reopened.search(QUERIES[2], flt, 5)) == oracle_search(rest, QUERIES[2], flt, 5)
    assert _ids(reopened.scroll(FILTERS["valid_at"])) == oracle_ids(rest, FILTERS["valid_at"])


def test_backends_agree_with_each_other(tmp_path: Path) -> None:
    """The same calls on every available backend give the same ids in the same order."""
    made = {name: make(tmp_path / name) for name, make in BACKENDS.items()}
    stores = {name: b.store for name, b in made.items()}
    try:
        for store in stores.values():
            store.ensure_collection(DIM)
            store.upsert(POINTS)
            store.delete([POINTS[7].id])
        for flt in FILTERS.values():
            results = {
                name: (
                    [_ids(s.search(q, flt, 10)) for q in QUERIES],
                    s.count(flt),
                    _ids(s.scroll(flt)),
                )
                for name, s in stores.items()
            }
            first = next(iter(results.values()))
            assert all(r == first for r in results.values()), results
    finally:
        for b in made.values():
            b.store.close()
            b.cleanup()


# --- errors ----------------------------------------------------------------------------------


def test_wrong_dimension_is_a_store_error(backend: Backend) -> None:
    with pytest.raises(StoreError):
        backend.store.upsert([StoredPoint(str(uuid.uuid4()), np.ones(DIM + 1, np.float32), {})])


def test_bad_datetime_in_filter_is_a_store_error(shared: Backend) -> None:
    with pytest.raises(StoreError):
        shared.store.search(QUERIES[0], StoreFilter(valid_at="not a date"), 5)


def test_reopening_with_another_dimension_fails_at_start(tmp_path: Path) -> None:
    edge = QdrantEdgeStore(tmp_path / "e")
    edge.ensure_collection(DIM)
    edge.close()
    with pytest.raises(ConfigurationError):
        QdrantEdgeStore(tmp_path / "e").ensure_collection(DIM * 2)
    local = QdrantClientStore.local(None)
    local.ensure_collection(DIM)
    with pytest.raises(ConfigurationError):
        local.ensure_collection(DIM * 2)


def test_edge_reads_before_ensure_collection_fail_clearly(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="ensure_collection"):
        QdrantEdgeStore(tmp_path / "never").count()


def test_edge_refuses_a_second_open_of_the_same_shard(tmp_path: Path) -> None:
    late = QdrantEdgeStore(tmp_path)  # nothing on disk yet: opens nothing
    first = QdrantEdgeStore(tmp_path)
    first.ensure_collection(DIM)
    with pytest.raises(StoreError, match="WAL"):
        QdrantEdgeStore(tmp_path)  # reopen in the constructor
    with pytest.raises(StoreError, match="WAL"):
        late.ensure_collection(DIM)  # reopen in ensure_collection
    first.close()


def test_edge_reopens_for_reads_without_ensure_collection(tmp_path: Path) -> None:
    first = QdrantEdgeStore(tmp_path)
    first.ensure_collection(DIM)
    first.upsert(POINTS)
    first.close()
    first.close()  # idempotent
    second = QdrantEdgeStore(tmp_path)
    assert second.count() == len(POINTS)
    assert second.optimize() in (True, False)
    assert second.indexed_vectors() >= 0
    second.close()


# --- retry policy (server only) ----------------------------------------------------------------


def _http_error(status: int) -> UnexpectedResponse:
    return UnexpectedResponse(status, "boom", b"{}", httpx.Headers())


class _FlakyClient:
    """Stands in for QdrantClient.count: raises the queued errors, then answers."""

    def __init__(self, errors: list[Exception]) -> None:
        self.errors = errors
        self.calls = 0

    def count(self, *_: object, **__: object) -> Any:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return type("CountResult", (), {"count": 42})()


def _store(client: _FlakyClient, *, remote: bool, sleeps: list[float]) -> QdrantClientStore:
    return QdrantClientStore(client, "c", remote=remote, backoff_s=0.01, sleep=sleeps.append)  # type: ignore[arg-type]


def test_transient_server_errors_are_retried_with_backoff() -> None:
    sleeps: list[float] = []
    client = _FlakyClient([_http_error(503), ResponseHandlingException(httpx.ConnectError("reset"))])
    assert _store(client, remote=True, sleeps=sleeps).count() == 42
    assert client.calls == 3
    assert sleeps == [0.01, 0.02]


def test_retries_are_bounded() -> None:
    sleeps: list[float] = []
    client = _FlakyClient([_http_error(502)] * 5)
    with pytest.raises(StoreError, match="3 attempt") as info:
        _store(client, remote=True, sleeps=sleeps).count()
    assert client.calls == 3
    assert isinstance(info.value.__cause__, UnexpectedResponse)


def test_permanent_and_local_errors_are_not_retried() -> None:
    sleeps: list[float] = []
    client = _FlakyClient([_http_error(400)])
    with pytest.raises(StoreError):
        _store(client, remote=True, sleeps=sleeps).count()
    local = _FlakyClient([httpx.ConnectError("local mode never retries")])
    with pytest.raises(StoreError):
        _store(local, remote=False, sleeps=sleeps).count()
    assert (client.calls, local.calls, sleeps) == (1, 1, [])


def test_attempts_must_be_positive() -> None:
    with pytest.raises(ConfigurationError):
        QdrantClientStore(QdrantClient(location=":memory:"), "c", remote=True, attempts=0)


class _RacingClient:
    """Another worker creates the collection between our existence check and our create."""

    def __init__(self) -> None:
        self.indexes: list[str] = []

    def collection_exists(self, *_: object) -> bool:
        return False

    def create_collection(self, *_: object, **__: object) -> None:
        raise _http_error(409)

    def create_payload_index(self, _collection: str, field_name: str, *_: object, **__: object) -> None:
        self.indexes.append(field_name)


def test_server_create_race_is_tolerated_and_indexes_are_created() -> None:
    client = _RacingClient()
    QdrantClientStore(client, "c", remote=True).ensure_collection(DIM)  # type: ignore[arg-type]
    assert set(client.indexes) == {*KEYWORD_INDEXES, *FLOAT_INDEXES, *DATETIME_INDEXES}


def test_other_create_failures_propagate() -> None:
    client = _RacingClient()
    client.create_collection = lambda *_, **__: (_ for _ in ()).throw(_http_error(403))  # type: ignore[method-assign]
    with pytest.raises(StoreError, match="create_collection"):
        QdrantClientStore(client, "c", remote=True).ensure_collection(DIM)  # type: ignore[arg-type]


def test_unreachable_server_is_a_store_error_after_bounded_retries() -> None:
    store = QdrantClientStore.server("http://127.0.0.1:9", None, "c", timeout_s=1.0)
    assert store.name == "qdrant_server"
    with pytest.raises(StoreError, match="after 3 attempt"):
        store.count()
    store.close()


@pytest.mark.parametrize(
    ("exc", "transient"),
    [
        (_http_error(429), True),
        (_http_error(500), True),
        (_http_error(404), False),
        (httpx.ReadTimeout("slow"), True),
        (ValueError("bad input"), False),
    ],
)
def test_is_transient(exc: Exception, transient: bool) -> None:
    assert is_transient(exc) is transient


def test_edge_ensure_collection_again_keeps_the_open_shard_and_still_checks_the_dimension(tmp_path: Path) -> None:
    edge = QdrantEdgeStore(tmp_path / "e")
    edge.ensure_collection(DIM)
    edge.upsert(POINTS[:3])
    shard = edge._shard
    edge.ensure_collection(DIM)  # a flow's sink ensuring the store its caller opened: no reload
    assert edge._shard is shard
    assert edge.count() == 3
    with pytest.raises(ConfigurationError):
        edge.ensure_collection(DIM * 2)
    edge.close()
