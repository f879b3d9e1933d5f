"""Temporal validity (docs/design.md#validity): permanent rules, periodic rules, transient facts.

`assign_validity(text, times, ts, lexicon, calendar)` gives a memory its `Validity` at write
time from lexicons (`state/validity/resources/validity_lexicon.yaml`) and the normalised times already
on the unit: `validity_type`, `effective_from/to` (a time expression with a start or end cue
around it, a range, or a transient fact's time-to-live), `cycle_pattern` and `last_verified`
(the event time: the moment the fact was stated). `cycle_active` and `valid_at` evaluate them
at recall time: every_monday … every_sunday, daily, weekdays, weekends, monthly_day_N and
during_promotion[:ID] against the promotion calendar (`promotion_calendar.yaml`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from schemas.errors import CyclePatternError
from schemas.memory import MemoryUnit, TimeExpression, Validity, ValidityType
from state.core.datafiles import data_loader, packaged
from state.core.hotfile import HotFile
from state.task.cues import CueSet
from state.units.promise import is_agent_promise

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ZH_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_CYCLE = re.compile(
    r"^(?:every_(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)|(?P<simple>daily|weekdays|weekends)"
    r"|monthly_day_(?P<day>[1-9]|[12]\d|3[01])|during_promotion(?::(?P<promo>[\w.-]+))?)$"
)


@dataclass(frozen=True, slots=True)
class Promotion:
    id: str
    name: str
    aliases: tuple[str, ...]
    yearly: tuple[tuple[int, int], tuple[int, int]] | None
    start: date | None
    end: date | None

    def active_on(self, day: date) -> bool:
        if self.yearly is not None:
            (sm, sd), (em, ed) = self.yearly
            key = (day.month, day.day)
            if (sm, sd) <= (em, ed):
                return (sm, sd) <= key <= (em, ed)
            return key >= (sm, sd) or key <= (em, ed)  # wraps over the new year
        return self.start is not None and self.end is not None and self.start <= day <= self.end


@dataclass(frozen=True)
class PromotionCalendar:
    timezone: str
    promotions: tuple[Promotion, ...]

    def active(self, at: datetime, promo_id: str | None = None) -> bool:
        day = at.astimezone(ZoneInfo(self.timezone)).date()
        return any(p.active_on(day) for p in self.promotions if promo_id is None or p.id == promo_id)

    def named_in(self, text: str) -> Promotion | None:
        low = text.lower()
        for p in self.promotions:
            if any(a.lower() in low for a in p.aliases):
                return p
        return None


def _md(value: Any) -> tuple[int, int]:
    month, day = (int(x) for x in str(value).split("-"))
    date(2024, month, day)  # validates (2024 is a leap year, so 02-29 is allowed)
    return month, day


def parse_calendar(raw: Any) -> PromotionCalendar:
    """Validate a promotion calendar document.

    >>> cal = parse_calendar({"promotions": [{"id": "x", "yearly": {"start": "11-01", "end": "11-11"}}]})
    >>> from datetime import UTC, datetime
    >>> cal.active(datetime(2026, 11, 5, tzinfo=UTC)), cal.active(datetime(2026, 12, 5, tzinfo=UTC))
    (True, False)
    """
    tz = str(raw.get("timezone", "UTC"))
    ZoneInfo(tz)
    promos = []
    for p in raw.get("promotions") or ():
        yearly = (_md(p["yearly"]["start"]), _md(p["yearly"]["end"])) if p.get("yearly") else None
        start = date.fromisoformat(str(p["start"])) if p.get("start") else None
        end = date.fromisoformat(str(p["end"])) if p.get("end") else None
        if yearly is None and (start is None or end is None):
            raise ValueError(f"promotion {p.get('id')!r} needs `yearly` or both `start` and `end`")
        aliases = tuple(str(a) for a in p.get("aliases") or ())
        promos.append(Promotion(str(p["id"]), str(p.get("name", p["id"])), aliases, yearly, start, end))
    return PromotionCalendar(tz, tuple(promos))


@dataclass(frozen=True, slots=True)
class PeriodicRule:
    regex: re.Pattern[str]
    cycle: str


@dataclass(frozen=True)
class ValidityLexicon:
    default_type: ValidityType
    periodic: tuple[PeriodicRule, ...]
    transient: tuple[tuple[float, CueSet], ...]
    permanent: CueSet
    from_before: CueSet
    from_after: CueSet
    to_before: CueSet
    to_after: CueSet
    done_reports: CueSet


def parse_lexicon(raw: Any) -> ValidityLexicon:
    default = str(raw.get("default_type", "permanent"))
    if default not in {"permanent", "periodic", "transient"}:
        raise ValueError(f"validity lexicon: unknown default_type {default!r}")
    periodic = tuple(
        PeriodicRule(re.compile(str(r["pattern"]), re.IGNORECASE), str(r["cycle"])) for r in raw.get("periodic") or ()
    )
    transient = tuple((float(t["ttl_hours"]), CueSet.of(t.get("cues"))) for t in raw.get("transient") or ())
    fc, tc = raw.get("from_cues") or {}, raw.get("to_cues") or {}
    return ValidityLexicon(
        default_type=default,  # type: ignore[arg-type]
        periodic=periodic,
        transient=transient,
        permanent=CueSet.of((raw.get("permanent") or {}).get("cues")),
        from_before=CueSet.of(fc.get("before")),
        from_after=CueSet.of(fc.get("after")),
        to_before=CueSet.of(tc.get("before")),
        to_after=CueSet.of(tc.get("after")),
        done_reports=CueSet.of((raw.get("done_reports") or {}).get("cues")),
    )


def _cycle_of(text: str, lex: ValidityLexicon, calendar: PromotionCalendar) -> str | None:
    promo = calendar.named_in(text)
    if promo is not None:
        return f"during_promotion:{promo.id}"
    for rule in lex.periodic:
        m = rule.regex.search(text)
        if m is None:
            continue
        group = m.group(1) if m.groups() else None
        if "{weekday}" in rule.cycle and group:
            wd = _ZH_WEEKDAY.get(group)
            name = WEEKDAYS[wd] if wd is not None else group.lower().rstrip("s")
            return rule.cycle.format(weekday=name)
        if "{day}" in rule.cycle and group:
            return rule.cycle.format(day=int(group))
        return rule.cycle
    return None


_RANGE = re.compile(r"\S(?:到|至|~|～|—|–|-|\bto\b|\buntil\b|\bthrough\b)\s*\S", re.IGNORECASE)


def _ends_with(cues: CueSet, text: str) -> bool:
    hit = cues.find(text)
    return hit is not None and text.lower().rstrip().endswith(hit)


def _starts_with(cues: CueSet, text: str) -> bool:
    hit = cues.find(text)
    return hit is not None and text.lower().lstrip().startswith(hit)


def _window(
    text: str, times: tuple[TimeExpression, ...], lex: ValidityLexicon
) -> tuple[datetime | None, datetime | None]:
    """Effective window from the times and the cue words in and around them.

    A range ("从11月1日到11月11日") gives both ends; an end cue ("11月30日前", "until Friday")
    gives `effective_to`; a start cue ("12月1日起", "from Monday") gives `effective_from`.
    """
    start: datetime | None = None
    end: datetime | None = None
    for t in times:
        if t.kind == "duration":
            continue  # a length (玩2-3小时, takes 3 days) bounds no validity
        form = t.original_form
        pos = text.find(form)
        s, e = (pos, pos + len(form)) if pos >= 0 else t.span
        before, after = text[max(0, s - 12) : s], text[e : e + 12]
        if t.granularity == "range" or _RANGE.search(form):
            start, end = start or t.start, end or t.end
        elif _ends_with(lex.to_after, form) or _starts_with(lex.to_after, after) or _ends_with(lex.to_before, before):
            end = t.end
        elif (
            _starts_with(lex.from_before, form)
            or _ends_with(lex.from_before, before)
            or _starts_with(lex.from_after, after)
            or _ends_with(lex.from_after, form)
        ):
            start = t.start
    return start, end


def assign_validity(
    text: str,
    times: tuple[TimeExpression, ...],
    ts: datetime,
    lex: ValidityLexicon,
    calendar: PromotionCalendar,
) -> Validity:
    """The memory's validity at write time.

    >>> from datetime import UTC, datetime
    >>> from state.core.datafiles import packaged, read_data
    >>> lex = parse_lexicon(read_data(packaged("validity_lexicon.yaml")))
    >>> cal = parse_calendar(read_data(packaged("promotion_calendar.yaml")))
    >>> ts = datetime(2026, 11, 2, 9, tzinfo=UTC)
    >>> assign_validity("每周一上午十点发新品", (), ts, lex, cal).cycle_pattern
    'every_monday'
    >>> v = assign_validity("东莞仓目前停电，发货会延迟", (), ts, lex, cal)
    >>> v.validity_type, v.effective_to.isoformat()
    ('transient', '2026-11-03T09:00:00+00:00')
    >>> assign_validity("双十一期间满300减50", (), ts, lex, cal).cycle_pattern
    'during_promotion:double11'
    """
    start, end = _window(text, times, lex)
    cycle = _cycle_of(text, lex, calendar)
    if cycle is not None:
        return Validity(
            validity_type="periodic", effective_from=start, effective_to=end, cycle_pattern=cycle, last_verified=ts
        )
    ttls = [ttl for ttl, cues in lex.transient if cues.find(text)]
    if ttls:
        # The most volatile cue decides how long the fact stays fresh (stock 6 h beats 'now' 24 h).
        until = end if end is not None else (start or ts) + timedelta(hours=min(ttls))
        return Validity(validity_type="transient", effective_from=start or ts, effective_to=until, last_verified=ts)
    kind: ValidityType = "permanent" if lex.permanent.find(text) else lex.default_type
    return Validity(validity_type=kind, effective_from=start or ts, effective_to=end, last_verified=ts)


def parse_cycle(pattern: str) -> re.Match[str]:
    """Check a cycle pattern is evaluable; raises `CyclePatternError` otherwise.

    >>> parse_cycle("every_friday").group("wd")
    'friday'
    """
    m = _CYCLE.match(pattern)
    if m is None:
        raise CyclePatternError(f"cannot evaluate cycle_pattern {pattern!r}")
    return m


def cycle_active(pattern: str, at: datetime, timezone: str, calendar: PromotionCalendar) -> bool:
    """Whether a periodic rule applies at `at` (weekdays are read in `timezone`).

    >>> from datetime import UTC, datetime
    >>> cal = PromotionCalendar("UTC", ())
    >>> cycle_active("every_monday", datetime(2026, 11, 30, 10, tzinfo=UTC), "Asia/Shanghai", cal)
    True
    """
    m = parse_cycle(pattern)
    local = at.astimezone(ZoneInfo(timezone))
    if m.group("wd"):
        return local.weekday() == WEEKDAYS.index(m.group("wd"))
    simple = m.group("simple")
    if simple == "daily":
        return True
    if simple == "weekdays":
        return local.weekday() < 5
    if simple == "weekends":
        return local.weekday() >= 5
    if m.group("day"):
        return local.day == int(m.group("day"))
    return calendar.active(at, m.group("promo"))


def valid_at(validity: Validity, at: datetime, timezone: str, calendar: PromotionCalendar) -> bool:
    """Whether a memory may be used at `at`: inside its window and, if periodic, in its cycle.

    An unevaluable cycle pattern counts as not applicable (never a crash at recall time).
    """
    if validity.effective_from is not None and at < validity.effective_from:
        return False
    if validity.effective_to is not None and at > validity.effective_to:
        return False
    if validity.validity_type == "periodic" and validity.cycle_pattern:
        try:
            return cycle_active(validity.cycle_pattern, at, timezone, calendar)
        except CyclePatternError:
            return False
    return True


_ASKING = frozenset({"question", "complaint", "action_request", "clarification"})


def _volatile_fact(text: str, lex: ValidityLexicon) -> bool:
    """A transient cue other than the words for "now" (the group that holds 现在)."""
    return any(cues.find(text) for _, cues in lex.transient if not cues.find("现在"))


class ValidityData:
    """The validity lexicon and promotion calendar, hot-reloaded (shipped files by default)."""

    def __init__(
        self, lexicon: Path | None = None, calendar: Path | None = None, *, reload_interval_s: float = 5.0
    ) -> None:
        self.lexicon: HotFile[ValidityLexicon] = HotFile(
            lexicon or packaged("validity_lexicon.yaml"), data_loader(parse_lexicon), check_every_s=reload_interval_s
        )
        self.calendar: HotFile[PromotionCalendar] = HotFile(
            calendar or packaged("promotion_calendar.yaml"),
            data_loader(parse_calendar),
            check_every_s=reload_interval_s,
        )

    def tag(self, unit: MemoryUnit) -> MemoryUnit:
        """The unit with its validity assigned from its own text and times.

        An agent's promise keeps its deadline as a time, not as an end of validity: "明天中午前重新送到"
        does not stop being true at noon, it becomes overdue (recall reads the deadline from `times`).
        A question, complaint or request whose only transient cue is a word for "now" is not a
        volatile fact: "现在能到账了吗" does not expire with "现在" the way "东莞仓目前停电，发货会延迟吗"
        does (停电 is a fact about the warehouse, whoever asks). Nor is a report of something done
        ("the refund was processed today", "今天已经给您退款了"): the event stays true after the day.
        """
        lex = self.lexicon.get()
        validity = assign_validity(unit.text, unit.times, unit.ts, lex, self.calendar.get())
        if validity.effective_to is None or validity.validity_type == "periodic":
            return unit.model_copy(update={"validity": validity})
        now_only = validity.validity_type == "transient" and not _volatile_fact(unit.text, lex)
        asked = now_only and unit.unit_type in _ASKING
        told = now_only and lex.done_reports.find(unit.text) is not None
        if asked or told or is_agent_promise(unit.model_dump()):
            validity = validity.model_copy(update={"effective_to": None, "validity_type": "permanent"})
        return unit.model_copy(update={"validity": validity})
