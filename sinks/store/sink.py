"""Bytewax sink that upserts embedded memory units into a MemoryStore.

Idempotent by construction: the point id is the unit's deterministic memory id, so
at-least-once delivery (recovery replays, repeated backfills) never duplicates a memory.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Sequence

from bytewax.outputs import DynamicSink, StatelessSinkPartition

from schemas.errors import StoreError
from schemas.memory import EmbeddedUnit
from sinks.store.base import MemoryStore, StoredPoint

log = logging.getLogger(__name__)
# Workers of one process share one store handle and build their sink partitions at the same
# time: creating the collection must happen once, not race (qdrant-edge fails with "Shard is
# not initialized" when two threads create the same shard).
_ENSURE_LOCK = threading.Lock()


def to_points(items: Sequence[EmbeddedUnit]) -> list[StoredPoint]:
    return [StoredPoint(id=e.unit.memory_id, vector=e.vector, payload=e.unit.model_dump(mode="json")) for e in items]


class _StorePartition(StatelessSinkPartition[EmbeddedUnit]):
    def __init__(self, store: MemoryStore, retries: int, backoff_s: float) -> None:
        self._store = store
        self._retries = retries
        self._backoff_s = backoff_s

    def write_batch(self, items: list[EmbeddedUnit]) -> None:
        points = to_points(items)
        for attempt in range(1, self._retries + 1):
            started = time.perf_counter()
            try:
                self._store.upsert(points)
            except StoreError as exc:
                log.warning(
                    json.dumps({"op": "store.upsert", "attempt": attempt, "points": len(points), "error": str(exc)})
                )
                if attempt == self._retries:
                    raise
                time.sleep(self._backoff_s * attempt)
                continue
            log.debug(
                json.dumps(
                    {
                        "op": "store.upsert",
                        "points": len(points),
                        "ms": round((time.perf_counter() - started) * 1000, 2),
                    }
                )
            )
            return


class StoreSink(DynamicSink[EmbeddedUnit]):
    """`open_store` returns the process-wide store (workers of a process share one handle)."""

    def __init__(
        self, open_store: Callable[[], MemoryStore], dim: int, retries: int = 5, backoff_s: float = 0.5
    ) -> None:
        self._open_store = open_store
        self._dim = dim
        self._retries = retries
        self._backoff_s = backoff_s

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _StorePartition:
        store = self._open_store()
        with _ENSURE_LOCK:
            store.ensure_collection(self._dim)
        return _StorePartition(store, self._retries, self._backoff_s)
