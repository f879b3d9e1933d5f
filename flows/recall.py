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
                    `recall_floor.yaml` can hand that decision to a learned model), the picks
                    then shown as weak cues, which the responder never reads

The Python API is `RecallService.recall(RecallRequest) -> RecallResult`; the flow applies
`run_batch` to the trigger's requests. Everything here is composition, the order of the steps
above: the candidates are read by `flows.recall_candidates`, the logic lives in state/ (the
question's periods in `state.recall.periods`, the abstain decision in `state.recall.abstain`),
the I/O in sinks/. Isolation is enforced twice: by the store filter and again on every payload
before scoring, so a backend bug cannot leak another tenant's memory.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flows.recall_candidates import CandidateReader
from flows.verification import VerificationGuard
from schemas.errors import StoreError
from schemas.recall import ContextTurn, RecallRequest, RecallResult, ValidityDecision
from sinks.http.verifiers import VerifyRequest
from sinks.models.embedding_memo import remembers
from sinks.store.base import MemoryStore
from sinks.store.recent_actions import RecentActions
from state.core.embedding import Embedder
from state.core.hotfile import HotFile
from state.recall.abstain import HAN, FloorCase, floor_case, judge, offer_split
from state.recall.arbitration import Arbitration, VerifyOutcome, arbitrate
from state.recall.config import RecallTables
from state.recall.explain import build_cues, shown_units
from state.recall.floor_model import FloorModel, floor_file
from state.recall.periods import named_days, past_periods
from state.recall.query import analyse_query, strip_names
from state.recall.resolution import (
    ResolutionLexicon,
    asks_earlier,
    asks_latest,
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
from state.recall.timeline import question_shares

__all__ = ["FloorCase", "RecallService"]

log = logging.getLogger(__name__)

_TRANSIENT = 2


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
        self._embedder = embedder
        self._tables = tables
        self._verification = verification
        self._resolution = resolution if resolution is not None else resolution_file()
        self._floor = floor if floor is not None else floor_file()
        self._reader = CandidateReader(
            store,
            candidate_limit=candidate_limit,
            recent=recent,
            recent_limit=recent_limit,
            lexical_limit=lexical_limit,
            scan_limit=scan_limit,
            indexed_timeline=indexed_timeline,
        )

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
        timeline = self._reader.timeline(request, skip, tables.stopwords)
        # Only names that are people here (a speaker in the user's memories, or known) leave the
        # embedded text: "Groceries left outside again!" keeps its capitalised first word.
        speakers = timeline.speakers()
        named = [n for n in query.name_candidates if n.lower() in speakers or n in people]
        qvec = self._embedder.query([strip_names(query.text, named)])[0]
        lexical = question_shares(query.text, timeline, named, tables.stopwords)
        periods = past_periods(request.query_text, request.ts, request.times)
        said_then = self._reader.said_then(request, qvec, periods, bool(query.entities))
        ids, payloads, sims, tiers = self._reader.candidates(request, qvec, lexical, said_then)
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
        still_open = asks_open(request.query_text, resolution)
        latest = asks_latest(request.query_text, resolution)
        earlier = asks_earlier(request.query_text, resolution)
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
            asks_latest=latest,
            repeat_reports=resolution.repeat_reports if earlier else (),
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
        picked, covered = judge(question, r.batch, r.scores, r.max_cues, self._tables.get())
        return floor_case(question, r.batch, r.scores, r.floor, picked, covered, picked)

    def recall(self, request: RecallRequest) -> RecallResult:
        """Scored, explained recall for one question (see the module docstring)."""
        started = time.perf_counter()
        r = self._rank(request)
        chosen = offer_split(
            request.query_text,
            r.batch,
            r.scores,
            max_cues=r.max_cues,
            floor=r.floor,
            tables=self._tables.get(),
            model=self._floor.get(),
        )
        verified = frozenset(i for i, o in r.outcomes.items() if o.status == "verified")
        keep = verified | r.arb.fallback
        picked = shown_units(chosen.cues, r.batch, r.scores, keep)
        cue_parts = functools.partial(
            build_cues, batch=r.batch, scores=r.scores, now_ts=request.ts.timestamp(), tiers=r.tiers, verified=verified
        )
        cues, explanation, marker = cue_parts(picked, fallback=r.arb.fallback)
        weak, weak_lines, _ = cue_parts(shown_units(chosen.weak, r.batch, r.scores, keep), weak=True)
        if not cues:
            explanation = "\n".join(line for line in (chosen.explain(), weak_lines) if line)
        result = RecallResult(
            query_event_id=request.query_event_id,
            session_id=request.session_id,
            tenant_id=request.tenant_id,
            user_id=request.user_id,
            query_text=request.query_text,
            question_class=r.question_class,  # type: ignore[arg-type]
            ts=request.ts,
            cues=cues,
            weak_cues=weak,
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
