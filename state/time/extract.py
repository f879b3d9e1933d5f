"""Time normalisation (docs/design.md#time): find time expressions and turn them into UTC instants.

The relative base is always the event's own timestamp (never the processing clock), so a
replay gives the same answer. Chinese goes through jionlp's extractor with our rewrites and
fixes around it (`state.time.chinese`: 月底, 这周末, 半小时后, 今晚8pm ...); English through our own
rules (`state.time.english`: tomorrow at 3pm, next Tuesday, two days ago, end of the month), and
dateparser only as a gated fallback for absolute dates the rules leave. A mixed turn goes
through both, Chinese first. Wall-clock words are read in `timezone` (the speaker's zone) and
stored as UTC; every expression keeps its `original_form`, character span and granularity.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from schemas.memory import TimeExpression, TimeKind
from state.time import calendar as cal
from state.time.calendar import Found
from state.time.chinese import parse_chinese
from state.time.deadline import find_durations, find_within, mark_deadlines
from state.time.english import parse_english
from state.time.tense import resolve_tense

if TYPE_CHECKING:
    from state.core.language import LangMix


_ONE_DAY = timedelta(days=1)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")
# dateparser also "finds" dates in words like "we" or "may": a fallback hit must name a month or a year.
# A month name or a year (1900-2099): a bare 4-digit number is a price, an extension or a code
# ("1000 Yuan", "extension 4283"), which dateparser would read as the year 1000 or 4283.
_EN_DATE_HINT = re.compile(
    r"\b(jan(uary)?|feb(ruary)?|march|apr(il)?|june?|july?|aug(ust)?|sep(t|tember)?|oct(ober)?|"
    r"nov(ember)?|dec(ember)?|(?:19|20)\d{2})\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=8)
def _zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def _utc(value: datetime, tz: ZoneInfo) -> datetime:
    return value.replace(tzinfo=tz).astimezone(UTC)


def _kind(found: Found) -> TimeKind:
    """A deadline or duration as found; otherwise a point (a day or finer) or a range (longer)."""
    if found.kind in ("deadline", "duration"):
        return found.kind
    if found.granularity in ("week", "month", "year", "range") or found.end - found.start > _ONE_DAY:
        return "range"
    return "point"


def _to_expression(found: Found, tz: ZoneInfo) -> TimeExpression:
    return TimeExpression(
        original_form=found.form,
        start=_utc(found.start, tz),
        end=_utc(found.end, tz),
        granularity=found.granularity,
        span=found.span,
        parser=found.parser,
        kind=_kind(found),
        deadline=None if found.deadline is None else _utc(found.deadline, tz),
    )


def _dateparser_fallback(text: str, base_local: datetime, taken: list[tuple[int, int]]) -> list[Found]:
    """Absolute dates our rules did not take (e.g. "March 3rd 2027"); dateparser's search, gated."""
    if not _EN_DATE_HINT.search(text):
        return []
    from dateparser.search import search_dates  # heavy import: only when needed

    settings = {"RELATIVE_BASE": base_local, "PREFER_DATES_FROM": "future", "RETURN_AS_TIMEZONE_AWARE": False}
    out: list[Found] = []
    cursor = 0
    for form, point in search_dates(text, languages=["en"], settings=settings) or []:
        begin = text.find(form, cursor)
        if begin < 0 or not _EN_DATE_HINT.search(form):
            continue
        cursor = begin + len(form)
        span = (begin, begin + len(form))
        if any(span[0] < b and a < span[1] for a, b in taken):
            continue
        start, end, gran = cal.day_interval(point)
        out.append(Found(form, span, start, end, gran, "dateparser"))
    return out


def normalise_times(text: str, base: datetime, mix: LangMix, *, timezone: str = "UTC") -> tuple[TimeExpression, ...]:
    """Every time expression in `text`, normalised from `base` (the event's own timestamp).

    >>> from datetime import UTC, datetime, timedelta
    >>> [t.start.isoformat() for t in normalise_times("next Tuesday", datetime(2026, 1, 1, 8, tzinfo=UTC), "en")]
    ['2026-01-06T00:00:00+00:00']
    """
    tz = _zone(timezone)
    base_local = base.astimezone(tz).replace(tzinfo=None)
    within = find_within(text, base_local, tz)
    found: list[Found] = []
    if mix in ("zh", "mixed") or _CJK.search(text):
        found.extend(f for f in parse_chinese(text, base_local, tz) if _free(f.span, within))
    if mix in ("en", "mixed", "other") or _LATIN.search(text):
        for expr in parse_english(text, base_local, tz):
            if _free(expr.span, within + found):
                found.append(expr)
        found.extend(_dateparser_fallback(text, base_local, [f.span for f in within + found]))
    found = mark_deadlines(text, base_local, resolve_tense(text, base_local, found))
    found = within + found
    found.extend(find_durations(text, base_local, [f.span for f in found], tz))
    return tuple(e for f in sorted(found, key=lambda f: f.span) if (e := _representable(f, tz)) is not None)


def _free(span: tuple[int, int], taken: list[Found]) -> bool:
    return all(span[1] <= f.span[0] or span[0] >= f.span[1] for f in taken)


# Times within a year of the ends of the calendar are dropped: converting them to UTC or
# adding a validity span to them would overflow ("in 9999 years" names no usable time).
_FIRST_YEAR, _LAST_YEAR = 2, 9997


def _representable(found: Found, tz: ZoneInfo) -> TimeExpression | None:
    if not all(_FIRST_YEAR <= t.year <= _LAST_YEAR for t in (found.start, found.end)):
        return None
    return _to_expression(found, tz)
