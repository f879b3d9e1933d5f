"""Reflection on a user's correction (docs/design.md#responder).

Input: the session's previous answer (`PreviousAnswer`), the user's turn (text, event id, ts)
and the reflection table. Output: a `ReflectionRecord` and, when a wrong memory can be named,
a `SupersedeRequest` — or None when the turn is no correction or does not conflict with the
previous answer. No state here: the responder keeps the previous answer per session.

Rules, not a model: a correction marker (不对, 错了, 应该是; that's wrong, actually …) plus a
corrected value that the previous answer does not already say. The error pattern comes from a
small template set by what the corrected value is: a time (date_parse_error), a status word
(state_sync_delay), an identifier or number (entity_recognition_error), else fact_mismatch.
The memory to supersede is the previous answer's cue that holds the wrong value, else the
first cue the answer used; the user's statement replaces it (the new memory says what the
old one should have said, and keeps the user's words as its source text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from zoneinfo import ZoneInfo

from schemas.memory import TimeExpression
from schemas.reflection import (
    CorrectAnswerSource,
    ErrorPattern,
    ReflectionRecord,
    SupersedeRequest,
    reflection_id,
)
from state.core.language import language_mix
from state.respond.tables import ResponseText
from state.time.extract import normalise_times

_IDENTIFIER = re.compile(r"[A-Za-z]*\d[\dA-Za-z-]*")


@dataclass(frozen=True, slots=True)
class PreviousAnswer:
    """What the responder last said in a session, and which memories it stood on."""

    request_id: str
    text: str
    cue_ids: tuple[str, ...]
    cue_texts: dict[str, str] = field(default_factory=dict)
    task_id: str | None = None


@dataclass(frozen=True, slots=True)
class Correction:
    tenant_id: str
    session_id: str
    user_id: str | None
    event_id: str
    text: str
    ts: datetime
    timezone: str = "UTC"
    explicit: bool = False  # a UserCorrection control event: no marker needed


@dataclass(frozen=True, slots=True)
class Reflection:
    record: ReflectionRecord
    supersede: SupersedeRequest | None


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def corrected_value(text: str, table: ResponseText, *, explicit: bool = False) -> str | None:
    """The value the user says is right, when the turn is a correction.

    >>> from state.respond.tables import response_text
    >>> t = response_text().get()
    >>> corrected_value("不对，是上个月15号", t), corrected_value("错了，应该是北京仓发的货", t)
    ('上个月15号', '北京仓发的货')
    >>> corrected_value("That's wrong, it was order 5521.", t), corrected_value("我的快递到哪了", t)
    ('order 5521', None)
    """
    lowered = text.lower()
    if not explicit and not any(marker.lower() in lowered for marker in table.reflection.markers):
        return None
    for pattern in table.compiled_value_patterns:
        m = pattern.search(text)
        if m and m.group("value").strip():
            return m.group("value").strip()
    return text.strip() if explicit else None


def _times(text: str, ts: datetime, timezone: str) -> tuple[TimeExpression, ...]:
    return normalise_times(text, ts, language_mix(text), timezone=timezone)


def _classify(value: str, value_times: tuple[TimeExpression, ...], table: ResponseText) -> ErrorPattern:
    if value_times:
        return "date_parse_error"
    lowered = value.lower()
    if any(w.lower() in lowered for w in table.reflection.status_words):
        return "state_sync_delay"
    if _IDENTIFIER.search(value):
        return "entity_recognition_error"
    return "fact_mismatch"


def _wrong_value(
    pattern: ErrorPattern,
    previous: str,
    value: str,
    value_times: tuple[TimeExpression, ...],
    correction: Correction,
    table: ResponseText,
) -> str | None:
    if pattern == "date_parse_error":
        right = {(t.start, t.end) for t in value_times}
        for expr in _times(previous, correction.ts, correction.timezone):
            if (expr.start, expr.end) not in right:
                return expr.original_form
        return None
    if pattern == "state_sync_delay":
        lowered = value.lower()
        for word in sorted(table.reflection.status_words, key=len, reverse=True):
            if word.lower() in previous.lower() and word.lower() not in lowered:
                return word
        return None
    if pattern == "entity_recognition_error":
        given: list[str] = _IDENTIFIER.findall(value)
        wanted = max((len(g) for g in given), default=0)
        # An identifier of about the same shape (88213 for 88231), not any digit in the answer.
        candidates = [m for m in _IDENTIFIER.findall(previous) if m not in given and len(m) >= 3]
        candidates.sort(key=lambda m: abs(len(m) - wanted))
        return candidates[0] if candidates else None
    return None


def _conflicts(previous: str, value: str, value_times: tuple[TimeExpression, ...], correction: Correction) -> bool:
    """The previous answer did not already say the corrected value (as text or as the same time)."""
    if _squash(value) in _squash(previous):
        return False
    if value_times:
        said = {(t.start, t.end) for t in _times(previous, correction.ts, correction.timezone)}
        return not all((t.start, t.end) in said for t in value_times)
    return True


def reflect(previous: PreviousAnswer | None, correction: Correction, table: ResponseText) -> Reflection | None:
    """The reflection on `correction`, or None when it is no correction of `previous`."""
    if previous is None:
        return None
    value = corrected_value(correction.text, table, explicit=correction.explicit)
    if value is None:
        return None
    value_times = _times(value, correction.ts, correction.timezone)
    if not _conflicts(previous.text, value, value_times, correction):
        return None
    pattern = _classify(value, value_times, table)
    wrong = _wrong_value(pattern, previous.text, value, value_times, correction, table)

    targets: tuple[str, ...] = ()
    if wrong is not None:
        targets = tuple(i for i in previous.cue_ids if wrong in previous.cue_texts.get(i, ""))
    if not targets and previous.cue_ids:
        targets = previous.cue_ids[:1]

    lang = language_mix(correction.text)
    strategies = table.reflection.fix_strategy[pattern]
    fix = (strategies.zh if lang in ("zh", "mixed") else strategies.en).format(value=value)
    rid = reflection_id(correction.tenant_id, correction.session_id, correction.event_id)
    record = ReflectionRecord(
        reflection_id=rid,
        tenant_id=correction.tenant_id,
        session_id=correction.session_id,
        user_id=correction.user_id,
        ts=correction.ts,
        correction_event_id=correction.event_id,
        correction_text=correction.text,
        previous_request_id=previous.request_id,
        previous_answer=previous.text,
        wrong_value=wrong,
        error_pattern=pattern,
        correct_answer_source=CorrectAnswerSource(
            event_id=correction.event_id,
            text=value,
            normalised=value_times[0].start.isoformat() if value_times else None,
        ),
        fix_strategy=fix,
        superseded_memory_ids=targets,
    )
    if not targets:
        return Reflection(record, None)
    old = previous.cue_texts.get(targets[0], "")
    if wrong is not None and wrong in old:
        # A relative time ("上个月15号") is pinned to its date so the memory stays true later.
        right = (
            value_times[0].start.astimezone(ZoneInfo(correction.timezone)).date().isoformat() if value_times else value
        )
        statement = old.replace(wrong, right)
    else:
        statement = ("用户更正：" if lang in ("zh", "mixed") else "User correction: ") + correction.text.strip()
    supersede = SupersedeRequest(
        reflection_id=rid,
        tenant_id=correction.tenant_id,
        session_id=correction.session_id,
        user_id=correction.user_id,
        task_id=previous.task_id,
        ts=correction.ts,
        memory_ids=targets,
        statement_event_id=correction.event_id,
        statement_text=statement,
        source_text=correction.text,
        lang=lang,
    )
    return Reflection(record, supersede)
