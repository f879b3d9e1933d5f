"""MemoryStore on qdrant-edge-py: the Qdrant engine (HNSW, payload indexes, WAL) in-process.

Why this backend: it is the same engine as the Qdrant server (same filter semantics, same
on-disk segment format) without a service to run, and unlike qdrant-client's local mode it
filters through payload indexes instead of Python loops, so filtered recall stays fast at
100k memories on a laptop.

One collection is one Edge shard, kept in `path / collection`. Engine behaviour this module
relies on (qdrant-edge-py 0.9):

* Writes go through the write-ahead log and are visible to the very next read; `close()`
  flushes, so a later process can `load` the shard and see everything written.
* There is no background optimiser: new points sit in an appendable, brute-force searched
  segment until `optimize()` runs, which builds HNSW (and blocks; seconds per 10k points).
  Filtered search on that segment is still index-assisted and fast, so the write path never
  optimises implicitly; call `optimize()` on a timer or at idle time.
* The engine raises plain `Exception` for every failure, so that exact type is translated
  into `StoreError`; subclasses (TypeError, …) are our own bugs and propagate.
* Only one `EdgeShard` may be open per directory at a time.

Because of that lock this handle sees every write to its shard, so it also keeps each user's
timeline indexed for recall (`state.recall.timeline_index`): a scope is read from the shard on
its first question, then every upsert and delete updates it inside the same step; closing or
reopening the shard drops the index, and the next question reads the shard again.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import qdrant_edge as qe

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
from state.recall.timeline_index import IndexedTimeline, TimelineIndex

# Page size for scroll: big enough to keep round trips few, small enough to bound memory.
_SCROLL_PAGE = 1_000
_CONFIG_FILE = "edge_config.json"


@contextmanager
def _engine_errors(op: str) -> Iterator[None]:
    """Translate qdrant-edge's plain `Exception` into `StoreError`; let real bugs through."""
    try:
        yield
    except Exception as exc:
        if type(exc) is not Exception:
            raise
        msg = f"qdrant-edge {op} failed: {exc}"
        raise StoreError(msg) from exc


# Payload fields no filter reads, stored together as one JSON string. The engine's binding
# converts every payload value on its own (~2 µs a string or a float, 15-25 µs a small object):
# these nested fields were most of a point's cost (~75 of ~130 µs a memory unit). Reads unpack
# them; a point written without the pack keeps them as they are. Never a filter key (those are
# the indexed fields of `sinks.store.base`).
_PACKED = ("coref", "intent", "emotion", "times", "merged_from", "context_prev", "terms")
_PACK_KEY = "_packed"


def _pack(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The payload as the engine stores it: the `_PACKED` fields as one JSON string.

    >>> _pack({"tenant_id": "t", "intent": {"question": 0.9}})
    {'tenant_id': 't', '_packed': '{"intent":{"question":0.9}}'}
    """
    out = {k: v for k, v in payload.items() if k not in _PACKED}
    packed = {k: payload[k] for k in _PACKED if k in payload}
    if packed:
        out[_PACK_KEY] = orjson.dumps(packed).decode()
    return out


def _unpack(stored: Mapping[str, Any] | None) -> dict[str, Any]:
    """The payload as written, from what the engine stores (`_pack`).

    >>> written = {"tenant_id": "t", "intent": {"question": 0.9}}
    >>> _unpack(_pack(written)) == written
    True
    """
    out = dict(stored or {})
    blob = out.pop(_PACK_KEY, None)
    if isinstance(blob, str):
        out.update(orjson.loads(blob))
    return out


def _point_ids(ids: Sequence[str]) -> list[qe.PointId]:
    """Point ids as the binding's signature types them (uuid strings)."""
    return list(ids)


def _as_vector(raw: object) -> Vector:
    return np.asarray(raw, dtype=np.float32)


def _datetime_range(gte: str | None = None, lte: str | None = None) -> qe.RangeDateTime:
    """An ISO-8601 range; the binding parses it eagerly and raises ValueError on garbage."""
    try:
        return qe.RangeDateTime(gte=gte, lte=lte)
    except ValueError as exc:
        msg = f"not an ISO-8601 datetime in a store filter: gte={gte!r} lte={lte!r}"
        raise StoreError(msg) from exc


def edge_filter(flt: StoreFilter | None) -> qe.Filter | None:
    """Translate a StoreFilter into an Edge filter (a conjunction; None when empty).

    >>> edge_filter(StoreFilter()) is None
    True
    """
    if flt is None:
        return None
    must: list[qe.FieldCondition | qe.Filter] = []
    for key, wanted in flt.match.items():
        # A str is itself a Sequence: test it first so "abc" is not matched as any-of a/b/c.
        if isinstance(wanted, str):
            must.append(qe.FieldCondition(key, match=qe.MatchValue(wanted)))
        else:
            must.append(qe.FieldCondition(key, match=qe.MatchAny(list(wanted))))
    if flt.min_confidence is not None:
        must.append(qe.FieldCondition("confidence_score", range=qe.RangeFloat(gte=flt.min_confidence)))
    if flt.not_before is not None or flt.not_after is not None:
        must.append(qe.FieldCondition("ts", range=_datetime_range(flt.not_before, flt.not_after)))
    if flt.valid_at is not None:
        # is_empty covers both a null and a missing effective_to: such memories never expire.
        still_valid = qe.FieldCondition("validity.effective_to", range=_datetime_range(gte=flt.valid_at))
        must.append(qe.Filter(should=[still_valid, qe.IsEmptyCondition("validity.effective_to")]))
    return qe.Filter(must=list(must)) if must else None


class QdrantEdgeStore:
    """A persistent, in-process memory store (one Edge shard per collection).

    >>> import tempfile, numpy as np
    >>> from sinks.store.base import StoredPoint, StoreFilter
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     store = QdrantEdgeStore(Path(tmp))
    ...     store.ensure_collection(2)
    ...     pid = "00000000-0000-4000-8000-000000000001"
    ...     store.upsert([StoredPoint(pid, np.array([1.0, 0.0], np.float32), {"tenant_id": "t"})])
    ...     hits = store.search(np.array([1.0, 0.1], np.float32), StoreFilter(match={"tenant_id": "t"}), 5)
    ...     store.close()
    >>> [h.id for h in hits] == [pid]
    True
    """

    name = "qdrant_edge"

    def __init__(
        self,
        path: Path,
        collection: str = "memory",
        *,
        hnsw_m: int = 16,
        hnsw_ef_construct: int = 100,
        timeline_rows: int = 100_000,
    ) -> None:
        self._dir = path / collection
        self._hnsw = qe.HnswIndexConfig(m=hnsw_m, ef_construct=hnsw_ef_construct, full_scan_threshold=10_000)
        self._shard: qe.EdgeShard | None = None
        self._timeline_rows = timeline_rows
        self._timelines = self._new_timelines()
        self._ensured_dim: int | None = None  # the dim ensure_collection opened the shard for
        if (self._dir / _CONFIG_FILE).exists():
            # Reopen what an earlier process wrote so reads work before ensure_collection.
            with _engine_errors("load"):
                self._shard = qe.EdgeShard.load(str(self._dir))

    def _new_timelines(self, *, empty: bool = False) -> TimelineIndex:
        """`empty`: the shard holds no point yet, so the index sees every memory from the start."""
        return TimelineIndex(self._scope_memories, max_rows=self._timeline_rows, complete=empty)

    def _scope_memories(self, scope: Mapping[str, str]) -> list[tuple[str, dict[str, Any]]]:
        return [(h.id, h.payload) for h in self.scroll(StoreFilter(match=scope), sys.maxsize)]

    def _config(self, dim: int) -> qe.EdgeConfig:
        return qe.EdgeConfig(
            vectors=qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine),
            hnsw_config=self._hnsw,
        )

    def _open(self) -> qe.EdgeShard:
        if self._shard is None:
            msg = f"edge shard {self._dir} is not open: call ensure_collection(dim) first"
            raise StoreError(msg)
        return self._shard

    def ensure_collection(self, dim: int) -> None:
        """Create the shard, or reopen it checking `dim`, then add any missing payload index.
        Already ensured for `dim` on this handle: nothing to do (a flow's sink ensures the store a
        caller may have opened and ensured before)."""
        if self._shard is not None and self._ensured_dim == dim:
            return
        config = self._config(dim)
        if self._shard is not None:
            # Reloading with a config is how the engine validates it against stored segments.
            self.close()
        self._dir.mkdir(parents=True, exist_ok=True)
        self._timelines = self._new_timelines()
        try:
            if (self._dir / _CONFIG_FILE).exists():
                self._shard = qe.EdgeShard.load(str(self._dir), config)
            else:
                self._shard = qe.EdgeShard.create(str(self._dir), config)
        except Exception as exc:
            if type(exc) is not Exception:
                raise
            if "incompatible" in str(exc).lower():
                msg = f"edge shard {self._dir} does not hold {dim}-dim cosine vectors: {exc}"
                raise ConfigurationError(msg) from exc
            msg = f"qdrant-edge open failed: {exc}"
            raise StoreError(msg) from exc
        self._ensure_indexes(self._shard)
        self._timelines = self._new_timelines(empty=self.count() == 0)
        self._ensured_dim = dim

    @staticmethod
    def _ensure_indexes(shard: qe.EdgeShard) -> None:
        wanted: list[tuple[str, qe.PayloadSchemaType]] = [
            *((f, qe.PayloadSchemaType.Keyword) for f in KEYWORD_INDEXES),
            *((f, qe.PayloadSchemaType.Float) for f in FLOAT_INDEXES),
            *((f, qe.PayloadSchemaType.Datetime) for f in DATETIME_INDEXES),
        ]
        with _engine_errors("create_field_index"):
            present = set(shard.info().payload_schema)
            for field_name, schema in wanted:
                if field_name not in present:
                    shard.update(qe.UpdateOperation.create_field_index(field_name, schema))

    def upsert(self, points: Sequence[StoredPoint]) -> None:
        """Insert or overwrite points by id; visible to the next read, durable via the WAL.
        The payloads must be JSON values (`model_dump(mode="json")`): the timeline index keeps a
        JSON copy of each as written, which search and retrieve hand out."""
        if not points:
            return
        batch = [qe.Point(p.id, np.asarray(p.vector, dtype=np.float32).tolist(), _pack(p.payload)) for p in points]
        with self._timelines.lock, _engine_errors("upsert"):  # the write and its index update as one step
            self._open().update(qe.UpdateOperation.upsert_points(batch))
            self._timelines.written((p.id, p.payload) for p in points)

    def search(self, vector: Vector, flt: StoreFilter, limit: int, *, with_vectors: bool = False) -> list[Hit]:
        """Nearest points by cosine similarity among those matching `flt`, best first.

        The engine ranks without reading payloads back (reading one costs ~15 µs, the ranking of
        300 hits far less): the payloads come from the timeline index, which holds every memory
        of the scopes recall has asked as written (JSON, decoded in ~3 µs), and from one `retrieve`
        for the rest."""
        request = qe.SearchRequest(
            query=qe.Query.Nearest(np.asarray(vector, dtype=np.float32).tolist()),
            limit=limit,
            filter=edge_filter(flt),
            with_payload=False,
            with_vector=with_vectors,
        )
        with _engine_errors("search"):
            found = [(str(p.id), float(p.score), p.vector) for p in self._open().search(request)]
        payloads = self._timelines.payloads(mid for mid, _, _ in found)  # fresh dicts, one per hit
        missing = [mid for mid, _, _ in found if mid not in payloads]
        if missing:
            payloads.update((str(r.id), _unpack(r.payload)) for r in self._records(missing, payload=True))
        return [
            Hit(
                id=mid,
                score=score,
                payload=payloads[mid],
                vector=_as_vector(vec) if with_vectors else None,
            )
            for mid, score, vec in found
            if mid in payloads  # deleted between the search and the read: gone
        ]

    def retrieve(self, ids: Sequence[str], *, with_vectors: bool = False) -> list[Hit]:
        """Points by id in the order asked (missing ids skipped); score is 0. Payloads the timeline
        index holds come from it (as `search`); the engine reads the rest, and the vectors."""
        if not ids:
            return []
        wanted = list(dict.fromkeys(ids))
        payloads = self._timelines.payloads(wanted)
        missing = [i for i in wanted if i not in payloads]
        vectors: dict[str, Vector] = {}
        if missing:
            for r in self._records(missing, payload=True, vectors=with_vectors):
                payloads[str(r.id)] = _unpack(r.payload)
                if with_vectors:
                    vectors[str(r.id)] = _as_vector(r.vector)
        held = [i for i in wanted if i in payloads and i not in vectors]
        if with_vectors and held:
            vectors.update((str(r.id), _as_vector(r.vector)) for r in self._records(held, vectors=True))
        return [
            Hit(id=i, score=0.0, payload=payloads[i], vector=vectors.get(i) if with_vectors else None)
            for i in wanted
            if i in payloads and (not with_vectors or i in vectors)
        ]

    def _records(self, ids: Sequence[str], *, payload: bool = False, vectors: bool = False) -> list[Any]:
        """The engine's records of `ids` (missing ids skipped), with what is asked for."""
        with _engine_errors("retrieve"):
            # The binding needs every argument positionally, although the stub marks them optional.
            return list(self._open().retrieve(_point_ids(ids), payload, vectors))

    def scroll(self, flt: StoreFilter, limit: int = 10_000) -> list[Hit]:
        """Points matching `flt`, ordered by id; score is 0."""
        out: list[Hit] = []
        offset: qe.PointId | None = None
        shard = self._open()
        engine_filter = edge_filter(flt)
        while len(out) < limit:
            request = qe.ScrollRequest(
                offset=offset,
                limit=min(_SCROLL_PAGE, limit - len(out)),
                filter=engine_filter,
                with_payload=True,
            )
            with _engine_errors("scroll"):
                records, offset = shard.scroll(request)
            out.extend(Hit(id=str(r.id), score=0.0, payload=_unpack(r.payload)) for r in records)
            if offset is None:
                break
        return sorted(out, key=lambda h: h.id)

    def count(self, flt: StoreFilter | None = None) -> int:
        """Exact number of points matching `flt` (all when None)."""
        with _engine_errors("count"):
            return self._open().count(qe.CountRequest(exact=True, filter=edge_filter(flt)))

    def delete(self, ids: Sequence[str]) -> None:
        """Remove points by id; unknown ids are ignored."""
        if not ids:
            return
        with self._timelines.lock, _engine_errors("delete"):
            self._open().update(qe.UpdateOperation.delete_points(list(ids)))
            self._timelines.removed(ids)

    def timeline(
        self, scope: Mapping[str, str], at: datetime, skip: Collection[str], limit: int, stopwords: frozenset[str]
    ) -> IndexedTimeline:
        """The scope's memories valid and said at `at` (the first `limit` by id, less the events in
        `skip`), from the index this handle keeps (`sinks.store.base.TimelineSource`)."""
        self._open()
        return self._timelines.view(scope, at, skip, limit, stopwords)

    def optimize(self) -> bool:
        """Build HNSW over accumulated points (blocking); True when anything was rebuilt."""
        with _engine_errors("optimize"):
            return self._open().optimize()

    def indexed_vectors(self) -> int:
        """How many vectors are in HNSW segments (the rest are searched by brute force)."""
        with _engine_errors("info"):
            return self._open().info().indexed_vectors_count

    def close(self) -> None:
        """Flush and release the shard directory; idempotent."""
        if self._shard is None:
            return
        shard, self._shard = self._shard, None
        self._ensured_dim = None
        self._timelines = self._new_timelines()
        with _engine_errors("close"):
            shard.flush()
            shard.close()
