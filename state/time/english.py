"""English time expressions by rule: atoms (day, period, offset, time of day) merged left to right.

Conventions (documented, replay-stable): `next Tuesday` is the Tuesday of next week, `last
Tuesday` the Tuesday of last week, `this Tuesday` the one of this week, a bare `Tuesday` the next
one after today; `end of the month` is its last day; `in two hours` / `two days ago` are offsets
from the event time; a bare clock hour 1–6 without am/pm means the afternoon; named days (Black
Friday, Christmas Eve) are the latest before today with `last`, else the next one. Parts of the day
follow the Chinese parser: morning 07–12, afternoon 13–18, evening/tonight 18–24.

dateparser's search splits phrases oddly ("two days ago and"); these rules take its place for
the forms they cover, and `state.time.extract` keeps dateparser only as a fallback for other dates.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from schemas.memory import Granularity
from state.time import calendar as cal
from state.time.calendar import Found
from state.time.english_atoms import Atom, scan_atoms, word_number

__all__ = ["parse_english", "word_number"]


_JOIN = re.compile(r"^(?:\s*,)?\s*(?:at|on|in the|by|around|about)?\s*$", re.IGNORECASE)


def _with_clock(day: datetime, clock: Atom) -> tuple[datetime, datetime, Granularity]:
    hour = clock.hour
    if not clock.explicit_half and 1 <= hour <= 6:
        hour += 12  # "at 3" in a working conversation means 15:00
    return cal.minute_interval(cal.day_start(day) + timedelta(hours=hour, minutes=clock.minute))


def _with_part(day: datetime, part: Atom) -> tuple[datetime, datetime, Granularity]:
    start = cal.day_start(day).replace(hour=part.hour)
    return start, cal.day_start(day) + timedelta(hours=part.minute) - cal.ONE_SECOND, "hour"


def _combine(first: Atom, second: Atom) -> tuple[datetime, datetime, Granularity] | None:
    pair = {first.kind, second.kind}
    dated = first if first.kind in ("day", "point") else second if second.kind in ("day", "point") else None
    other = second if dated is first else first
    if dated is None or dated.start is None or dated.granularity not in ("day",):
        return None
    if other.kind == "clock" and pair <= {"day", "point", "clock"}:
        return _with_clock(dated.start, other)
    if other.kind == "part":
        return _with_part(dated.start, other)
    return None


def parse_english(text: str, base: datetime) -> list[Found]:
    """English time expressions in `text`, from `base` (naive wall clock of the speaker).

    >>> [(f.form, f.start.isoformat()) for f in parse_english("call me tomorrow at 3pm", datetime(2026, 3, 4, 10))]
    [('tomorrow at 3pm', '2026-03-05T15:00:00')]
    """
    atoms = scan_atoms(text, base)
    out: list[Found] = []
    i = 0
    while i < len(atoms):
        atom = atoms[i]
        if i + 1 < len(atoms) and _JOIN.match(text[atom.span[1] : atoms[i + 1].span[0]]):
            merged = _combine(atom, atoms[i + 1])
            if merged is not None:
                span = (atom.span[0], atoms[i + 1].span[1])
                out.append(Found(text[span[0] : span[1]], span, *merged, "rules_en"))
                i += 2
                continue
        if atom.kind == "clock" and atom.span != (0, 0):
            if re.match(r"at \d{1,2}$", text[atom.span[0] : atom.span[1]], re.IGNORECASE):
                i += 1  # "at 5" alone is too ambiguous (a count, a place in a list)
                continue
            start, end, gran = _with_clock(base, atom)
            out.append(Found(text[atom.span[0] : atom.span[1]], atom.span, start, end, gran, "rules_en"))
        elif atom.kind == "part":
            if re.match(r"(?:this|in the)\b", text[atom.span[0] : atom.span[1]], re.IGNORECASE):
                start, end, gran = _with_part(base, atom)
                out.append(Found(text[atom.span[0] : atom.span[1]], atom.span, start, end, gran, "rules_en"))
        elif atom.start is not None and atom.end is not None:
            out.append(
                Found(text[atom.span[0] : atom.span[1]], atom.span, atom.start, atom.end, atom.granularity, "rules_en")
            )
        i += 1
    return out
