"""The periods a question names, as epoch ranges: what recall reads of the question's time expressions.

Input: the question's text and time (and its time expressions when the write path already read
them). Output: `past_periods` ("上周五", "last Monday"; memories said then may be asked about though
their validity ended) and `named_days` (periods of at most a week, past or not, that a memory's own
times can fall in). State: none. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from schemas.memory import TimeExpression
from state.core.language import language_mix
from state.time.extract import normalise_times

_LAST_WEEKDAY = re.compile(r"\blast\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day\b", re.IGNORECASE)
_DAY_S = 86400.0
_WEEK_S = 7 * _DAY_S


def past_periods(text: str, at: datetime, times: Sequence[TimeExpression] | None = None) -> list[tuple[float, float]]:
    """The past periods a question names, as epoch ranges ("上周五", "last Monday"; not "现在").
    `times`: the question's time expressions when the write path already read them.

    English "last Monday" is ambiguous: the Monday of last week (the normaliser's reading) or the
    most recent Monday. Both count when the later one is already past ("上周五" is not ambiguous).

    >>> from datetime import UTC
    >>> past_periods("现在怎么样了", datetime(2026, 3, 9, 12, tzinfo=UTC))
    []
    """
    now = at.timestamp()
    out: list[tuple[float, float]] = []
    for t in times if times is not None else normalise_times(text, at, language_mix(text)):
        start, end = t.start.timestamp(), t.end.timestamp()
        if end >= now - 3600:
            continue
        out.append((start, end))
        if _LAST_WEEKDAY.search(t.original_form) and end + _WEEK_S < now - 3600:
            out.append((start + _WEEK_S, end + _WEEK_S))
    return out


def named_days(text: str, at: datetime, times: Sequence[TimeExpression] | None = None) -> list[tuple[float, float]]:
    """The periods of at most a week a question names, past or not ("today", "明天之前", "周五"), as
    epoch ranges: a memory whose own times fall in one is about it ("the visit is on Wednesday" for
    "nobody showed up today" on that Wednesday). A bare "now" (no length) names no period."""
    out: list[tuple[float, float]] = []
    for t in times if times is not None else normalise_times(text, at, language_mix(text)):
        start, end = t.start.timestamp(), t.end.timestamp()
        if 3600.0 <= end - start <= 7 * _DAY_S:
            out.append((start, end))
    return out
