"""A dict-backed MemoryStore with the StoreFilter semantics documented in sinks.store.base."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np

from sinks.store.base import Hit, StoredPoint, StoreFilter, Vector


def _get(payload: dict, path: str):  # type: ignore[no-untyped-def,type-arg]
    value = payload
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


class DictStore:
    name = "dict"

    def __init__(self) -> None:
        self.points: dict[str, StoredPoint] = {}
        self.dim = 0

    def ensure_collection(self, dim: int) -> None:
        self.dim = dim

    def upsert(self, points: Sequence[StoredPoint]) -> None:
        for p in points:
            self.points[p.id] = p

    def _matches(self, p: StoredPoint, flt: StoreFilter) -> bool:
        for key, want in flt.match.items():
            have = _get(p.payload, key)
            if isinstance(want, str) and have != want:
                return False
            if not isinstance(want, str) and have not in want:
                return False
        if flt.valid_at is not None:
            to = _get(p.payload, "validity.effective_to")
            if to is not None and datetime.fromisoformat(to) < datetime.fromisoformat(flt.valid_at):
                return False
        return True

    def search(self, vector: Vector, flt: StoreFilter, limit: int, *, with_vectors: bool = False) -> list[Hit]:
        hits = [
            Hit(p.id, float(np.dot(vector, p.vector)), p.payload, p.vector if with_vectors else None)
            for p in self.points.values()
            if self._matches(p, flt)
        ]
        return sorted(hits, key=lambda h: -h.score)[:limit]

    def retrieve(self, ids: Sequence[str], *, with_vectors: bool = False) -> list[Hit]:
        return [
            Hit(i, 0.0, self.points[i].payload, self.points[i].vector if with_vectors else None)
            for i in ids
            if i in self.points
        ]

    def scroll(self, flt: StoreFilter, limit: int = 10_000) -> list[Hit]:
        return [
            Hit(p.id, 0.0, p.payload) for p in sorted(self.points.values(), key=lambda p: p.id) if self._matches(p, flt)
        ][:limit]

    def count(self, flt: StoreFilter | None = None) -> int:
        return len(self.scroll(flt or StoreFilter()))

    def delete(self, ids: Sequence[str]) -> None:
        for i in ids:
            self.points.pop(i, None)

    def close(self) -> None:
        pass
