"""Tense and aspect decide ambiguous dates.

A date said without the part that would fix it — a month and day without a year (October 15,
10月15日), a bare weekday (Tuesday, 周二), a bare day of the month (the 15th, 15号), a bare month
(in March) — is read by each parser one way (English: the next one; Chinese: this year's, the
weekday of this week or the next). The clause around it then decides: past or perfective words
(了, 过, 上次, 那天, placed, was, arrived) pull a date that came out in the future back one year,
week or month; future words (会, 将, will, expected) push one that came out in the past forward.
With both, the word nearer the expression wins; with neither, the parser's reading stays, except
that a part of a numbered month (1月中旬, 3月底) whose month is over this year is next year's. Cue
words are data (`state/time/resources/time_cues.yaml`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any, Literal

from state.core.datafiles import packaged, read_data
from state.time import calendar as cal
from state.time.calendar import Found

Tense = Literal["past", "future"]
_F = re.IGNORECASE
_CLAUSE_END = re.compile(r"[，。；！？,;!?]|\.(?:\s|$)")
_SENTENCE_END = re.compile(r"[。！？!?]|\.(?:\s|$)")
# A request after the expression opens a sentence of its own in unpunctuated speech ("I got charged twice
# on the 1st can you check"): the request is about now and says nothing of the date's side of the event.
_REQUEST_AFTER = re.compile(r"\b(?:can|could|would|will) (?:you|u)\b|\b(?:please|pls)\b", _F)
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_MON = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
# (pattern over the expression's form, the unit an ambiguous reading moves by)
_AMBIGUOUS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^[0-9零〇一二三四五六七八九十]{1,3}月[0-9零〇一二三四五六七八九十]{1,3}[日号]", _F), "year"),
    (re.compile(rf"^(?:{_MON} {_DAY}\b|(?:the )?{_DAY} (?:of )?{_MON})(?!.*\d{{4}})", _F), "year"),
    (re.compile(r"^\d{1,2}/\d{1,2}$"), "year"),
    (re.compile(rf"^in {_MON}$", _F), "year"),
    (re.compile(rf"^(?:early|mid|late|the middle of)[- ]{_MON}$", _F), "year"),
    (re.compile(rf"^(?:the )?(?:end|beginning|start) of {_MON}$", _F), "year"),
    (re.compile(r"^[0-9零〇一二三四五六七八九十]{1,3}月(?:份)?(?:[底末初中](?!旬)|[上中下]旬)"), "year"),
    (re.compile(r"^(?:周|星期|礼拜)[一二三四五六日天1-7]", _F), "week"),
    (re.compile(r"^(?:on )?(?:mon|tues?|wed|thu|fri|sat|sun)[a-z]*\b(?!.*\b(?:next|last|this)\b)", _F), "week"),
    (re.compile(r"^[0-9一二三四五六七八九十]{1,3}[号日]$|^the \d{1,2}(?:st|nd|rd|th)$", _F), "month"),
)


# A part of a numbered month without a year (1月中旬, 3月底): with no tense in its clause, a month already
# past in the year is next year's, as "mid-January" said in December is (the English parser's reading).
_MONTH_PART = re.compile(r"^[0-9零〇一二三四五六七八九十]{1,3}月(?:份)?(?:[底末初中]|[上中下]旬)")


@dataclass(frozen=True, slots=True)
class TenseCues:
    past: dict[str, re.Pattern[str]]
    future: dict[str, re.Pattern[str]]
    # A past cue whose clause text before it ends with one of these is no past ("needs it renewed").
    past_void: dict[str, re.Pattern[str]] = field(default_factory=dict)


def parse_tense_cues(raw: Any) -> TenseCues:
    section = raw["tense"]
    return TenseCues(
        past={lang: re.compile(str(p), _F) for lang, p in section["past"].items()},
        future={lang: re.compile(str(p), _F) for lang, p in section["future"].items()},
        past_void={lang: re.compile(str(p), _F) for lang, p in (section.get("past_void") or {}).items()},
    )


@lru_cache(maxsize=1)
def default_cues() -> TenseCues:
    return parse_tense_cues(read_data(packaged("time_cues.yaml")))


def _clause(text: str, span: tuple[int, int], ends: re.Pattern[str] = _CLAUSE_END) -> tuple[int, int]:
    starts = [m.end() for m in ends.finditer(text, 0, span[0])]
    end = ends.search(text, span[1])
    hi = end.start() if end else len(text)
    request = _REQUEST_AFTER.search(text, span[1], hi)
    return (starts[-1] if starts else 0), (request.start() if request else hi)


def _nearest(
    pattern: re.Pattern[str], text: str, lo: int, hi: int, span: tuple[int, int], void: re.Pattern[str] | None = None
) -> int | None:
    """Distance from the expression to the nearest cue of `pattern` in text[lo:hi] outside it (a cue
    whose clause text before it `void` matches does not count)."""
    best: int | None = None
    for m in pattern.finditer(text, lo, hi):
        if m.start() < span[1] and span[0] < m.end():
            continue
        if void is not None and void.search(text, lo, m.start()):
            continue
        gap = span[0] - m.end() if m.end() <= span[0] else m.start() - span[1]
        best = gap if best is None else min(best, gap)
    return best


def clause_tense(text: str, span: tuple[int, int], cues: TenseCues | None = None) -> Tense | None:
    """The tense of the clause holding `span`: the nearer of a past and a future cue; an aside
    between commas without either ("my order, the one from May 2, never came") takes its
    sentence's; else None.

    >>> text = "The order I placed on October 15 never arrived"
    >>> clause_tense(text, (22, 32)), clause_tense("我们周二会发货", (2, 4)), clause_tense("周二见", (0, 2))
    ('past', 'future', None)
    """
    cues = cues or default_cues()
    lo, hi = _clause(text, span)
    aside = lo > 0 and text[lo - 1] in ",，" and hi < len(text) and text[hi] in ",，"
    for ends in (_CLAUSE_END, _SENTENCE_END) if aside else (_CLAUSE_END,):
        lo, hi = _clause(text, span, ends)
        gaps: dict[Tense, int] = {}
        for tense, table in (("past", cues.past), ("future", cues.future)):
            voids = cues.past_void if tense == "past" else {}
            found = [
                g for lang, p in table.items() if (g := _nearest(p, text, lo, hi, span, voids.get(lang))) is not None
            ]
            if found:
                gaps[tense] = min(found)  # type: ignore[index]
        if gaps:
            return min(gaps, key=lambda t: gaps[t])
    return None


def ambiguous_unit(form: str) -> str | None:
    """The unit an ambiguous date's reading moves by (year, week, month), None for a fixed one.

    >>> ambiguous_unit("周一"), ambiguous_unit("the 5th"), ambiguous_unit("下周一")
    ('week', 'month', None)
    """
    return next((u for pattern, u in _AMBIGUOUS if pattern.search(form.strip())), None)


def move(value: datetime, unit: str, steps: int) -> datetime:
    """`value` moved by `steps` years, weeks or months."""
    return _move(value, unit, steps)


def _move(value: datetime, unit: str, steps: int) -> datetime:
    if unit == "week":
        return value + timedelta(weeks=steps)
    if unit == "month" and value.day > 28:  # a bare 31号 / the 30th keeps its day: the nearest month that has it
        day = cal.month_with_day(value, value.day, steps)
        return day.replace(hour=value.hour, minute=value.minute, second=value.second)
    return cal.add_months(value, steps * (12 if unit == "year" else 1))


def _past_month_part(found: Found, base: datetime) -> bool:
    """A month part read in this year whose month is already over (1月中旬 said in December)."""
    start = found.start
    return bool(_MONTH_PART.search(found.form.strip())) and start.year == base.year and start.month < base.month


def resolve_tense(text: str, base: datetime, found: list[Found], cues: TenseCues | None = None) -> list[Found]:
    """Each ambiguous date moved to the side of `base` its clause's tense says (others unchanged).

    >>> from state.time.calendar import day_interval
    >>> day = Found("October 15", (22, 32), *day_interval(datetime(2027, 10, 15)), "rules_en")
    >>> text = "The order I placed on October 15 never arrived"
    >>> resolve_tense(text, datetime(2026, 11, 30, 9), [day])[0].start.isoformat()
    '2026-10-15T00:00:00'
    """
    out: list[Found] = []
    for f in found:
        unit = ambiguous_unit(f.form)
        tense = clause_tense(text, f.span, cues) if unit is not None and f.kind == "point" else None
        today = cal.day_start(base)
        if unit is not None and tense == "past" and cal.day_start(f.start) > today:
            f = replace(f, start=_move(f.start, unit, -1), end=_move(f.end, unit, -1))
        elif unit is not None and tense == "future" and f.end < today:
            f = replace(f, start=_move(f.start, unit, 1), end=_move(f.end, unit, 1))
        elif tense is None and _past_month_part(f, base):
            f = replace(f, start=_move(f.start, "year", 1), end=_move(f.end, "year", 1))
        out.append(f)
    return out
