"""Time normalisation (SPEC §5.1): find time expressions and turn them into UTC instants.

The relative base is always the event's own timestamp (never the processing clock), so a
replay gives the same answer. Chinese goes through jionlp's time parser (it handles the
colloquial forms dateparser misses: 明天下午三点, 下周二, 上个月15号 ...); English and the rest
through dateparser's search. Wall-clock words are read in `tz` (the conversation's zone)
and stored as UTC; every expression keeps its `original_form` and character span.
"""

from __future__ import annotations

import contextlib
import io
import re
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from schemas.memory import Granularity, TimeExpression

if TYPE_CHECKING:
    from state.language import LangMix


_CJK = re.compile(r"[\u4e00-\u9fff]")
# Words that make an English span a time expression; dateparser alone also "finds" dates in
# words like "we" or "may", so a hit must contain one of these.
_EN_TIME = re.compile(
    r"\b(today|tonight|tomorrow|yesterday|now|noon|midnight|morning|afternoon|evening|"
    r"mon(day)?|tue(s|sday)?|wed(nesday)?|thu(rs|rsday)?|fri(day)?|sat(urday)?|sun(day)?|"
    r"week(s|end)?|months?|years?|days?|hours?|minutes?|ago|later|"
    r"jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|june?|july?|aug(ust)?|sep(t|tember)?|oct(ober)?|"
    r"nov(ember)?|dec(ember)?|\d{1,2}\s*(am|pm|a\.m\.|p\.m\.)|\d{1,2}:\d{2}|o'clock|"
    r"\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(/\d{2,4})?)\b",
    re.IGNORECASE,
)
_EN_CLOCK = re.compile(r"\d\s*(am|pm|a\.m\.|p\.m\.)|\d:\d{2}|o'clock|noon|midnight", re.IGNORECASE)
_EN_WEEK = re.compile(r"\bweek(end)?\b", re.IGNORECASE)
_EN_MONTH = re.compile(r"\bmonth\b", re.IGNORECASE)


@lru_cache(maxsize=8)
def _zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


@lru_cache(maxsize=1)
def _jionlp() -> Any:
    """Import jionlp lazily (about 0.5 s) and keep its import banner off our stdout."""
    with contextlib.redirect_stdout(io.StringIO()):
        import jionlp
    return jionlp


def _granularity_of(start: datetime, end: datetime) -> Granularity:
    seconds = (end - start).total_seconds() + 1
    if seconds <= 1:
        return "second"
    if seconds <= 60:
        return "minute"
    if seconds <= 3600:
        return "hour"
    if seconds <= 86400:
        return "day"
    if seconds <= 7 * 86400:
        return "week"
    if seconds <= 31 * 86400:
        return "month"
    if seconds <= 366 * 86400:
        return "year"
    return "range"


def _local_to_utc(value: datetime, tz: ZoneInfo) -> datetime:
    return value.replace(tzinfo=tz).astimezone(UTC)


def _parse_chinese(text: str, base_local: datetime, tz: ZoneInfo) -> list[TimeExpression]:
    jionlp = _jionlp()
    out: list[TimeExpression] = []
    found: list[dict[str, Any]] = jionlp.ner.extract_time(text, time_base=base_local, with_parsing=True)
    for item in found:
        detail = item.get("detail") or {}
        span = detail.get("time")
        if detail.get("type") not in ("time_point", "time_span") or not isinstance(span, list) or len(span) != 2:
            continue  # periods and deltas without an anchor are not instants
        if "inf" in span:
            continue
        try:
            start = _local_to_utc(datetime.fromisoformat(span[0]), tz)
            end = _local_to_utc(datetime.fromisoformat(span[1]), tz)
        except ValueError:
            # jionlp reads "人均消费在100-150元" as the year 100 and prints it as '100-01-01';
            # what is not an ISO instant is not a time expression (and must not stop the flow).
            continue
        begin, finish = item["offset"]
        out.append(
            TimeExpression(
                original_form=item["text"],
                start=start,
                end=end,
                granularity=_granularity_of(start, end),
                span=(int(begin), int(finish)),
                parser="jionlp",
            )
        )
    return out


def _english_interval(form: str, point: datetime) -> tuple[datetime, datetime, Granularity]:
    if _EN_CLOCK.search(form):
        start = point.replace(second=0, microsecond=0)
        return start, start + timedelta(minutes=1) - timedelta(seconds=1), "minute"
    if _EN_WEEK.search(form):
        start = (point - timedelta(days=point.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
        return start, start + timedelta(days=7) - timedelta(seconds=1), "week"
    if _EN_MONTH.search(form) and not re.search(r"\d", form):
        start = point.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        nxt = (start + timedelta(days=32)).replace(day=1)
        return start, nxt - timedelta(seconds=1), "month"
    start = point.replace(hour=0, minute=0, second=0, microsecond=0)
    return start, start + timedelta(days=1) - timedelta(seconds=1), "day"


def _parse_english(text: str, base_local: datetime, tz: ZoneInfo) -> list[TimeExpression]:
    if not _EN_TIME.search(text):
        return []
    from dateparser.search import search_dates  # heavy import: only when needed

    settings = {"RELATIVE_BASE": base_local, "PREFER_DATES_FROM": "future", "RETURN_AS_TIMEZONE_AWARE": False}
    found = search_dates(text, languages=["en"], settings=settings) or []
    out: list[TimeExpression] = []
    cursor = 0
    for form, point in found:
        if not _EN_TIME.search(form):
            continue
        begin = text.find(form, cursor)
        if begin < 0:
            continue
        cursor = begin + len(form)
        start, end, granularity = _english_interval(form, point)
        out.append(
            TimeExpression(
                original_form=form,
                start=_local_to_utc(start, tz),
                end=_local_to_utc(end, tz),
                granularity=granularity,
                span=(begin, begin + len(form)),
                parser="dateparser",
            )
        )
    return out


def normalise_times(text: str, base: datetime, mix: LangMix, *, timezone: str = "UTC") -> tuple[TimeExpression, ...]:
    """Every time expression in `text`, normalised from `base` (the event's own timestamp).

    >>> from datetime import UTC, datetime
    >>> [t.start.isoformat() for t in normalise_times("next Tuesday", datetime(2026, 1, 1, 8, tzinfo=UTC), "en")]
    ['2026-01-06T00:00:00+00:00']
    """
    tz = _zone(timezone)
    base_local = base.astimezone(tz).replace(tzinfo=None)
    found: list[TimeExpression] = []
    if mix in ("zh", "mixed") or _CJK.search(text):
        found.extend(_parse_chinese(text, base_local, tz))
    if mix in ("en", "mixed", "other"):
        taken = [t.span for t in found]
        for expr in _parse_english(text, base_local, tz):
            if all(expr.span[1] <= a or expr.span[0] >= b for a, b in taken):
                found.append(expr)
    return tuple(sorted(found, key=lambda t: t.span))
