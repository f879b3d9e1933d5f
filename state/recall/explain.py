"""Explanations: each cue with its score components, a one-line reason and the debug marker.

Input: the scored pool and the chosen indices. Output: `Cue` records, the result-level
explanation and the admin marker `[DEBUG:cue=<id>,css=<score>]`. State: none.

    CUE-3f2a9c1e complaint about service_attitude, 0.87: emotion match 0.92, still pending
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from schemas.recall import Cue, ScoreComponents
from state.recall.scoring import CandidateBatch, PoolScores

_HOURS_PER_DAY = 24.0


def cue_id(memory_id: str) -> str:
    """A short, stable handle for a memory in explanations.

    >>> cue_id("3f2a9c1e-0000-5000-8000-000000000000")
    'CUE-3f2a9c1e'
    """
    return f"CUE-{memory_id.replace('-', '')[:8]}"


def debug_marker(cid: str, css: float) -> str:
    """The admin marker for one cue.

    >>> debug_marker("CUE-7891", 0.8712)
    '[DEBUG:cue=CUE-7891,css=0.871]'
    """
    return f"[DEBUG:cue={cid},css={css:.3f}]"


def shown_text(payload: Mapping[str, object]) -> str:
    """What a cue shows of its memory: the unit, its whole turn and the session's turn before it
    (`Cue.text`, `turn_text`, `context_prev`), one string; what the abstain floor asks to hold the
    things the question names.

    >>> shown_text({"text": "两天内到账。", "source_text": "补偿券两天内到账。", "context_prev": "客户: 补偿呢？"})
    '两天内到账。 补偿券两天内到账。 客户: 补偿呢？'
    """
    parts = (payload.get(f) for f in ("text", "source_text", "context_prev"))
    return " ".join(dict.fromkeys(str(p) for p in parts if p))


def _about(payload: dict[str, object], limit: int = 24) -> str:
    topic = payload.get("topic")
    if topic:
        return str(topic)
    text = str(payload.get("text", ""))
    return f'"{text[:limit]}…"' if len(text) > limit else f'"{text}"'


def reason(i: int, batch: CandidateBatch, scores: PoolScores, now_ts: float, *, verified: str | None = None) -> str:
    """The one-line why: the strongest components first, then state (pending, verified …)."""
    parts: list[tuple[float, str]] = [
        (scores.emotion_match[i] * 0.4, f"emotion match {scores.emotion_match[i]:.2f}"),
        (scores.relevance[i] * 0.5, f"relevance {scores.relevance[i]:.2f}"),
        (scores.time_proximity[i] * 0.25, f"time proximity {scores.time_proximity[i]:.2f}"),
    ]
    if scores.severity[i] >= 1.0:
        parts.append((0.2, "high severity"))
    if scores.commitment_strength[i] > 0:
        parts.append((0.1 * scores.commitment_strength[i], f"commitment {scores.commitment_strength[i]:.1f}"))
    if scores.person[i] > 0:
        parts.append((0.3, f"said by {batch.payloads[i].get('speaker')}"))
    if scores.entity[i] > 0:
        parts.append((0.5, "same identifier"))
    parts.sort(key=lambda p: -p[0])
    words = [p[1] for p in parts[:2]]
    status = int(batch.resolution[i])  # as the user's timeline says now, not as stored at write time
    if scores.overdue[i] > 0:
        words.append("promise overdue")
    elif status == 0:
        words.append("still pending")
    elif status == 1:
        days = (now_ts - (batch.resolved_at[i] if batch.resolved_at[i] == batch.resolved_at[i] else batch.ts[i])) / 3600
        words.append(f"resolved {days / _HOURS_PER_DAY:.1f} days ago")
    if verified:
        words.append(verified)
    return ", ".join(words)


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def shown_units(
    picked: Sequence[int], batch: CandidateBatch, scores: PoolScores, keep: frozenset[int] = frozenset()
) -> list[int]:
    """Which unit of each picked turn a cue shows: the turn keeps its place (ranked by its best unit's
    final score), and the cue shows the eligible unit of that turn nearest the question by relevance,
    so a fragment that only carries a label's weight ("这是老板亲自交代的。") does not stand in for the
    turn's sentence the question is about. `keep` (fallback values, verified ones) is shown as picked.

    >>> from types import SimpleNamespace as NS
    >>> b = NS(turn=np.array([0, 0, 1]))
    >>> s = NS(eligible=np.array([True, True, True]), relevance=np.array([0.2, 0.6, 0.4]))
    >>> shown_units([0, 2], b, s)  # type: ignore[arg-type]
    [1, 2]
    """
    if batch.turn is None:
        return list(picked)
    out: list[int] = []
    for i in picked:
        if i in keep:
            out.append(i)
            continue
        same = np.flatnonzero((batch.turn == batch.turn[i]) & scores.eligible)
        best = int(same[np.argmax(scores.relevance[same])]) if same.size else i
        out.append(best if scores.relevance[best] > scores.relevance[i] else i)
    return out


def build_cues(
    picked: Sequence[int],
    batch: CandidateBatch,
    scores: PoolScores,
    now_ts: float,
    *,
    tiers: Sequence[str],
    fallback: frozenset[int] = frozenset(),
    verified: frozenset[int] = frozenset(),
    weak: bool = False,
) -> tuple[tuple[Cue, ...], str, str]:
    """Cues, explanation text (one line per cue) and debug markers for the chosen indices; `weak`
    marks them as shown under the relevance floor (recall abstained), never for the responder."""
    cues: list[Cue] = []
    lines: list[str] = []
    markers: list[str] = []
    for i in picked:
        p = batch.payloads[i]
        mid = batch.ids[i]
        cid = cue_id(mid)
        note = "fallback value" if i in fallback else ("verified now" if i in verified else None)
        line = f"{cid} {p.get('unit_type', 'statement')} about {_about(dict(p))}, {scores.css[i]:.2f}: " + reason(
            i, batch, scores, now_ts, verified=note
        )
        line = f"weak: {line}" if weak else line
        components = ScoreComponents(
            emotion_match=round(float(scores.emotion_match[i]), 4),
            time_proximity=round(float(scores.time_proximity[i]), 4),
            severity=round(float(scores.severity[i]), 4),
            resolution_gap=round(float(scores.resolution_gap[i]), 4),
            commitment_strength=round(float(scores.commitment_strength[i]), 4),
            semantic=round(float(scores.semantic[i]), 4),
            lexical=round(float(scores.lexical[i]), 4),
            person=round(float(scores.person[i]), 4),
            entity=round(float(scores.entity[i]), 4),
            relevance=round(float(scores.relevance[i]), 4),
            css=round(float(scores.css[i]), 4),
            final=round(float(scores.final[i]), 4),
        )
        cues.append(
            Cue(
                memory_id=mid,
                cue_id=cid,
                tier="recent" if tiers[i] == "recent" else "long_term",
                text=str(p.get("text", "")),
                unit_type=str(p.get("unit_type", "statement")),
                score=round(float(scores.final[i]), 4),
                components=components,
                explanation=line,
                is_fallback=i in fallback,
                turn_text=_text_or_none(p.get("source_text")),
                context_prev=_text_or_none(p.get("context_prev")),
                weak=weak,
            )
        )
        lines.append(line)
        markers.append(debug_marker(cid, float(scores.css[i])))
    return tuple(cues), "\n".join(lines), " ".join(markers)
