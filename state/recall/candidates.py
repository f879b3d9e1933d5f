"""The candidate pool of one recall as arrays: what the store returned (payloads, semantic and
lexical scores) turned into the typed columns the vectorised scoring pass reads.

Input: candidate ids, payloads and their semantic (and lexical) scores, the user's timeline view
of open issues. Output: a `CandidateBatch`. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from state.recall.introductions import spoken_by
from state.recall.lexical import tokenize
from state.recall.resolution import IssueView
from state.units.content import has_content

F = npt.NDArray[np.float64]
B = npt.NDArray[np.bool_]

_SEVERITY_CODES = {"high": 0, "medium": 1, "low": 2}
_RESOLUTION_CODES = {"pending": 0, "resolved": 1, "none": 2}
_VALIDITY_CODES = {"permanent": 0, "periodic": 1, "transient": 2}
_PROMISE = 0.7  # the commitment strength of a promise the timeline found ("会…前" with a deadline)


def _epoch(value: object) -> float:
    if value is None:
        return float("nan")
    if isinstance(value, datetime):
        return value.timestamp()
    return datetime.fromisoformat(str(value)).timestamp()


@dataclass(frozen=True, slots=True)
class CandidateBatch:
    """Candidates as parallel arrays (built once per recall from store payloads)."""

    ids: tuple[str, ...]
    payloads: tuple[Mapping[str, Any], ...]
    tokens: tuple[tuple[str, ...], ...]
    semantic: F
    ts: F
    session: npt.NDArray[np.int64]
    emotion: F
    severity: npt.NDArray[np.int64]
    resolution: npt.NDArray[np.int64]
    resolved_at: F
    commitment: F
    confidence: F
    validity: npt.NDArray[np.int64]
    effective_from: F
    effective_to: F
    topics: tuple[str | None, ...]
    speakers: tuple[str, ...]
    lowered: tuple[str, ...]
    lexical: F | None = None
    overdue: F | None = None
    content: B | None = None
    turn: npt.NDArray[np.int64] | None = None
    settled_by: npt.NDArray[np.int64] | None = None  # per candidate: the candidate whose turn settled it, or -1

    def __len__(self) -> int:
        return len(self.ids)


def candidate_batch(
    ids: Sequence[str],
    payloads: Sequence[Mapping[str, Any]],
    semantic: Sequence[float],
    stopwords: frozenset[str],
    *,
    lexical: Sequence[float] | None = None,
    issues: Mapping[str, IssueView] | None = None,
) -> CandidateBatch:
    """Arrays from MemoryUnit payloads (JSON dicts as the store returns them) and cosine scores.

    `lexical`: absolute lexical shares computed over the user's memories (else over the pool at
    scoring); `issues`: what the user's timeline says about open issues and promises (resolved,
    reopened, overdue), overriding the status stored at write time. A memory that is only an
    acknowledgement, thanks or a bare apology (`state.units.content`) is context, never a cue.
    """
    n = len(ids)
    issues = issues or {}
    turns: dict[str, int] = {}
    emotion = np.zeros((n, 4))
    sessions: dict[str, int] = {}
    session = np.empty(n, dtype=np.int64)
    for i, p in enumerate(payloads):
        emo = p.get("emotion") or {}
        emotion[i] = (
            emo.get("stress", 0.0),
            emo.get("urgency", 0.0),
            1.0 - emo.get("certainty", 0.5),
            1.0 - emo.get("cooperation", 0.5),
        )
        session[i] = sessions.setdefault(str(p.get("session_id")), len(sessions))
    validity = [p.get("validity") or {} for p in payloads]
    tokens = tuple(tokenize(str(p.get("text", "")), stopwords) for p in payloads)
    status: list[str] = []
    resolved: list[float] = []
    for m, p in zip(ids, payloads, strict=True):
        stored = str(p.get("resolution_status"))
        view = issues.get(m)
        if view is None or (stored == "resolved" and not view.reopened):  # an explicit update stands
            status.append(stored)
            resolved.append(_epoch(p.get("resolved_at")))
        else:
            status.append(view.status)
            resolved.append(float("nan") if view.resolved_at is None else view.resolved_at)
    return CandidateBatch(
        ids=tuple(ids),
        payloads=tuple(payloads),
        tokens=tokens,
        semantic=np.asarray(semantic, dtype=np.float64),
        ts=np.array([_epoch(p.get("ts")) for p in payloads]),
        session=session,
        emotion=emotion,
        severity=np.array([_SEVERITY_CODES.get(str(p.get("severity")), 2) for p in payloads], dtype=np.int64),
        resolution=np.array([_RESOLUTION_CODES.get(st, 2) for st in status], dtype=np.int64),
        resolved_at=np.array(resolved, dtype=np.float64),
        commitment=np.array(
            [
                max(float(p.get("commitment_strength", 0.0)), _PROMISE if m in issues and issues[m].promise else 0.0)
                for m, p in zip(ids, payloads, strict=True)
            ]
        ),
        confidence=np.array([float(p.get("confidence_score", 0.75)) for p in payloads]),
        validity=np.array([_VALIDITY_CODES.get(str(v.get("validity_type")), 0) for v in validity], dtype=np.int64),
        effective_from=np.array([_epoch(v.get("effective_from")) for v in validity]),
        effective_to=np.array([_epoch(v.get("effective_to")) for v in validity]),
        topics=tuple(p.get("topic") for p in payloads),
        speakers=spoken_by(payloads),
        lowered=tuple(str(p.get("text", "")).lower() for p in payloads),
        lexical=None if lexical is None else np.asarray(lexical, dtype=np.float64),
        overdue=np.array([1.0 if m in issues and issues[m].overdue else 0.0 for m in ids]),
        content=np.array([has_content(str(p.get("text", ""))) for p in payloads], dtype=bool),
        turn=np.array([turns.setdefault(str(p.get("event_id", i)), len(turns)) for i, p in enumerate(payloads)]),
        settled_by=_settlers(ids, issues),
    )


def _settlers(ids: Sequence[str], issues: Mapping[str, IssueView]) -> npt.NDArray[np.int64]:
    """Per candidate, the index of the candidate that settled it (a confirmation, an agent's
    completion), -1 when it is not settled or its settler is not among the candidates."""
    position = {m: i for i, m in enumerate(ids)}
    out = np.full(len(ids), -1, dtype=np.int64)
    for i, m in enumerate(ids):
        view = issues.get(m)
        if view is not None and view.settled_by is not None:
            out[i] = position.get(view.settled_by, -1)
    return out
