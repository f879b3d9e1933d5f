"""The recall service: three tiers in, at most three explained cues out (docs/recall.md).

    context (last 3 turns, given)   recent actions (7 days, Redis)   long-term (vector store)
                 \\                           |                            /
                  → the user's timeline at the question time (the store's per-user index, or
                    a scan of the user's memories when the store keeps none)
                  → candidates (tenant + user only, valid now, said before now):
                    the dense hits, plus the best BM25 hits over the user's memories
                  → from the timeline: open issues settled, reopened, promises overdue
                  → one vectorised scoring pass (state.recall.scoring)
                  → verify the transient ones near the top (guard + verifiers, bounded wait)
                  → arbitration (user > fresh verifier > memory), rescore
                  → top-3 cues with components, reasons, evidence chain, debug marker;
                    none when no candidate clears the embedder's relevance floor (abstain;
                    `recall_floor.yaml` can hand that decision to a learned model)

The Python API is `RecallService.recall(RecallRequest) -> RecallResult`; the flow applies
`run_batch` to the trigger's requests. Everything here is composition: the logic lives in
state/, the I/O in sinks/. Isolation is enforced twice: by the store filter and again on
every payload before scoring, so a backend bug cannot leak another tenant's memory.

Kept whole at ~400 lines on purpose: it is one concept, the order of the steps above, and
each method is one step of it; the logic of every step already lives in `state/recall/`.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from flows.verification import VerificationGuard
from schemas.errors import StateMirrorError, StoreError
from schemas.recall import ContextTurn, RecallRequest, RecallResult, ValidityDecision
from sinks.http.verifiers import VerifyRequest
from sinks.models.embedding_memo import remembers
from sinks.store.base import Hit, MemoryStore, StoreFilter, TimelineSource
from sinks.store.recent_actions import RecentActions
from state.core.embedding import Embedder
from state.core.hotfile import HotFile
from state.recall.abstain import HAN, FloorCase, floor_case, judge, offer
from state.recall.arbitration import Arbitration, VerifyOutcome, arbitrate
from state.recall.config import RecallTables
from state.recall.explain import build_cues
from state.recall.floor_model import FloorModel, floor_file
from state.recall.lexical import tokenize
from state.recall.periods import named_days, past_periods
from state.recall.query import QueryAnalysis, analyse_query, strip_names
from state.recall.resolution import (
    ResolutionLexicon,
    asks_open,
    asks_outcome,
    asks_status,
    asks_still_waiting,
    resolution_file,
)
from state.recall.scoring import (
    CandidateBatch,
    PoolScores,
    candidate_batch,
    score_pool,
    top_indices,
)
from state.recall.timeline import LexicalShares, ScannedTimeline, Timeline

__all__ = ["FloorCase", "RecallService"]

log = logging.getLogger(__name__)

_TRANSIENT = 2
_PAST_LIMIT = 30  # nearest memories read per past period or identifier question, validity aside


def _subject(payload: Mapping[str, Any]) -> str:
    """What a verifier is asked about: the resolved entity, else the first term, else the topic."""
    for anchor in payload.get("coref") or ():
        if anchor.get("resolved_entity"):
            return str(anchor["resolved_entity"])
    terms = payload.get("terms") or ()
    if terms:
        return str(terms[0])
    return str(payload.get("topic") or payload.get("text", ""))[:80]


@dataclass(frozen=True, slots=True)
class _Ranked:
    question_class: str
    batch: CandidateBatch
    scores: PoolScores
    arb: Arbitration
    outcomes: dict[int, VerifyOutcome]
    tiers: list[str]
    max_cues: int
    floor: float


class RecallService:
    def __init__(
        self,
        store: MemoryStore,
        embedder: Embedder,
        tables: HotFile[RecallTables],
        *,
        candidate_limit: int = 300,
        recent: RecentActions | None = None,
        recent_limit: int = 5,
        verification: VerificationGuard | None = None,
        lexical_limit: int = 60,
        scan_limit: int = 5000,
        resolution: HotFile[ResolutionLexicon] | None = None,
        indexed_timeline: bool = True,
        floor: HotFile[FloorModel] | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._tables = tables
        self._limit = candidate_limit
        self._recent = recent
        self._recent_limit = recent_limit
        self._verification = verification
        self._lexical_limit = lexical_limit
        self._scan_limit = scan_limit
        self._resolution = resolution if resolution is not None else resolution_file()
        self._floor = floor if floor is not None else floor_file()
        # False: scan the user's memories for every question even when the store keeps an index
        # (the reference the index is tested and measured against). Decided once: a runtime
        # protocol check costs tens of microseconds a question.
        self._timelines = store if indexed_timeline and isinstance(store, TimelineSource) else None

    # -- candidates ---------------------------------------------------------------------

    @staticmethod
    def _scope(request: RecallRequest) -> dict[str, str]:
        scope = {"tenant_id": request.tenant_id}
        if request.user_id is not None:
            scope["user_id"] = request.user_id
        else:
            scope["session_id"] = request.session_id  # no user: never wider than the session
        return scope

    def _timeline(self, request: RecallRequest, skip: set[str], stopwords: frozenset[str]) -> Timeline:
        """The user's memories valid and said by the question time (at most `scan_limit`)."""
        if not self._scan_limit:
            return ScannedTimeline([], stopwords)
        scope = self._scope(request)
        if self._timelines is not None:
            indexed = self._timelines.timeline(scope, request.ts, skip, self._scan_limit, stopwords)
            if indexed is not None:
                return indexed
        now = request.ts.isoformat()

        def read(flt: StoreFilter) -> list[tuple[str, dict[str, Any]]]:
            return [
                (h.id, h.payload)
                for h in self._store.scroll(flt, self._scan_limit)
                if all(h.payload.get(k) == v for k, v in scope.items()) and h.payload.get("event_id") not in skip
            ]

        valid = read(StoreFilter(match=scope, valid_at=now, not_after=now))
        return ScannedTimeline(valid, stopwords, history=read(StoreFilter(match=scope, not_after=now)))

    def _said_then(
        self, request: RecallRequest, qvec: np.ndarray, periods: Sequence[tuple[float, float]], identifiers: bool
    ) -> list[Hit]:
        """Memories whose validity may have ended that the question can still ask about: the nearest
        ones said in a past period it names, and, when it names an identifier, the nearest ones said
        before it (scoring admits an ended one only when it was said then or holds the identifier)."""
        scope = self._scope(request)
        now = request.ts.timestamp()
        hits: list[Hit] = []
        for start, end in periods:
            since = datetime.fromtimestamp(start, UTC).isoformat()
            until = datetime.fromtimestamp(min(end, now), UTC).isoformat()
            hits += self._store.search(qvec, StoreFilter(match=scope, not_before=since, not_after=until), _PAST_LIMIT)
        if identifiers:
            flt = StoreFilter(match=scope, not_after=request.ts.isoformat())
            hits += self._store.search(qvec, flt, _PAST_LIMIT)
        return hits

    def _candidates(
        self,
        request: RecallRequest,
        qvec: np.ndarray,
        lexical: LexicalShares,
        said_then: Sequence[Hit] = (),
    ) -> tuple[list[str], list[dict[str, Any]], list[float], list[str]]:
        scope = self._scope(request)
        now = request.ts.isoformat()
        flt = StoreFilter(match=scope, valid_at=now, not_after=now)
        hits = list({h.id: h for h in (*said_then, *self._store.search(qvec, flt, self._limit))}.values())
        hits.sort(key=lambda h: (-h.score, h.id))  # ties in a canonical order, whatever order the engine holds them in
        skip = {request.query_event_id, *(t.event_id for t in request.context)}
        ids: list[str] = []
        payloads: list[dict[str, Any]] = []
        sims: list[float] = []
        tiers: list[str] = []

        def admit(mid: str, payload: dict[str, Any], sim: float, tier: str) -> None:
            if any(payload.get(k) != v for k, v in scope.items()) or payload.get("event_id") in skip:
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

    @staticmethod
    def _lexical(query: QueryAnalysis, timeline: Timeline, names: Sequence[str], tables: RecallTables) -> LexicalShares:
        """BM25 share of every memory in the user's timeline (IDF over them); people named in the
        question are not words to match (they come back as the `person` component)."""
        name_tokens = set(tokenize(" ".join(names), tables.stopwords))
        q_tokens = [t for t in tokenize(query.text, tables.stopwords) if t not in name_tokens]
        return timeline.lexical(q_tokens)

    # -- verification and arbitration ----------------------------------------------------

    def _verify(self, request: RecallRequest, batch: CandidateBatch, order: Sequence[int]) -> dict[int, VerifyOutcome]:
        transient = [i for i in order if batch.validity[i] == _TRANSIENT]
        if not transient:
            return {}
        if self._verification is None:
            return {i: VerifyOutcome("failed", "verification is switched off") for i in transient}
        items = [
            (
                i,
                VerifyRequest(
                    kind=str(batch.topics[i] or "transient"),
                    subject=_subject(batch.payloads[i]),
                    text=str(batch.payloads[i].get("text", "")),
                    memory_id=batch.ids[i],
                    tenant_id=request.tenant_id,
                    user_id=request.user_id,
                ),
            )
            for i in transient
        ]
        return self._verification.verify(items, request.user_id or request.session_id)

    # -- the API -------------------------------------------------------------------------

    def _rank(self, request: RecallRequest) -> _Ranked:
        tables = self._tables.get()
        people = _people(request)
        query = analyse_query(request.query_text, tables, known_people=people, entities=request.entities)
        skip = {request.query_event_id, *(t.event_id for t in request.context)}
        timeline = self._timeline(request, skip, tables.stopwords)
        # Only names that are people here (a speaker in the user's memories, or known) leave the
        # embedded text: "Groceries left outside again!" keeps its capitalised first word.
        speakers = timeline.speakers()
        named = [n for n in query.name_candidates if n.lower() in speakers or n in people]
        qvec = self._embedder.query([strip_names(query.text, named)])[0]
        lexical = self._lexical(query, timeline, named, tables)
        periods = past_periods(request.query_text, request.ts, request.times)
        said_then = self._said_then(request, qvec, periods, bool(query.entities))
        ids, payloads, sims, tiers = self._candidates(request, qvec, lexical, said_then)
        resolution = self._resolution.get()
        issues = timeline.issues(request.ts, resolution)
        shares = [lexical.get(m) for m in ids]
        batch = candidate_batch(
            ids,
            payloads,
            sims,
            tables.stopwords,
            lexical=[s for s in shares if s is not None] if None not in shares and len(timeline) else None,
            issues=issues,
        )
        waiting = asks_still_waiting(request.query_text, resolution)
        outcome = asks_outcome(request.query_text, resolution)
        status = asks_status(request.query_text, resolution)
        still_open = (waiting or asks_open(request.query_text, resolution)) and not outcome
        abstain = tables.abstain_for(self._embedder.name)
        scale = abstain.cosine_scale(HAN.search(request.query_text) is not None)
        days = named_days(request.query_text, request.ts, request.times)
        k = tables.validity.max_cues
        statements = (
            *request.context,
            ContextTurn(
                event_id=request.query_event_id, ts=request.ts, text=request.query_text, speaker=request.speaker
            ),
        )
        outcomes: dict[int, VerifyOutcome] = {}
        rescore = functools.partial(
            score_pool,
            query,
            batch,
            tables,
            request.ts,
            known_people=people,
            still_waiting=waiting,
            asks_status=status,
            asks_open=still_open,
            asks_outcome=outcome,
            cosine_scale=scale,
            time_ranges=periods,
            about_ranges=days,
        )
        arb = arbitrate(batch, outcomes, statements, tables)
        scores = rescore(factors=arb.factors)
        for _ in range(3):  # verify what reaches the top; a drop lets the next one up
            todo = [i for i in top_indices(scores, k + 2) if i not in outcomes]
            fresh = self._verify(request, batch, todo)
            if not fresh:
                break
            outcomes |= fresh
            arb = arbitrate(batch, outcomes, statements, tables)
            scores = rescore(factors=arb.factors)
        return _Ranked(query.question_class, batch, scores, arb, outcomes, tiers, k, abstain.min_relevance)

    def ranked_ids(self, request: RecallRequest, k: int) -> list[str]:
        """Memory ids of the k best candidates, best first (evaluation at k > 3)."""
        ranked = self._rank(request)
        return [ranked.batch.ids[i] for i in top_indices(ranked.scores, k, turn=ranked.batch.turn)]

    def floor_case(self, request: RecallRequest) -> FloorCase:
        """The abstain decision's inputs and the rule floor's verdict for one question (evaluation)."""
        r = self._rank(request)
        question = request.query_text
        picked, covered, offered = judge(question, r.batch, r.scores, r.max_cues, self._tables.get())
        return floor_case(question, r.batch, r.scores, r.floor, picked, covered, offered)

    def recall(self, request: RecallRequest) -> RecallResult:
        """Scored, explained recall for one question (see the module docstring)."""
        started = time.perf_counter()
        r = self._rank(request)
        picked = offer(
            request.query_text,
            r.batch,
            r.scores,
            max_cues=r.max_cues,
            floor=r.floor,
            tables=self._tables.get(),
            model=self._floor.get(),
        )
        verified = frozenset(i for i, o in r.outcomes.items() if o.status == "verified")
        cues, explanation, marker = build_cues(
            picked, r.batch, r.scores, request.ts.timestamp(), tiers=r.tiers, fallback=r.arb.fallback, verified=verified
        )
        result = RecallResult(
            query_event_id=request.query_event_id,
            session_id=request.session_id,
            tenant_id=request.tenant_id,
            user_id=request.user_id,
            query_text=request.query_text,
            question_class=r.question_class,  # type: ignore[arg-type]
            ts=request.ts,
            cues=cues,
            validity_decisions=self._decisions(r.batch, r.scores.decisions, r.arb, picked),
            evidence_chain=r.arb.evidence,
            explanation=explanation,
            debug_marker=marker,
        )
        log.debug(
            json.dumps(
                {
                    "op": "recall",
                    "event": request.query_event_id,
                    "candidates": len(r.batch),
                    "cues": len(cues),
                    "ms": round((time.perf_counter() - started) * 1000, 2),
                }
            )
        )
        return result

    @staticmethod
    def _decisions(
        batch: CandidateBatch, validity: Sequence[Any], arb: Arbitration, picked: Sequence[int]
    ) -> tuple[ValidityDecision, ...]:
        out: dict[int, ValidityDecision] = {}
        for d in (*validity, *arb.decisions):
            out[d.index] = ValidityDecision(memory_id=batch.ids[d.index], decision=d.decision, detail=d.detail)
        for i in picked:
            out.setdefault(i, ValidityDecision(memory_id=batch.ids[i], decision="kept", detail="valid now"))
        return tuple(out[i] for i in sorted(out))

    def run_batch(self, requests: list[RecallRequest]) -> list[tuple[RecallRequest, RecallResult]]:
        """The flow's batch map: each request with its result, in order.

        A store that fails (after its own retries) degrades one recall to an empty, explained
        result instead of stopping the dataflow; the responder then answers without cues.
        """
        out: list[tuple[RecallRequest, RecallResult]] = []
        if len(requests) > 1 and remembers(self._embedder):
            # one model call for the batch's questions; each recall then finds its row in the memo
            tables = self._tables.get()
            self._embedder.query(list(dict.fromkeys(_batch_query_text(r, tables) for r in requests)))
        for r in requests:
            try:
                out.append((r, self.recall(r)))
            except StoreError as exc:
                log.warning(json.dumps({"op": "recall", "event": r.query_event_id, "error": str(exc)}))
                out.append(
                    (
                        r,
                        RecallResult(
                            query_event_id=r.query_event_id,
                            session_id=r.session_id,
                            tenant_id=r.tenant_id,
                            user_id=r.user_id,
                            query_text=r.query_text,
                            ts=r.ts,
                            explanation=f"recall unavailable: {exc}",
                        ),
                    )
                )
        return out


def _batch_query_text(request: RecallRequest, tables: RecallTables) -> str:
    """The text `_rank` will embed for this question, as far as it is known before the store is read:
    only names of known people leave it (`_rank` also strips the user's memories' speakers; such a
    question misses the memo once). Stripping every capitalised candidate ("Good morning") would
    embed a text nobody asks for."""
    people = _people(request)
    query = analyse_query(request.query_text, tables, known_people=people, entities=request.entities)
    return strip_names(query.text, [n for n in query.name_candidates if n in people])


def _people(request: RecallRequest) -> tuple[str, ...]:
    """The names a question's text is stripped of: the known people and the context's speakers."""
    return tuple(dict.fromkeys([*request.known_people, *(t.speaker for t in request.context if t.speaker)]))
