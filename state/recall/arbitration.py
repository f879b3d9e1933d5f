"""Arbitration between sources (docs/design.md#arbitration): user > fresh verifier > memory.

Input: the candidate pool, the verification outcome of each transient candidate, and the
user's explicit statements in the immediate context. Output: one score factor per candidate
(1 untouched, <1 down-weighted, 0 dropped), the validity decisions, and an `EvidenceLink`
for every override. State: none.

* A user's explicit statement ("我刚领的券", "actually I already got it") about the same
  matter as a memory, made after it, beats the memory and any verifier answer about it.
* A fresh verifier answer that contradicts a stored transient fact beats the memory.
* A transient fact that could not be verified (failure, timeout, breaker open, no verifier)
  is down-weighted or dropped per `validity.on_verify_failure`; one served from the guard's
  fallback is kept, flagged `is_fallback`, at `validity.fallback_factor`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from schemas.recall import ContextTurn, EvidenceLink, VerifierAnswer
from state.recall.config import RecallTables
from state.recall.lexical import tokenize
from state.recall.query import classify_question, is_explicit_statement
from state.recall.scoring import CandidateBatch, Decision, F

VerifyStatus = Literal["verified", "contradicted", "failed", "fallback"]


@dataclass(frozen=True, slots=True)
class VerifyOutcome:
    status: VerifyStatus
    detail: str
    answer: VerifierAnswer | None = None


@dataclass(frozen=True, slots=True)
class Arbitration:
    factors: F
    decisions: tuple[Decision, ...]
    evidence: tuple[EvidenceLink, ...]
    fallback: frozenset[int]


def _overlap(a: set[str], b: set[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def _same_matter(
    statement: ContextTurn, stmt_tokens: set[str], index: int, batch: CandidateBatch, tables: RecallTables
) -> bool:
    spec = classify_question(statement.text, tables)
    topic = batch.topics[index]
    if spec is not None and topic is not None and topic not in spec.topics:
        return False
    return _overlap(stmt_tokens, set(batch.tokens[index])) >= tables.statement_min_overlap


def arbitrate(
    batch: CandidateBatch,
    outcomes: Mapping[int, VerifyOutcome],
    statements: Sequence[ContextTurn],
    tables: RecallTables,
) -> Arbitration:
    """Apply the precedence rules; every override becomes an EvidenceLink."""
    n = len(batch)
    factors = np.ones(n)
    decisions: list[Decision] = []
    evidence: list[EvidenceLink] = []
    fallback: set[int] = set()
    policy = tables.validity
    said = [
        (s, set(tokenize(s.text, tables.stopwords)))
        for s in statements
        if s.speaker_role == "customer" and is_explicit_statement(s.text, tables)
    ]
    for i in range(n):
        mid = batch.ids[i]
        outcome = outcomes.get(i)
        beaten_by_user = next(
            (s for s, toks in said if s.ts.timestamp() >= batch.ts[i] and _same_matter(s, toks, i, batch, tables)),
            None,
        )
        if beaten_by_user is not None:
            factors[i] = 0.0
            quote = beaten_by_user.text[:80]
            decisions.append(Decision(i, "superseded", f"user said at {beaten_by_user.ts.isoformat()}: {quote}"))
            evidence.append(
                EvidenceLink(
                    winner="user_statement",
                    loser="memory",
                    memory_id=mid,
                    detail=f"explicit statement in {beaten_by_user.event_id} ({quote}) "
                    f"is newer than memory of {batch.payloads[i].get('ts')}",
                )
            )
            if outcome is not None and outcome.answer is not None:
                evidence.append(
                    EvidenceLink(
                        winner="user_statement",
                        loser="verifier",
                        memory_id=mid,
                        detail=f"user statement overrides {outcome.answer.kind} verifier "
                        f"answer {outcome.answer.value!r}",
                    )
                )
            continue
        if outcome is None:
            continue
        if outcome.status == "verified":
            decisions.append(Decision(i, "verified", outcome.detail))
        elif outcome.status == "contradicted":
            factors[i] = 0.0
            decisions.append(Decision(i, "superseded", outcome.detail))
            answer = outcome.answer
            value = f"{answer.value!r} at {answer.checked_at.isoformat()}" if answer else "no longer valid"
            evidence.append(
                EvidenceLink(
                    winner="verifier",
                    loser="memory",
                    memory_id=mid,
                    detail=f"fresh verifier answer {value} beats memory of "
                    f"{batch.payloads[i].get('ts')}: {outcome.detail}",
                )
            )
        elif outcome.status == "fallback":
            factors[i] = policy.fallback_factor
            fallback.add(i)
            decisions.append(Decision(i, "fallback", outcome.detail))
        elif policy.on_verify_failure == "drop":
            factors[i] = 0.0
            decisions.append(Decision(i, "verify_failed_dropped", outcome.detail))
        else:
            factors[i] = policy.verify_failure_factor
            decisions.append(Decision(i, "verify_failed_downweighted", outcome.detail))
    return Arbitration(factors, tuple(decisions), tuple(evidence), frozenset(fallback))
