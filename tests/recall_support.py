"""Factories shared by the recall tests: memory units with typed overrides, a store, a service."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from schemas.memory import EmotionLoad, MemoryUnit, Validity, memory_id
from schemas.recall import RecallRequest
from sinks.store.base import StoredPoint
from sinks.store.qdrant_edge import QdrantEdgeStore
from state.core.embedding import Embedder

T0 = datetime(2025, 6, 1, 9, 0, tzinfo=UTC)


def unit(
    text: str,
    *,
    n: int,
    tenant: str = "t1",
    user: str = "u1",
    session: str = "s-old",
    ts: datetime | None = None,
    validity: Validity | None = None,
    emotion: EmotionLoad | None = None,
    **fields: Any,
) -> MemoryUnit:
    event = f"e{n}"
    return MemoryUnit(
        memory_id=memory_id(tenant, session, event, 0),
        unit_index=0,
        tenant_id=tenant,
        session_id=session,
        user_id=user,
        turn_id=event,
        event_id=event,
        ts=ts or T0 + timedelta(minutes=n),
        text=text,
        source_text=text,
        validity=validity or Validity(),
        emotion=emotion or EmotionLoad(),
        **fields,
    )


def fill_store(path: Path, embedder: Embedder, units: Sequence[MemoryUnit]) -> QdrantEdgeStore:
    store = QdrantEdgeStore(path)
    store.ensure_collection(embedder.dim)
    vectors = embedder.passage([u.text for u in units])
    store.upsert([StoredPoint(u.memory_id, v, u.model_dump(mode="json")) for u, v in zip(units, vectors, strict=True)])
    return store


def ask(
    text: str, *, at: datetime, tenant: str = "t1", user: str = "u1", event: str = "q1", **fields: Any
) -> RecallRequest:
    return RecallRequest(
        query_event_id=event, session_id="s-now", tenant_id=tenant, user_id=user, query_text=text, ts=at, **fields
    )
