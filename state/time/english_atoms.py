"""English time atoms: the words and patterns of `state.time.english`, each match turned into an atom.

An atom is a day (tomorrow, next Tuesday, March 20), a period (next week, this weekend, the end of
the month), a point (in two hours, two days ago), a clock time (3pm, half past three, noon) or a
part of the day (morning, tonight); `state.time.english` merges neighbours (tomorrow + at 3pm).
The conventions are stated there. Pure functions over the base time; no state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo

from schemas.memory import Granularity
from state.time import calendar as cal

_SMALL_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty"
)
_SMALL = _SMALL_WORDS.split()
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
NUMBER_WORDS: dict[str, float] = {w: float(i) for i, w in enumerate(_SMALL)}
NUMBER_WORDS.update({k: float(v) for k, v in _TENS.items()})
NUMBER_WORDS.update({"a": 1.0, "an": 1.0, "a couple of": 2.0, "couple of": 2.0, "a few": 3.0, "several": 3.0})

_WORD_NUM = (
    r"(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)[- ](?:one|two|three|four|five|six|seven|eight|nine)|"
    + "|".join(sorted((re.escape(w) for w in NUMBER_WORDS), key=len, reverse=True))
    + r")"
)
_NUM = rf"(?:\d+(?:\.\d+)?|{_WORD_NUM})"
_UNIT = r"(?:minutes?|mins?|hours?|hrs?|days?|weeks?|fortnights?|months?|years?)"
# A count of units, "and a half" before or after the unit adding half of one: two and a half hours, a day and a half.
_COUNT = rf"(?P<n>{_NUM})(?P<half> and a half)? (?P<u>{_UNIT})\b(?P<half2> and a half\b)?"
# A perfect, negated or not, in the clause before a count ("still hasn't shipped after six weeks", "we've
# waited after 3 days"): "after" the count then measures the time up to now, not a point ahead.
PERFECT = re.compile(
    r"(?:\b(?:have|has|had)(?:\s+not)?|\b(?:haven|hasn|hadn)['’]?t|['’]ve)\s+"
    r"(?:(?:still|already|just|not|never|yet|even|only|really)\s+)*(?!to\b)[a-z]+(?:ed|en|wn|ne|ght|t|d)\b",
    re.IGNORECASE,
)
_CLAUSE_MARK = re.compile(r"[,.;:!?，。；！？]")


def perfect_before(text: str, pos: int) -> bool:
    """Whether the clause of `text` that runs up to `pos` holds a perfect (has shipped, haven't heard).

    >>> perfect_before("it still hasn't shipped after six weeks", 23), perfect_before("call me after two days", 8)
    (True, False)
    """
    start = max([0, *(m.end() for m in _CLAUSE_MARK.finditer(text, 0, pos))])
    return PERFECT.search(text, start, pos) is not None


# A negated perfect ("hasn't moved", "haven't heard back", "has not replied"): "in" a count after it in its
# clause is how long the thing has not happened up to now ("hasn't answered in two weeks"), no point ahead.
_NEGATED_PERFECT = re.compile(
    r"(?:\b(?:have|has|had)\s+(?:not|never)|\b(?:haven|hasn|hadn)['’]?t)\s+"
    r"(?:(?:still|yet|even|ever|really|once)\s+)*[a-z]+(?:ed|en|wn|ne|ght|t|d)\b",
    re.IGNORECASE,
)


def negated_perfect_before(text: str, pos: int) -> bool:
    """Whether the clause of `text` that runs up to `pos` holds a negated perfect (hasn't moved).

    >>> negated_perfect_before("the line hasn't moved in 45 minutes", 22)
    True
    >>> negated_perfect_before("it has moved, call me in 45 minutes", 20)
    False
    """
    start = max([0, *(m.end() for m in _CLAUSE_MARK.finditer(text, 0, pos))])
    return _NEGATED_PERFECT.search(text, start, pos) is not None


_WEEKDAYS = {
    "monday": 0,
    "mon": 0,
    "tuesday": 1,
    "tues": 1,
    "tue": 1,
    "wednesday": 2,
    "wed": 2,
    "thursday": 3,
    "thurs": 3,
    "thu": 3,
    "friday": 4,
    "fri": 4,
    "saturday": 5,
    "sunday": 6,
}
_WD = r"(?:monday|tuesday|tues|wednesday|thursday|thurs|friday|saturday|sunday)"
_MONTHS = {
    "january": 1,
    "jan": 1,
    "february": 2,
    "feb": 2,
    "march": 3,
    "mar": 3,
    "april": 4,
    "apr": 4,
    "may": 5,
    "june": 6,
    "jun": 6,
    "july": 7,
    "jul": 7,
    "august": 8,
    "aug": 8,
    "september": 9,
    "sept": 9,
    "sep": 9,
    "october": 10,
    "oct": 10,
    "november": 11,
    "nov": 11,
    "december": 12,
    "dec": 12,
}
_MON = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)"
)
_MONTH_FULL = r"(?:january|february|march|april|june|july|august|september|october|november|december)"
_PARTS: dict[str, tuple[int, int]] = {
    "morning": (7, 12),
    "midmorning": (10, 12),
    "afternoon": (13, 18),
    "midafternoon": (15, 18),
    "evening": (18, 24),
    "night": (18, 24),
    "tonight": (18, 24),
}
_HOUR_WORDS = {w: i for i, w in enumerate(_SMALL) if 1 <= i <= 12}
_QUARTER_WORDS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_QUARTER = r"(?:q(?P<q>[1-4])|(?:the )?(?P<qw>first|1st|second|2nd|third|3rd|fourth|4th) quarter)\b"


def word_number(text: str) -> float:
    """A number written in digits or words.

    >>> word_number("twenty-five"), word_number("a couple of"), word_number("3")
    (25.0, 2.0, 3.0)
    """
    text = text.lower().strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    if text in NUMBER_WORDS:
        return NUMBER_WORDS[text]
    tens, _, ones = re.split(r"([- ])", text, maxsplit=1)
    return NUMBER_WORDS[tens] + NUMBER_WORDS[ones]


def _unit(word: str) -> tuple[str, float]:
    word = word.lower().rstrip("s")
    table = {
        "min": "minute",
        "minute": "minute",
        "hr": "hour",
        "hour": "hour",
        "day": "day",
        "week": "week",
        "month": "month",
        "year": "year",
    }
    if word == "fortnight":
        return "week", 2.0
    return table[word], 1.0


@dataclass(frozen=True, slots=True)
class Atom:
    kind: str  # "day" | "period" | "point" | "clock" | "part" | "dayend" (EOD: today unless a day joins it)
    span: tuple[int, int]
    start: datetime | None = None
    end: datetime | None = None
    granularity: Granularity = "day"
    hour: int = 0
    minute: int = 0
    explicit_half: bool = False  # the clock said am/pm (or 24-hour form): no afternoon guess


def _clock_atom(span: tuple[int, int], hour: int, minute: int, meridiem: str | None) -> Atom | None:
    if meridiem:
        m = meridiem.lower().replace(".", "")
        if hour == 12:
            hour = 0 if m == "am" else 12
        elif m == "pm":
            hour += 12
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    return Atom("clock", span, hour=hour, minute=minute, explicit_half=meridiem is not None)


def _day(span: tuple[int, int], day: datetime) -> Atom:
    start, end, gran = cal.day_interval(day)
    return Atom("day", span, start, end, gran)


def _period(span: tuple[int, int], interval: tuple[datetime, datetime, Granularity]) -> Atom:
    return Atom("period", span, interval[0], interval[1], interval[2])


def _safe_date(year: int, month: int, day: int) -> datetime | None:
    try:
        return datetime(year, month, day)  # noqa: DTZ001 - naive local wall clock by design
    except ValueError:
        return None


def _dated(base: datetime, month: int, day: int, year: str | None) -> datetime | None:
    if year:
        y = int(year)
        return _safe_date(y + 2000 if y < 100 else y, month, day)
    found = _safe_date(base.year, month, day)
    if found is not None and found < cal.day_start(base):
        found = _safe_date(base.year + 1, month, day)  # a date without a year: the next one
    return found


def _weekday_day(base: datetime, weekday: str, mod: str = "", week_word: str = "") -> datetime:
    """The day a weekday names from `base`, with its modifier (next, last, this, coming) or week words.

    >>> sunday = datetime(2032, 2, 29, 11)
    >>> _weekday_day(sunday, "monday").date(), _weekday_day(sunday, "friday", "last").date()
    (datetime.date(2032, 3, 1), datetime.date(2032, 2, 20))
    """
    mod, week_word = mod.lower(), week_word.lower()
    wd = _WEEKDAYS[weekday.lower()]
    if mod in ("next", "the next") or "next week" in week_word:
        return cal.weekday_in_week(base, wd, 1)
    if mod in ("last", "past") or "last week" in week_word:
        return cal.weekday_in_week(base, wd, -1)
    if mod == "this" or "this week" in week_word:
        return cal.weekday_in_week(base, wd, 0)
    return cal.next_weekday(base, wd)  # bare or "coming": the next one after today


def _weekday_atom(m: re.Match[str], base: datetime) -> Atom:
    return _day(m.span(), _weekday_day(base, m.group("wd"), m.group("mod") or "", m.group("wk") or ""))


def _count_from_day_atom(m: re.Match[str], base: datetime) -> Atom | None:
    """A week from Monday, two weeks from Friday, three days from tomorrow: the count on from that day,
    a day (the anchor is read as it is alone: a bare Monday is the next one). Hours from a day name no day."""
    unit, factor = _unit(m.group("u"))
    if unit in ("minute", "hour"):
        return None
    anchor = m.group("anchor").lower()
    if anchor in ("tomorrow", "yesterday"):
        day = cal.day_start(base) + timedelta(days=1 if anchor == "tomorrow" else -1)
    else:
        day = _weekday_day(base, m.group("wd"), m.group("mod") or "")
    amount = word_number(m.group("n")) + (0.5 if m.group("half") or m.group("half2") else 0.0)
    return _day(m.span(), cal.delta_interval(day, unit, amount * factor)[0])


def _shift_word(word: str) -> int:
    return {"next": 1, "last": -1, "past": -1, "previous": -1}.get(word.lower().replace("the ", ""), 0)


def _period_atom(m: re.Match[str], base: datetime, shift: int | None = None) -> Atom:
    n = _shift_word(m.group("mod")) if shift is None else shift
    what = m.group("p").lower()
    if what == "week":
        start = cal.week_start(base, n)
        return _period(m.span(), (start, start + timedelta(days=7) - cal.ONE_SECOND, "week"))
    if what == "weekend":
        return _period(m.span(), cal.weekend_interval(base, n))
    if what == "month":
        return _period(m.span(), cal.month_interval(base, n))
    if what == "quarter":
        return _period(m.span(), cal.quarter_interval(base, n))
    return _period(m.span(), cal.year_interval(base, n))


def _edge_atom(m: re.Match[str], base: datetime) -> Atom:
    n = _shift_word(m.group("mod") or "")
    what = m.group("p").lower()
    end = m.group("edge").lower() == "end"
    if what == "day":
        return _day(m.span(), base)
    if what == "week":
        day = cal.weekday_in_week(base, 4 if end else 0, n)  # end of the week: Friday, working week
        return _day(m.span(), day)
    if what == "month":
        if end:
            return _period(m.span(), cal.month_end_day(base, n))
        return _day(m.span(), cal.month_interval(base, n)[0])
    if what == "quarter":
        first, last, _ = cal.quarter_interval(base, n)
        return _period(m.span(), cal.day_interval(last)) if end else _day(m.span(), first)
    start, finish, _ = cal.year_interval(base, n)
    return _day(m.span(), finish if end else start)


def _named_quarter(m: re.Match[str], base: datetime) -> tuple[datetime, datetime, Granularity]:
    """Q3 / the third quarter: the calendar quarter of the year said (next Q1: next year's), else this year's
    unless it is over, then next year's (Q1 said in November is the coming one)."""
    number = int(m.group("q")) if m.group("q") else _QUARTER_WORDS[m.group("qw").lower()]
    mod = (m.groupdict().get("mod") or "").lower()
    year = int(m.group("y")) if m.group("y") else base.year + _shift_word(mod)
    found = cal.quarter_interval(datetime(year, 3 * number - 2, 1))  # noqa: DTZ001 - naive local wall clock
    if not m.group("y") and not mod and found[1] < base:
        found = cal.quarter_interval(datetime(year + 1, 3 * number - 2, 1))  # noqa: DTZ001
    return found


def _offset_atom(m: re.Match[str], base: datetime, sign: float, zone: tzinfo | None = None) -> Atom:
    amount = word_number(m.group("n")) + (0.5 if m.group("half") or m.group("half2") else 0.0)
    unit, factor = _unit(m.group("u"))
    start, end, gran = cal.delta_interval(base, unit, sign * amount * factor, zone)
    return Atom("point", m.span(), start, end, gran)


def _half_hour_atom(m: re.Match[str], base: datetime, sign: float, minutes: float, zone: tzinfo | None = None) -> Atom:
    start, end, gran = cal.delta_interval(base, "minute", sign * minutes, zone)
    return Atom("point", m.span(), start, end, gran)


_F = re.IGNORECASE
_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(?:an|one) hour and a half (?:from now|later)\b|\bin (?:an|one) hour and a half\b", _F), "h90+"),
    (re.compile(r"\b(?:in|within) half an hour\b|\bhalf an hour (?:from now|later)\b|\bin a half hour\b", _F), "h30+"),
    (re.compile(r"\bhalf an hour ago\b", _F), "h30-"),
    # A count from a named day is a day on from it, not a length ("a week from Monday" = the Monday after
    # the coming one); "from Monday to Friday" is a span's start, no anchor.
    (
        re.compile(
            rf"\b{_COUNT} from (?P<anchor>tomorrow|yesterday|(?:(?P<mod>next|this|coming|this coming|last) )?"
            rf"(?P<wd>{_WD}))\b(?!\s*(?:to|until|till|through|thru|and)\b|\s*[-–])",
            _F,
        ),
        "countfrom",
    ),
    (re.compile(rf"\b(?:in|within|after) {_COUNT}(?: (?:from now|later|time))?", _F), "off+"),
    (re.compile(rf"\b{_COUNT} (?:from now|from today|later)\b", _F), "off+"),
    (re.compile(rf"\b{_COUNT} ago\b", _F), "off-"),
    (re.compile(r"\b(?:the )?day after tomorrow\b", _F), "d+2"),
    (re.compile(r"\b(?:the )?day before yesterday\b", _F), "d-2"),
    (re.compile(r"\btomorrow\b", _F), "d+1"),
    (re.compile(r"\byesterday\b", _F), "d-1"),
    (re.compile(r"\btoday\b", _F), "d+0"),
    (
        re.compile(
            rf"\b(?:at )?(?:(?P<hw>\d{{1,2}})(?::(?P<mi>[0-5]\d))?|(?P<hw2>{'|'.join(_HOUR_WORDS)}) o'clock)"
            r"(?: o'clock)? "
            r"(?P<part>tonight|this (?:morning|afternoon|evening)|in the (?:morning|afternoon|evening)|at night)\b",
            _F,
        ),
        "hpart",
    ),
    (re.compile(r"\btonight\b", _F), "tonight"),
    (re.compile(r"\blast night\b", _F), "lastnight"),
    (
        re.compile(r"\b(?:the )?(?P<d>\d{1,2})(?:st|nd|rd|th)? of (?P<mod>last|next|this|the) month\b", _F),
        "nthof",
    ),
    # The same day with the month named first or after it: next month's 3rd, the 5th next month.
    (re.compile(r"\b(?P<mod>last|next|this) month['’]s (?P<d>\d{1,2})(?:st|nd|rd|th)?\b", _F), "nthof"),
    (re.compile(r"\bthe (?P<d>\d{1,2})(?:st|nd|rd|th)? (?P<mod>last|next|this) month\b", _F), "nthof"),
    # The end of a working day (EOD, COB, close of business, end of day): a day of its own, which a day
    # next to it names (COB Monday, EOD tomorrow, end of day on Thursday), else today; with a limit word
    # it ends at 23:59:59, as a bare-day limit does. "the cob" is a corn cob, no time.
    (
        re.compile(
            r"\b(?:eod|eob|(?<!\bthe )cob|close of (?:business|play)|end of business|"
            r"(?:the )?end of (?:the )?(?:business |working )?day)\b",
            _F,
        ),
        "dayend",
    ),
    (re.compile(rf"\b(?P<third>early|mid|late|the middle of)[- ](?P<mon>{_MONTH_FULL})\b", _F), "third"),
    (
        re.compile(r"\b(?P<third>early|mid|late|the middle of)[- ](?:(?P<mod>next|last|this) month|the month)\b", _F),
        "thirdrel",
    ),
    (re.compile(r"\bthe (?P<p>week|weekend|month|quarter|year) after next\b", _F), "afternext"),
    (re.compile(rf"\b(?:the )?(?P<wd>{_WD}) after next\b", _F), "wdafternext"),
    (
        re.compile(
            r"\b(?:the )?(?P<edge>end|beginning|start) of (?:the |this )?(?:(?P<mod>next|last|previous) )?"
            r"(?P<p>day|week|month|quarter|year)\b",
            _F,
        ),
        "edge",
    ),
    (
        re.compile(
            rf"\b(?:the )?(?P<edge>end|beginning|start) of (?P<mon>{_MONTH_FULL}|may)\b"
            r"(?:,? (?P<y>\d{4})| (?P<ymod>next|last|this) year\b)?",
            _F,
        ),
        "monedge",
    ),
    (
        re.compile(rf"\b(?:the )?(?P<edge>end|beginning|start) of {_QUARTER}(?:,? (?P<y>\d{{4}}))?", _F),
        "qedge",
    ),
    (re.compile(r"\b(?P<mod>month|year)-end\b", _F), "mend"),
    (
        re.compile(
            r"\b(?:(?P<mod>last|next|this) )?(?P<name>black friday|cyber monday|thanksgiving|christmas eve|"
            r"christmas day|christmas|boxing day|new year['’]s eve|new year['’]s day|valentine['’]s day|halloween)\b",
            _F,
        ),
        "named",
    ),
    (
        re.compile(
            rf"\b(?:(?P<mod>next|last|this|coming|this coming|the next|past) )?(?P<wd>{_WD})\b"
            r"(?: (?P<wk>next week|last week|this week))?",
            _F,
        ),
        "weekday",
    ),
    (
        re.compile(
            r"\b(?P<mod>next|last|this|the coming|coming|past|previous) (?P<p>week|weekend|month|quarter|year)\b", _F
        ),
        "period",
    ),
    # A quarter named by its number (Q3, the third quarter, Q1 2036, next Q1): this year's unless it is over.
    (re.compile(rf"\b(?:(?P<mod>next|last|this) )?{_QUARTER}(?:,? (?P<y>\d{{4}}))?", _F), "nquarter"),
    (re.compile(r"\b(?:over )?the weekend\b", _F), "weekend"),
    (re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b", _F), "iso"),
    (re.compile(rf"\b(?P<mon>{_MON})\.? (?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,? (?P<y>\d{{4}}))?", _F), "md"),
    (
        re.compile(rf"\b(?:the )?(?P<d>\d{{1,2}})(?:st|nd|rd|th)? (?:of )?(?P<mon>{_MON})\b(?:,? (?P<y>\d{{4}}))?", _F),
        "dm",
    ),
    (re.compile(r"\b(?P<m>\d{1,2})/(?P<d>\d{1,2})(?:/(?P<y>\d{2,4}))?\b", _F), "slash"),
    (re.compile(r"\bthe (?P<d>\d{1,2})(?:st|nd|rd|th)\b", _F), "nth"),
    (re.compile(rf"\b(?:(?P<mod>next|last|this) |in )(?P<mon>{_MONTH_FULL})\b", _F), "month"),
    (re.compile(r"\b(?P<h>\d{1,2})(?::(?P<mi>[0-5]\d))? ?(?P<ap>a\.m\.|p\.m\.|am|pm)(?![a-z])", _F), "clock"),
    (
        re.compile(
            rf"\b(?P<hw>{'|'.join(_HOUR_WORDS)})(?: (?P<mw>thirty|fifteen|forty[- ]five))? "
            r"(?P<ap>a\.m\.|p\.m\.|am|pm|o'clock)(?![a-z])",
            _F,
        ),
        "wclock",
    ),
    (re.compile(r"\b(?P<h>[01]?\d|2[0-3]):(?P<mi>[0-5]\d)\b", _F), "clock24"),
    (re.compile(rf"\bhalf past (?P<hw>\d{{1,2}}|{'|'.join(_HOUR_WORDS)})\b", _F), "halfpast"),
    (re.compile(rf"\b(?P<q>quarter) (?P<dir>past|to) (?P<hw>\d{{1,2}}|{'|'.join(_HOUR_WORDS)})\b", _F), "quarter"),
    (re.compile(r"\b(?:at )?(?P<w>noon|midday|midnight)\b", _F), "noon"),
    # "first thing" with a day (first thing Monday, tomorrow first thing): the start of that morning, 07:00.
    (re.compile(r"\bfirst thing(?: in the morning)?\b", _F), "first"),
    # mid-morning / mid-afternoon: the middle of that part, 10:00 / 15:00 (tomorrow mid-morning).
    (
        re.compile(
            r"\b(?:in the |this )?(?P<part>(?:mid-?)?morning|(?:mid-?)?afternoon|evening|night)\b|\bat night\b", _F
        ),
        "part",
    ),
    (re.compile(r"\bat (?P<h>\d{1,2})\b(?![:./]\d)", _F), "barehour"),
    # An hour in words (at two, at eleven): a clock only right after a day ("thursday at two"), as a bare
    # "at 5" is; "at one of our stores" is no hour.
    (
        re.compile(
            rf"\bat (?P<hw>{'|'.join(_HOUR_WORDS)})\b(?![- ](?:of|or|and|more|another|point|thirty|fifteen)\b)", _F
        ),
        "wordhour",
    ),
]


_CLOCK_LEAD = re.compile(r"\b(?:before|after|until|till|around|about|by|from)\s*$", re.IGNORECASE)


def _part_clock(m: re.Match[str], span: tuple[int, int]) -> Atom | None:
    """At 10 tonight, before 7 in the evening, 9:30 this morning: a clock whose half of the day the
    part says. A bare number needs "at", o'clock, minutes or a time word before it ("I bought 3 this
    morning" is a count)."""
    form = m.group(0).lower()
    lead = form.startswith("at ") or "o'clock" in form or m.group("mi") or _CLOCK_LEAD.search(m.string[: m.start()])
    if not lead:
        return None
    hour = _hour_value(m.group("hw") or m.group("hw2"))
    part = m.group("part").lower()
    if part.endswith("morning"):
        hour = 0 if hour == 12 else hour
    elif hour < 12:
        hour += 12
    atom = _clock_atom(span, hour, int(m.group("mi") or 0), None)
    return None if atom is None else Atom("clock", span, hour=atom.hour, minute=atom.minute, explicit_half=True)


def _month_third(m: re.Match[str], base: datetime) -> tuple[datetime, datetime, Granularity]:
    """early / mid / late February: the 1st-10th, 11th-20th, 21st-last (上旬, 中旬, 下旬), the next such
    month; mid next month, early this month: that third of the month named relative to the event's."""
    if "mon" in m.groupdict():
        month = _MONTHS[m.group("mon").lower()]
        year = base.year + (1 if month < base.month else 0)
        first, last, _ = cal.month_interval(datetime(year, month, 1))  # noqa: DTZ001 - naive local wall clock
    else:
        first, last, _ = cal.month_interval(base, _shift_word(m.group("mod") or ""))
    third = m.group("third").lower()
    if third == "early":
        return first, first + timedelta(days=10) - cal.ONE_SECOND, "range"
    if third == "late":
        return first + timedelta(days=20), last, "range"
    return first + timedelta(days=10), first + timedelta(days=20) - cal.ONE_SECOND, "range"


def _hour_value(word: str) -> int:
    return int(word) if word.isdigit() else _HOUR_WORDS[word.lower()]


def _atom(kind: str, m: re.Match[str], base: datetime, zone: tzinfo | None = None) -> Atom | None:
    span = m.span()
    if kind in ("h90+", "h30+", "h30-"):
        return _half_hour_atom(m, base, -1.0 if kind.endswith("-") else 1.0, 90.0 if kind == "h90+" else 30.0, zone)
    if kind in ("off+", "off-"):
        if m.group(0).lower().startswith("after") and perfect_before(m.string, m.start()):
            return None  # "still hasn't shipped after six weeks": a length up to now (`deadline.find_durations`)
        if m.group(0).lower().startswith("in ") and negated_perfect_before(m.string, m.start()):
            return None  # "hasn't answered in two weeks": a length up to now, as after a perfect
        return _offset_atom(m, base, -1.0 if kind == "off-" else 1.0, zone)
    if kind.startswith("d") and kind[1] in "+-":
        return _day(span, base + timedelta(days=int(kind[1:])))
    if kind in ("tonight", "lastnight"):
        day = cal.day_start(base) - timedelta(days=1 if kind == "lastnight" else 0)
        return Atom("period", span, day.replace(hour=18), day.replace(hour=23, minute=59, second=59), "hour")
    if kind == "edge":
        return _edge_atom(m, base)
    if kind == "dayend":
        start, end, gran = cal.day_interval(base)
        return Atom("dayend", span, start, end, gran)
    if kind == "monedge":  # the end of July: its last day; the start of May: its first; the next such month
        month = _MONTHS[m.group("mon").lower()]
        year = int(m.group("y")) if m.group("y") else base.year + (1 if month < base.month else 0)
        if m.group("ymod"):  # the end of July next year: July of the year named
            year = base.year + _shift_word(m.group("ymod"))
        first = datetime(year, month, 1)  # noqa: DTZ001 - naive local wall clock by design
        if m.group("edge").lower() == "end":
            return _period(span, cal.month_end_day(first))
        return _day(span, first)
    if kind == "nquarter":
        return _period(span, _named_quarter(m, base))
    if kind == "qedge":  # the end of Q1: its last day; the start of Q3: its first
        first, last, _ = _named_quarter(m, base)
        return _period(span, cal.day_interval(last)) if m.group("edge").lower() == "end" else _day(span, first)
    if kind == "mend":
        if m.group("mod").lower() == "month":
            return _period(span, cal.month_end_day(base))
        return _day(span, cal.year_interval(base)[1])
    if kind == "weekday":
        return _weekday_atom(m, base)
    if kind == "countfrom":
        return _count_from_day_atom(m, base)
    if kind == "named":
        named = cal.nearest_named_day(m.group("name"), base, (m.group("mod") or "").lower())
        return None if named is None else _day(span, named)
    if kind == "period":
        return _period_atom(m, base)
    if kind == "weekend":
        return _period(span, cal.weekend_interval(base, 1 if base.weekday() == 6 else 0))
    if kind in ("iso", "md", "dm", "slash"):
        month = int(m.group("m")) if kind in ("iso", "slash") else _MONTHS[m.group("mon").lower()]
        found = _dated(base, month, int(m.group("d")), m.group("y"))
        return None if found is None else _day(span, found)
    if kind == "hpart":
        return _part_clock(m, span)
    if kind == "nthof":
        first = cal.month_interval(base, _shift_word(m.group("mod")))[0]
        nth = _safe_date(first.year, first.month, int(m.group("d")))
        if nth is not None and m.group("mod").lower() == "the" and nth < cal.day_start(base):
            nth = cal.add_months(nth, 1)  # "the 3rd of the month" said on the 20th: the next one
        return None if nth is None else _day(span, nth)
    if kind in ("third", "thirdrel"):
        return _period(span, _month_third(m, base))
    if kind == "afternext":  # the week after next: two on from this one, as next week is one
        return _period_atom(m, base, 2)
    if kind == "wdafternext":
        return _day(span, cal.weekday_in_week(base, _WEEKDAYS[m.group("wd").lower()], 2))
    if kind == "nth":
        nth = _safe_date(base.year, base.month, int(m.group("d")))
        if nth is not None and nth < cal.day_start(base):
            nth = cal.add_months(nth, 1)
        return None if nth is None else _day(span, nth)
    if kind == "month":
        month = _MONTHS[m.group("mon").lower()]
        mod = (m.group("mod") or "").lower()
        year = base.year + (1 if mod == "next" else -1 if mod == "last" else 0)
        if not mod and month < base.month:
            year += 1
        return _period(span, cal.month_interval(datetime(year, month, 1)))  # noqa: DTZ001
    if kind == "clock":
        return _clock_atom(span, int(m.group("h")), int(m.group("mi") or 0), m.group("ap"))
    if kind == "wclock":
        minutes = {"thirty": 30, "fifteen": 15}.get((m.group("mw") or "").lower(), 45 if m.group("mw") else 0)
        ap = m.group("ap").lower()
        return _clock_atom(span, _hour_value(m.group("hw")), minutes, None if ap == "o'clock" else ap)
    if kind == "clock24":
        hour = int(m.group("h"))
        atom = _clock_atom(span, hour, int(m.group("mi")), None)
        return (
            None
            if atom is None
            else Atom("clock", span, hour=atom.hour, minute=atom.minute, explicit_half=hour == 0 or hour > 12)
        )
    if kind in ("halfpast", "quarter"):
        hour = _hour_value(m.group("hw"))
        minute = 30
        if kind == "quarter":
            minute = 15 if m.group("dir").lower() == "past" else 45
            hour = hour if m.group("dir").lower() == "past" else hour - 1
        return _clock_atom(span, hour, minute, None)
    if kind == "noon":  # midnight: the end of the day it is said on (24:00 = next day 00:00)
        return Atom("clock", span, hour=24 if m.group("w").lower() == "midnight" else 12, explicit_half=True)
    if kind == "first":
        return Atom("part", span, hour=_PARTS["morning"][0], minute=_PARTS["morning"][0] + 1)
    if kind == "part":
        part = (m.group("part") or "night").lower().replace("mid-", "mid")
        return Atom("part", span, hour=_PARTS[part][0], minute=_PARTS[part][1])
    if kind == "wordhour":
        return _clock_atom(span, _hour_value(m.group("hw")), 0, None)
    return _clock_atom(span, int(m.group("h")), 0, None) if kind == "barehour" else None


def scan_atoms(text: str, base: datetime, zone: tzinfo | None = None) -> list[Atom]:
    """The atoms of `text` from `base` (naive wall clock in `zone`; hour and minute offsets are elapsed time there)."""
    taken: list[tuple[int, int]] = []
    atoms: list[Atom] = []
    for pattern, kind in _RULES:
        for m in pattern.finditer(text):
            a, b = m.span()
            if any(a < y and x < b for x, y in taken):
                continue
            try:
                atom = _atom(kind, m, base, zone)
            except (ValueError, OverflowError):
                continue  # "in 9999 years": past the calendar, not a time here
            if atom is not None:
                taken.append((a, b))
                atoms.append(atom)
    return sorted(atoms, key=lambda atom: atom.span)
