"""The cue-grounded fallback answer (docs/design.md#responder): what the responder says when the model cannot.

Input: the request's cues (already distilled to facts), the decisions (promise strength) and
the wording table. Output: a reply that states only what the cues say — every fact in it is a
cue's distilled text, the framing words carry no facts — softened ("肯定能给到" → "预计可提供")
when the promise strength is hedged. Chinese or English by the query. No state.
"""

from __future__ import annotations

from schemas.response import ResponseDecisions
from state.respond.decisions import soften
from state.respond.tables import PromiseTable, ResponseText


def _strip_head(fact: str) -> str:
    """Drop the "date role (kind): " head of a distilled fact; the reply quotes what was said."""
    head, sep, body = fact.partition(": ")
    return body if sep and "(" in head else fact


def fallback_answer(
    facts: tuple[str, ...],
    decisions: ResponseDecisions,
    lang: str,
    text_table: ResponseText,
    promise_table: PromiseTable,
) -> str:
    """A template reply built from the facts only.

    >>> from datetime import UTC, datetime
    >>> from schemas.response import ResponseDecisions
    >>> from state.respond.tables import decision_tables, response_text
    >>> d = ResponseDecisions(route="template", route_reason="", complexity_score=0, planning="direct",
    ...                       urgency="high", channel="app_popup", promise="hedged")
    >>> fallback_answer(("2026-03-02 客服 (commitment): 发票下周二肯定能给到",), d, "zh",
    ...                 response_text().get(), decision_tables().get().promise)
    '根据已有记录：发票下周二预计可提供。以上时间为预计，我们会尽快确认后回复您。'
    """
    words = text_table.fallback.zh if lang in ("zh", "mixed") else text_table.fallback.en
    if not facts:
        return words.none
    bodies = [_strip_head(f).rstrip("。.；;") for f in facts]
    if decisions.promise == "hedged":
        bodies = [soften(b, promise_table) for b in bodies]
    text = words.intro + words.joiner.join(bodies) + words.end
    if decisions.promise == "hedged":
        text += words.hedged
    return text
