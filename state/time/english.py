"""English time expressions by rule: atoms (day, period, offset, time of day) merged left to right.

Conventions (documented, replay-stable): `next Tuesday` is the Tuesday of next week, `last
Tuesday` the Tuesday of last week, `this Tuesday` the one of this week, a bare `Tuesday` the next
one after today; `end of the month` is its last day, `the end of July` July's (this year's unless
July is over); `in two hours` / `two days ago` are offsets from the event time (hours and minutes
elapsed in the speaker's zone, across a clock change too); a bare clock hour 1–6 without am/pm means
the afternoon; named days (Black Friday, Christmas Eve) are the latest before today with `last`, else
the next one; "and a half" adds half a unit (in two and a half hours); "after" a count under a
perfect in its clause ("hasn't shipped after six weeks"), and "in" a count under a negated perfect
("hasn't answered in two weeks"), is no point but a length up to the event, left to
`state.time.deadline`. Parts of the day
follow the Chinese parser: morning 07–12, afternoon 13–18, evening/tonight 18–24; a clock said with
tonight / last night is on that evening (tonight at 9 = 21:00); "the Monday / week after next" is two
weeks on; "a week from Monday" is the coming Monday + 7 (a count from a named day is a day, no
length); a day, a limit word and a clock ("tomorrow before 10 am") are one deadline at that clock. The end of
a working day (EOD, COB, close of business, end of day) is the day next to it (COB Monday, EOD
tomorrow, Friday by end of day) or today; as a limit it ends at 23:59:59, a bare-day limit. "next
month's 3rd" and "the 5th next month" are that day of the month named, as "the 3rd of next month" is.
Mid-morning is 10:00 and mid-afternoon 15:00 of their day (tomorrow mid-morning). Quarters are calendar
quarters: "Q3" / "the third quarter" is this year's unless it is over, "this / next quarter" counts from
the event's, and "the end of the quarter" / "the end of Q1" is the quarter's last day.

dateparser's search splits phrases oddly ("two days ago and"); these rules take its place for
the forms they cover, and `state.time.extract` keeps dateparser only as a fallback for other dates.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, tzinfo

from schemas.memory import Granularity
from state.time import calendar as cal
from state.time.calendar import Found
from state.time.english_atoms import Atom, scan_atoms, word_number

__all__ = ["parse_english", "word_number"]


_JOIN = re.compile(r"^(?:\s*,)?\s*(?:at|on|in the|by|around|about)?\s*$", re.IGNORECASE)
# A limit word between a day and a clock ("tomorrow before 10 am", "Friday by 5 pm"): a deadline at that clock.
_LIMIT_JOIN = re.compile(r"^(?:\s*,)?\s*(?:before|by|until|till|no later than|not later than)\s*$", re.IGNORECASE)


# "at 5" / "at two" alone: no clock (a count, a place in a list); only with a day (thursday at two).
_BARE_HOUR = re.compile(
    r"at (?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)$", re.IGNORECASE
)


def _with_clock(day: datetime, clock: Atom) -> tuple[datetime, datetime, Granularity]:
    hour = clock.hour
    if not clock.explicit_half and 1 <= hour <= 6:
        hour += 12  # "at 3" in a working conversation means 15:00
    return cal.minute_interval(cal.day_start(day) + timedelta(hours=hour, minutes=clock.minute))


def _with_part(day: datetime, part: Atom) -> tuple[datetime, datetime, Granularity]:
    start = cal.day_start(day).replace(hour=part.hour)
    return start, cal.day_start(day) + timedelta(hours=part.minute) - cal.ONE_SECOND, "hour"


def _evening_clock(evening: Atom, clock: Atom) -> tuple[datetime, datetime, Granularity] | None:
    """Tonight at 11:30, 10 pm tonight, last night at 9: the clock on that evening (a bare hour is pm,
    a bare 12 midnight; a small-hours clock, "tonight at 2 am", is the night after that day)."""
    if evening.start is None:
        return None
    hour = clock.hour
    if not clock.explicit_half:
        hour += 12 if hour <= 12 else 0
    elif hour < 6:
        hour += 24
    return cal.minute_interval(cal.day_start(evening.start) + timedelta(hours=hour, minutes=clock.minute))


def _combine(first: Atom, second: Atom) -> tuple[datetime, datetime, Granularity] | None:
    pair = {first.kind, second.kind}
    if pair == {"dayend", "day"}:  # COB Monday, EOD tomorrow: the end of that day, a day as a limit
        day = first if first.kind == "day" else second
        return None if day.start is None else cal.day_interval(day.start)
    if pair == {"period", "clock"}:
        evening, clock = (first, second) if first.kind == "period" else (second, first)
        if evening.granularity == "hour":  # tonight / last night, the only periods an hour fine
            return _evening_clock(evening, clock)
        return None
    dated = first if first.kind in ("day", "point") else second if second.kind in ("day", "point") else None
    other = second if dated is first else first
    if dated is None or dated.start is None or dated.granularity not in ("day",):
        return None
    if other.kind == "clock" and pair <= {"day", "point", "clock"}:
        return _with_clock(dated.start, other)
    if other.kind == "part":
        return _with_part(dated.start, other)
    return None


def parse_english(text: str, base: datetime, zone: tzinfo | None = None) -> list[Found]:
    """English time expressions in `text`, from `base` (naive wall clock of the speaker, in `zone`:
    "in 3 hours" is elapsed time there, across a clock change too).

    >>> [(f.form, f.start.isoformat()) for f in parse_english("call me tomorrow at 3pm", datetime(2026, 3, 4, 10))]
    [('tomorrow at 3pm', '2026-03-05T15:00:00')]
    """
    atoms = scan_atoms(text, base, zone)
    out: list[Found] = []
    i = 0
    while i < len(atoms):
        atom = atoms[i]
        between = text[atom.span[1] : atoms[i + 1].span[0]] if i + 1 < len(atoms) else ""
        limited = atoms[i + 1].kind if atoms[i + 1 :] and _LIMIT_JOIN.match(between) else None
        if atom.kind == "day" and limited in ("clock", "dayend"):
            merged = _combine(atom, atoms[i + 1])
            if merged is not None:
                span = (atom.span[0], atoms[i + 1].span[1])
                gran: Granularity = "minute" if limited == "clock" else "day"
                limit = merged[0] if limited == "clock" else merged[1]
                form = text[span[0] : span[1]]
                out.append(Found(form, span, min(base, limit), limit, gran, "rules_en", "deadline", limit))
                i += 2
                continue
        if i + 1 < len(atoms) and _JOIN.match(between):
            merged = _combine(atom, atoms[i + 1])
            if merged is not None:
                span = (atom.span[0], atoms[i + 1].span[1])
                out.append(Found(text[span[0] : span[1]], span, *merged, "rules_en"))
                i += 2
                continue
        if atom.kind == "clock" and atom.span != (0, 0):
            if _BARE_HOUR.match(text[atom.span[0] : atom.span[1]]):
                i += 1  # "at 5" / "at two" alone is too ambiguous (a count, a place in a list)
                continue
            start, end, gran = _with_clock(base, atom)
            out.append(Found(text[atom.span[0] : atom.span[1]], atom.span, start, end, gran, "rules_en"))
        elif atom.kind == "part":
            form = text[atom.span[0] : atom.span[1]]
            if re.match(r"first thing in the morning$", form, re.IGNORECASE):
                day = base if base.hour < atom.hour else base + timedelta(days=1)  # the next morning's start
                out.append(Found(form, atom.span, *_with_part(day, atom), "rules_en"))
            elif re.match(r"(?:this|in the)\b", form, re.IGNORECASE):
                start, end, gran = _with_part(base, atom)
                out.append(Found(text[atom.span[0] : atom.span[1]], atom.span, start, end, gran, "rules_en"))
        elif atom.start is not None and atom.end is not None:
            out.append(
                Found(text[atom.span[0] : atom.span[1]], atom.span, atom.start, atom.end, atom.granularity, "rules_en")
            )
        i += 1
    return out
