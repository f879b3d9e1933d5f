"""The memory store interface every backend implements.

Backends: `qdrant_edge` (the Qdrant engine in-process via qdrant-edge-py: HNSW and payload
indexes), `qdrant_local` (qdrant-client local mode), `qdrant_server` (qdrant-client against a
server URL). Upserts are idempotent: a point id is the memory id, so a replay overwrites.
Payloads are JSON (the MemoryUnit dumped with mode="json"); this is the serialisation edge.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from state.recall.timeline import Timeline

# Payload fields that recall filters on; every backend builds a payload index on each.
KEYWORD_INDEXES: tuple[str, ...] = (
    "tenant_id",
    "user_id",
    "session_id",
    "task_id",
    "unit_type",
    "intent_label",
    "topic",
    "speaker_role",
    "resolution_status",
    "validity.validity_type",
)
FLOAT_INDEXES: tuple[str, ...] = ("confidence_score",)
DATETIME_INDEXES: tuple[str, ...] = ("ts", "validity.effective_to")

Vector = npt.NDArray[np.float32]
Payload = dict[str, Any]


@dataclass(frozen=True, slots=True)
class StoredPoint:
    id: str
    vector: Vector
    payload: Payload


@dataclass(frozen=True, slots=True)
class Hit:
    id: str
    score: float
    payload: Payload
    vector: Vector | None = None


@dataclass(frozen=True, slots=True)
class StoreFilter:
    """Conjunction of exact matches (field → value or any-of values) and ranges.

    `match` keys are payload paths such as "tenant_id" or "validity.validity_type".
    `not_before`/`not_after` bound `ts`; `valid_at` drops points whose
    `validity.effective_to` is before it (points with no effective_to always pass).
    """

    match: Mapping[str, str | Sequence[str]] = field(default_factory=dict)
    min_confidence: float | None = None
    not_before: str | None = None
    not_after: str | None = None
    valid_at: str | None = None


class MemoryStore(Protocol):
    """What a memory store backend must offer."""

    name: str

    def ensure_collection(self, dim: int) -> None:
        """Create the collection and payload indexes if missing; idempotent."""

    def upsert(self, points: Sequence[StoredPoint]) -> None:
        """Insert or overwrite points by id."""

    def search(self, vector: Vector, flt: StoreFilter, limit: int, *, with_vectors: bool = False) -> list[Hit]:
        """Nearest points by cosine similarity among those matching `flt`, best first."""

    def retrieve(self, ids: Sequence[str], *, with_vectors: bool = False) -> list[Hit]:
        """Points by id (missing ids are skipped); score is 0."""

    def scroll(self, flt: StoreFilter, limit: int = 10_000) -> list[Hit]:
        """Points matching `flt`, ordered by id; score is 0."""

    def count(self, flt: StoreFilter | None = None) -> int:
        """Number of points matching `flt` (all when None)."""

    def delete(self, ids: Sequence[str]) -> None:
        """Remove points by id."""

    def close(self) -> None:
        """Flush and release resources."""


@runtime_checkable
class TimelineSource(Protocol):
    """A store that keeps each user's timeline indexed as it is written (`state.recall.timeline_index`)."""

    def timeline(
        self, scope: Mapping[str, str], at: datetime, skip: Collection[str], limit: int, stopwords: frozenset[str]
    ) -> Timeline | None:
        """What `scroll(StoreFilter(match=scope, valid_at=at, not_after=at), limit)` returns, less
        the memories of the events in `skip`, as a `Timeline`; None when this store keeps no index."""
