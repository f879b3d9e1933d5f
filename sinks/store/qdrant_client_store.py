"""MemoryStore on qdrant-client: local mode (in-memory or a folder) or a Qdrant server.

Why both behind one class: the calls are identical, only the transport differs. Local mode
is pure Python (no payload indexes, filters evaluated point by point), handy for tests and
small demos; the server is the production backend for many workers. Backend exceptions
become `StoreError`; only a server's transient failures (timeouts, connection resets,
408/429/5xx) are retried, a bounded number of times with exponential backoff, because
every operation here is idempotent (ids are memory ids).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TypeVar

import httpx
import numpy as np
from qdrant_client import QdrantClient
from qdrant_client import models as qm
from qdrant_client.http.exceptions import ApiException, ResponseHandlingException, UnexpectedResponse

from schemas.errors import ConfigurationError, StoreError
from sinks.store.base import (
    DATETIME_INDEXES,
    FLOAT_INDEXES,
    KEYWORD_INDEXES,
    Hit,
    StoredPoint,
    StoreFilter,
    Vector,
)

T = TypeVar("T")

_TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})
# What the client raises: HTTP/API failures, pydantic/local-mode ValueErrors, lock/IO errors.
_BACKEND_ERRORS: tuple[type[Exception], ...] = (ApiException, httpx.HTTPError, ValueError, RuntimeError, OSError)
_SCROLL_PAGE = 1_000


def is_transient(exc: Exception) -> bool:
    """True for failures worth retrying against a server: timeouts, resets, 408/429/5xx.

    >>> is_transient(ValueError("bad vector"))
    False
    """
    if isinstance(exc, UnexpectedResponse):
        return exc.status_code in _TRANSIENT_STATUS
    return isinstance(exc, ResponseHandlingException | httpx.TransportError)


def _instant(iso: str | None) -> datetime | None:
    """Parse an ISO-8601 bound; a naive one is taken as UTC, as the Qdrant engine does."""
    if iso is None:
        return None
    try:
        parsed = datetime.fromisoformat(iso)
    except ValueError as exc:
        msg = f"not an ISO-8601 datetime in a store filter: {iso!r}"
        raise StoreError(msg) from exc
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def client_filter(flt: StoreFilter | None) -> qm.Filter | None:
    """Translate a StoreFilter into a qdrant-client filter (a conjunction; None when empty).

    >>> client_filter(StoreFilter()) is None
    True
    """
    if flt is None:
        return None
    must: list[qm.Condition] = []
    for key, wanted in flt.match.items():
        # A str is itself a Sequence: test it first so "abc" is not matched as any-of a/b/c.
        if isinstance(wanted, str):
            must.append(qm.FieldCondition(key=key, match=qm.MatchValue(value=wanted)))
        else:
            must.append(qm.FieldCondition(key=key, match=qm.MatchAny(any=list(wanted))))
    if flt.min_confidence is not None:
        must.append(qm.FieldCondition(key="confidence_score", range=qm.Range(gte=flt.min_confidence)))
    if flt.not_before is not None or flt.not_after is not None:
        must.append(
            qm.FieldCondition(
                key="ts", range=qm.DatetimeRange(gte=_instant(flt.not_before), lte=_instant(flt.not_after))
            )
        )
    if flt.valid_at is not None:
        # is_empty covers both a null and a missing effective_to: such memories never expire.
        still_valid = qm.FieldCondition(key="validity.effective_to", range=qm.DatetimeRange(gte=_instant(flt.valid_at)))
        no_end = qm.IsEmptyCondition(is_empty=qm.PayloadField(key="validity.effective_to"))
        must.append(qm.Filter(should=[still_valid, no_end]))
    return qm.Filter(must=must) if must else None


def _vector(raw: object) -> Vector | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        msg = f"qdrant-client returned an unexpected vector type: {type(raw).__name__}"
        raise StoreError(msg)
    return np.asarray(raw, dtype=np.float32)


class QdrantClientStore:
    """A memory store over qdrant-client; build it with `local(...)` or `server(...)`.

    >>> import numpy as np
    >>> from sinks.store.base import StoredPoint, StoreFilter
    >>> store = QdrantClientStore.local(None)
    >>> store.ensure_collection(2)
    >>> pid = "00000000-0000-4000-8000-000000000001"
    >>> store.upsert([StoredPoint(pid, np.array([1.0, 0.0], np.float32), {"tenant_id": "t"})])
    >>> [h.id for h in store.search(np.array([1.0, 0.1], np.float32), StoreFilter(), 5)] == [pid]
    True
    >>> store.close()
    """

    def __init__(
        self,
        client: QdrantClient,
        collection: str,
        *,
        remote: bool,
        attempts: int = 3,
        backoff_s: float = 0.1,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._client = client
        self._collection = collection
        self._remote = remote
        self._attempts = attempts if remote else 1
        self._backoff_s = backoff_s
        self._sleep = sleep
        self.name = "qdrant_server" if remote else "qdrant_local"

    @classmethod
    def local(cls, path: Path | None, collection: str = "memory") -> QdrantClientStore:
        """Local mode: in-memory when `path` is None, else persisted (and locked) in that folder."""
        client = QdrantClient(location=":memory:") if path is None else QdrantClient(path=str(path))
        return cls(client, collection, remote=False)

    @classmethod
    def server(
        cls, url: str, api_key: str | None, collection: str = "memory", timeout_s: float = 5.0
    ) -> QdrantClientStore:
        """A Qdrant server over HTTP; constructing it does no network I/O."""
        client = QdrantClient(
            url=url,
            api_key=api_key,
            timeout=max(1, round(timeout_s)),
            check_compatibility=False,  # that check is a blocking request; the first call reveals trouble
        )
        return cls(client, collection, remote=True)

    def _call(self, op: str, fn: Callable[[], T]) -> T:
        """Run one backend call, retrying transient server errors, translating the rest."""
        for attempt in range(1, self._attempts + 1):
            try:
                return fn()
            except _BACKEND_ERRORS as exc:
                if attempt < self._attempts and is_transient(exc):
                    self._sleep(self._backoff_s * 2 ** (attempt - 1))
                    continue
                msg = f"{self.name} {op} on {self._collection!r} failed after {attempt} attempt(s): {exc}"
                raise StoreError(msg) from exc
        msg = f"{self.name} {op}: no attempt made (attempts={self._attempts})"
        raise StoreError(msg)

    def ensure_collection(self, dim: int) -> None:
        """Create the collection (cosine) and, on a server, its payload indexes; check `dim`."""
        c = self._collection
        if self._call("collection_exists", lambda: self._client.collection_exists(c)):
            params = self._call("get_collection", lambda: self._client.get_collection(c)).config.params.vectors
            size = params.size if isinstance(params, qm.VectorParams) else None
            if size != dim:
                msg = f"collection {c!r} holds {size}-dim vectors, expected {dim}"
                raise ConfigurationError(msg)
        else:
            vectors = qm.VectorParams(size=dim, distance=qm.Distance.COSINE)
            try:
                self._call("create_collection", lambda: self._client.create_collection(c, vectors_config=vectors))
            except StoreError as exc:
                # Another worker may have created it between our check and our create.
                cause = exc.__cause__
                if not (isinstance(cause, UnexpectedResponse) and cause.status_code == 409):
                    raise
        if not self._remote:
            return  # local mode ignores payload indexes (and warns if asked)
        schemas = [
            *((f, qm.PayloadSchemaType.KEYWORD) for f in KEYWORD_INDEXES),
            *((f, qm.PayloadSchemaType.FLOAT) for f in FLOAT_INDEXES),
            *((f, qm.PayloadSchemaType.DATETIME) for f in DATETIME_INDEXES),
        ]
        for field_name, schema in schemas:
            self._call(
                "create_payload_index",
                partial(self._client.create_payload_index, c, field_name, schema, wait=True),
            )

    def upsert(self, points: Sequence[StoredPoint]) -> None:
        """Insert or overwrite points by id; waits until the write is searchable."""
        if not points:
            return
        structs = [
            qm.PointStruct(id=p.id, vector=np.asarray(p.vector, dtype=np.float32).tolist(), payload=p.payload)
            for p in points
        ]
        self._call("upsert", lambda: self._client.upsert(self._collection, structs, wait=True))

    def search(self, vector: Vector, flt: StoreFilter, limit: int, *, with_vectors: bool = False) -> list[Hit]:
        """Nearest points by cosine similarity among those matching `flt`, best first."""
        query = np.asarray(vector, dtype=np.float32).tolist()
        response = self._call(
            "search",
            lambda: self._client.query_points(
                self._collection,
                query=query,
                query_filter=client_filter(flt),
                limit=limit,
                with_payload=True,
                with_vectors=with_vectors,
            ),
        )
        return [
            Hit(
                id=str(p.id),
                score=float(p.score),
                payload=dict(p.payload or {}),
                vector=_vector(p.vector) if with_vectors else None,
            )
            for p in response.points
        ]

    def retrieve(self, ids: Sequence[str], *, with_vectors: bool = False) -> list[Hit]:
        """Points by id in the order asked (missing ids skipped); score is 0."""
        if not ids:
            return []
        wanted = list(dict.fromkeys(ids))
        records = self._call(
            "retrieve",
            lambda: self._client.retrieve(self._collection, wanted, with_payload=True, with_vectors=with_vectors),
        )
        by_id = {str(r.id): r for r in records}
        return [
            Hit(
                id=i,
                score=0.0,
                payload=dict(by_id[i].payload or {}),
                vector=_vector(by_id[i].vector) if with_vectors else None,
            )
            for i in wanted
            if i in by_id
        ]

    def scroll(self, flt: StoreFilter, limit: int = 10_000) -> list[Hit]:
        """Points matching `flt`, ordered by id; score is 0."""
        out: list[Hit] = []
        offset: qm.ExtendedPointId | None = None
        query_filter = client_filter(flt)
        while len(out) < limit:
            page = partial(
                self._client.scroll,
                self._collection,
                scroll_filter=query_filter,
                limit=min(_SCROLL_PAGE, limit - len(out)),
                offset=offset,
                with_payload=True,
            )
            records, offset = self._call("scroll", page)
            out.extend(Hit(id=str(r.id), score=0.0, payload=dict(r.payload or {})) for r in records)
            if offset is None:
                break
        return sorted(out, key=lambda h: h.id)

    def count(self, flt: StoreFilter | None = None) -> int:
        """Exact number of points matching `flt` (all when None)."""
        result = self._call(
            "count", lambda: self._client.count(self._collection, count_filter=client_filter(flt), exact=True)
        )
        return result.count

    def delete(self, ids: Sequence[str]) -> None:
        """Remove points by id; unknown ids are ignored."""
        if not ids:
            return
        selector = qm.PointIdsList(points=list(ids))
        self._call("delete", lambda: self._client.delete(self._collection, selector, wait=True))

    def close(self) -> None:
        """Release the client (and, in local mode on disk, its folder lock)."""
        self._call("close", self._client.close)
