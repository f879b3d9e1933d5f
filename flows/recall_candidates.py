"""Recall's candidates, read from the store: the three tiers a question draws on (docs/recall.md).

    long-term (vector store)                recent actions (7 days, Redis)
          → the user's timeline at the question time (the store's per-user index, or a scan of
            the user's memories when the store keeps none)
          → the dense hits (valid now, said before now), the best BM25 hits over the timeline,
            and the memories said in a past period the question names or before an identifier it
            names (their validity may have ended)
          → the recent actions, marked `recent` even when they are long-term hits too

Every read is scoped to the tenant and the user (the session when there is no user), and every
payload is checked again before it becomes a candidate, so a backend bug cannot leak another
tenant's memory. The question's own turn and its context turns are never candidates. The logic
of what is read lives in `state/recall/`; this module is the I/O.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from schemas.errors import StateMirrorError
from schemas.recall import RecallRequest
from sinks.store.base import Hit, MemoryStore, StoreFilter, TimelineSource
from sinks.store.recent_actions import RecentActions
from state.recall.timeline import LexicalShares, ScannedTimeline, Timeline

log = logging.getLogger(__name__)

_PAST_LIMIT = 30  # nearest memories read per past period or identifier question, validity aside


def scope(request: RecallRequest) -> dict[str, str]:
    """The payload fields every candidate must match: the tenant and the user, else the session."""
    out = {"tenant_id": request.tenant_id}
    if request.user_id is not None:
        out["user_id"] = request.user_id
    else:
        out["session_id"] = request.session_id  # no user: never wider than the session
    return out


class CandidateReader:
    """Reads one question's timeline and candidates from the store and the recent-actions tier."""

    def __init__(
        self,
        store: MemoryStore,
        *,
        candidate_limit: int,
        recent: RecentActions | None,
        recent_limit: int,
        lexical_limit: int,
        scan_limit: int,
        indexed_timeline: bool,
    ) -> None:
        self._store = store
        self._limit = candidate_limit
        self._recent = recent
        self._recent_limit = recent_limit
        self._lexical_limit = lexical_limit
        self._scan_limit = scan_limit
        # False: scan the user's memories for every question even when the store keeps an index
        # (the reference the index is tested and measured against). Decided once: a runtime
        # protocol check costs tens of microseconds a question.
        self._timelines = store if indexed_timeline and isinstance(store, TimelineSource) else None

    def timeline(self, request: RecallRequest, skip: set[str], stopwords: frozenset[str]) -> Timeline:
        """The user's memories valid and said by the question time (at most `scan_limit`)."""
        if not self._scan_limit:
            return ScannedTimeline([], stopwords)
        where = scope(request)
        if self._timelines is not None:
            indexed = self._timelines.timeline(where, request.ts, skip, self._scan_limit, stopwords)
            if indexed is not None:
                return indexed
        now = request.ts.isoformat()

        def read(flt: StoreFilter) -> list[tuple[str, dict[str, Any]]]:
            return [
                (h.id, h.payload)
                for h in self._store.scroll(flt, self._scan_limit)
                if all(h.payload.get(k) == v for k, v in where.items()) and h.payload.get("event_id") not in skip
            ]

        valid = read(StoreFilter(match=where, valid_at=now, not_after=now))
        return ScannedTimeline(valid, stopwords, history=read(StoreFilter(match=where, not_after=now)))

    def said_then(
        self, request: RecallRequest, qvec: np.ndarray, periods: Sequence[tuple[float, float]], identifiers: bool
    ) -> list[Hit]:
        """Memories whose validity may have ended that the question can still ask about: the nearest
        ones said in a past period it names, and, when it names an identifier, the nearest ones said
        before it (scoring admits an ended one only when it was said then or holds the identifier)."""
        where = scope(request)
        now = request.ts.timestamp()
        hits: list[Hit] = []
        for start, end in periods:
            since = datetime.fromtimestamp(start, UTC).isoformat()
            until = datetime.fromtimestamp(min(end, now), UTC).isoformat()
            hits += self._store.search(qvec, StoreFilter(match=where, not_before=since, not_after=until), _PAST_LIMIT)
        if identifiers:
            flt = StoreFilter(match=where, not_after=request.ts.isoformat())
            hits += self._store.search(qvec, flt, _PAST_LIMIT)
        return hits

    def candidates(
        self,
        request: RecallRequest,
        qvec: np.ndarray,
        lexical: LexicalShares,
        said_then: Sequence[Hit] = (),
    ) -> tuple[list[str], list[dict[str, Any]], list[float], list[str]]:
        """The question's candidates: ids, payloads, cosine to the question and tier, best hits first."""
        where = scope(request)
        now = request.ts.isoformat()
        flt = StoreFilter(match=where, valid_at=now, not_after=now)
        hits = list({h.id: h for h in (*said_then, *self._store.search(qvec, flt, self._limit))}.values())
        hits.sort(key=lambda h: (-h.score, h.id))  # ties in a canonical order, whatever order the engine holds them in
        skip = {request.query_event_id, *(t.event_id for t in request.context)}
        ids: list[str] = []
        payloads: list[dict[str, Any]] = []
        sims: list[float] = []
        tiers: list[str] = []

        def admit(mid: str, payload: dict[str, Any], sim: float, tier: str) -> None:
            if any(payload.get(k) != v for k, v in where.items()) or payload.get("event_id") in skip:
                return
            ids.append(mid)
            payloads.append(payload)
            sims.append(sim)
            tiers.append(tier)

        def add_with_vectors(items: Sequence[tuple[str, dict[str, Any] | None]], tier: str) -> None:
            stored = {h.id: h for h in self._store.retrieve([mid for mid, _ in items], with_vectors=True)}
            for mid, payload in items:
                hit = stored.get(mid)
                vec = hit.vector if hit is not None else None
                if payload is None:  # a lexical hit: its payload as stored
                    if hit is None:
                        continue
                    payload = hit.payload
                admit(mid, payload, float(np.dot(vec, qvec)) if vec is not None else 0.0, tier)

        for h in hits:
            admit(h.id, h.payload, h.score, "long_term")
        by_lexical = lexical.best(self._lexical_limit, exclude=set(ids)) if self._lexical_limit else []
        if by_lexical:
            add_with_vectors([(m, None) for m in by_lexical], "long_term")
        if self._recent is not None and request.user_id is not None and self._recent_limit:
            try:
                recent = self._recent.read(request.tenant_id, request.user_id, request.ts, self._recent_limit)
            except StateMirrorError as exc:  # a read model: without it recall still has the store
                log.warning(json.dumps({"op": "recall.recent_tier", "error": str(exc)}))
                recent = []
            position = {mid: i for i, mid in enumerate(ids)}
            for u in recent:  # a recent action already among the long-term hits is still recent
                if u.memory_id in position:
                    tiers[position[u.memory_id]] = "recent"
            missing = [(u.memory_id, u.model_dump(mode="json")) for u in recent if u.memory_id not in position]
            if missing:
                add_with_vectors(missing, "recent")
        return ids, payloads, sims, tiers
