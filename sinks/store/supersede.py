"""Execute a `SupersedeRequest` against the memory store: the user's statement replaces a memory.

Input: `SupersedeRequest` records (from the responder's reflection). Output: store writes,
through the `MemoryStore` protocol only (retrieve + upsert), so every backend works:

1. the user's statement becomes a new memory: a `MemoryUnit` with a deterministic id
   (`memory_id(tenant, session, "<event id>#correction", 0)`, so a replay overwrites it),
   confidence 1.0, `priority_flag`, the corrected text as `text` and the user's words as
   `source_text`, embedded with the store's embedder;
2. each wrong memory keeps its vector and text but gets `superseded_by` = the new memory's
   id and `validity.effective_to` = the correction time (never later than it already was).

Recall then drops the wrong memory through the validity filter it already applies
(`StoreFilter(valid_at=...)`: "expired memories never reach recall") and can explain why from
`superseded_by` (ValidityDecision "superseded"). Idempotent: running a request twice writes
the same points. Transient store errors are retried here (the one place that retries).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from datetime import datetime

from schemas.errors import StoreError
from schemas.memory import MemoryUnit, Validity, memory_id
from schemas.reflection import SupersedeRequest
from sinks.store.base import MemoryStore, StoredPoint
from state.core.embedding import Embedder

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SupersedeResult:
    statement_id: str
    superseded: tuple[str, ...]
    missing: tuple[str, ...]


def statement_memory_id(request: SupersedeRequest) -> str:
    """The id of the memory that holds the user's statement (deterministic per correction)."""
    return memory_id(request.tenant_id, request.session_id, f"{request.statement_event_id}#correction", 0)


def _earliest(current: str | None, ts: datetime) -> str:
    if current is None:
        return ts.isoformat()
    return min(datetime.fromisoformat(current), ts).isoformat()


class SupersedeExecutor:
    """`executor.execute(request)` → SupersedeResult; raises StoreError after its retries."""

    def __init__(self, store: MemoryStore, embedder: Embedder, *, retries: int = 3, backoff_s: float = 0.2) -> None:
        self._store = store
        self._embedder = embedder
        self._retries = retries
        self._backoff_s = backoff_s

    def _with_retry(self, what: str, call):  # type: ignore[no-untyped-def]
        for attempt in range(1, self._retries + 1):
            try:
                return call()
            except StoreError as exc:
                log.warning(json.dumps({"op": f"supersede.{what}", "attempt": attempt, "error": str(exc)[:300]}))
                if attempt == self._retries:
                    raise
                time.sleep(self._backoff_s * attempt)
        return None

    def execute(self, request: SupersedeRequest) -> SupersedeResult:
        started = time.perf_counter()
        new_id = statement_memory_id(request)
        hits = self._with_retry("retrieve", lambda: self._store.retrieve(list(request.memory_ids), with_vectors=True))
        found = {h.id: h for h in hits}
        template = found[request.memory_ids[0]].payload if request.memory_ids[0] in found else {}

        unit = MemoryUnit(
            memory_id=new_id,
            unit_index=0,
            tenant_id=request.tenant_id,
            session_id=request.session_id,
            user_id=request.user_id,
            task_id=request.task_id or template.get("task_id"),
            turn_id=request.statement_event_id,
            event_id=request.statement_event_id,
            ts=request.ts,
            text=request.statement_text,
            source_text=request.source_text,
            speaker_role="customer",
            lang=request.lang,
            unit_type="clarification",
            intent_label="clarify",
            confidence_score=1.0,
            priority_flag=True,
            topic=template.get("topic"),
            severity=template.get("severity", "low"),
            validity=Validity(validity_type="permanent", effective_from=request.ts, last_verified=request.ts),
        )
        vector = self._embedder.passage([request.statement_text])[0]
        points = [StoredPoint(id=new_id, vector=vector, payload=unit.model_dump(mode="json"))]
        for old_id in request.memory_ids:
            hit = found.get(old_id)
            if hit is None or hit.vector is None:
                continue
            payload = dict(hit.payload)
            validity = dict(payload.get("validity") or {})
            validity["effective_to"] = _earliest(validity.get("effective_to"), request.ts)
            payload["validity"] = validity
            payload["superseded_by"] = new_id
            points.append(StoredPoint(id=old_id, vector=hit.vector, payload=payload))
        self._with_retry("upsert", lambda: self._store.upsert(points))
        superseded = tuple(p.id for p in points[1:])
        missing = tuple(i for i in request.memory_ids if i not in superseded)
        log.info(
            json.dumps(
                {
                    "op": "supersede",
                    "reflection_id": request.reflection_id,
                    "statement_id": new_id,
                    "superseded": list(superseded),
                    "missing": list(missing),
                    "ms": round((time.perf_counter() - started) * 1000, 2),
                }
            )
        )
        return SupersedeResult(new_id, superseded, missing)
