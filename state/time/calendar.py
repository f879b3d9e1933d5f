"""Calendar arithmetic shared by the Chinese and English time parsers (naive local datetimes).

A found expression is an interval `[start, end]` of wall-clock instants in the speaker's zone
plus its granularity; `state.time.extract` converts it to UTC. Weeks start on Monday (ISO), as in
Chinese usage (下周二 = Tuesday of next week) and in the English rules (next Tuesday = the
Tuesday of next week).
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo

import numpy as np

from schemas.memory import Granularity, TimeKind

ONE_SECOND = timedelta(seconds=1)


@dataclass(frozen=True, slots=True)
class Found:
    """One time expression found in a text: its span, wall-clock interval and granularity."""

    form: str
    span: tuple[int, int]
    start: datetime
    end: datetime
    granularity: Granularity
    parser: str
    kind: TimeKind = "point"
    deadline: datetime | None = None


def day_start(value: datetime) -> datetime:
    return value.replace(hour=0, minute=0, second=0, microsecond=0)


def day_interval(value: datetime) -> tuple[datetime, datetime, Granularity]:
    start = day_start(value)
    return start, start + timedelta(days=1) - ONE_SECOND, "day"


def minute_interval(value: datetime) -> tuple[datetime, datetime, Granularity]:
    """The minute holding `value`; a wall-clock minute said twice (a clock change back) keeps its `fold`."""
    start = value.replace(second=0, microsecond=0)
    return start, (start + timedelta(minutes=1) - ONE_SECOND).replace(fold=start.fold), "minute"


def week_start(value: datetime, weeks: int = 0) -> datetime:
    """Monday 00:00 of the week holding `value`, shifted by `weeks`.

    >>> week_start(datetime(2026, 3, 4, 10)).isoformat()
    '2026-03-02T00:00:00'
    """
    return day_start(value) - timedelta(days=value.weekday()) + timedelta(weeks=weeks)


def weekday_in_week(value: datetime, weekday: int, weeks: int = 0) -> datetime:
    """Day `weekday` (0 = Monday) of the week holding `value`, shifted by `weeks`."""
    return week_start(value, weeks) + timedelta(days=weekday)


def next_weekday(value: datetime, weekday: int, *, include_today: bool = False) -> datetime:
    """The next day named `weekday` after `value` (today counts only with include_today)."""
    ahead = (weekday - value.weekday()) % 7
    if ahead == 0 and not include_today:
        ahead = 7
    return day_start(value) + timedelta(days=ahead)


def add_months(value: datetime, months: int) -> datetime:
    """Shift by whole months, clamping the day (Jan 31 + 1 month = Feb 28/29).

    >>> add_months(datetime(2026, 1, 31), 1).isoformat()
    '2026-02-28T00:00:00'
    """
    index = value.year * 12 + value.month - 1 + months
    year, month = divmod(index, 12)
    day = min(value.day, calendar.monthrange(year, month + 1)[1])
    return value.replace(year=year, month=month + 1, day=day)


def month_days(value: datetime) -> int:
    """How many days the month holding `value` has."""
    return calendar.monthrange(value.year, value.month)[1]


def month_with_day(value: datetime, day: int, steps: int) -> datetime:
    """Day `day` of the month `steps` months from `value`'s, counting only months that have that
    day (31号 one month back from 31 December is 31 October, not 30 November).

    >>> month_with_day(datetime(2028, 11, 30), 31, 1).date(), month_with_day(datetime(2028, 12, 31), 31, -1).date()
    (datetime.date(2028, 12, 31), datetime.date(2028, 10, 31))
    """
    step = 1 if steps > 0 else -1
    first = day_start(value).replace(day=1)
    left = abs(steps)
    while left:
        first = add_months(first, step)
        if month_days(first) >= day:
            left -= 1
    return first.replace(day=day)


def month_interval(value: datetime, months: int = 0) -> tuple[datetime, datetime, Granularity]:
    first = add_months(day_start(value).replace(day=1), months)
    return first, add_months(first, 1) - ONE_SECOND, "month"


def quarter_interval(value: datetime, quarters: int = 0) -> tuple[datetime, datetime, Granularity]:
    """The calendar quarter (Jan–Mar, Apr–Jun, Jul–Sep, Oct–Dec) holding `value`, shifted by `quarters`.

    >>> [t.date().isoformat() for t in quarter_interval(datetime(2035, 8, 15), 1)[:2]]
    ['2035-10-01', '2035-12-31']
    """
    first = add_months(day_start(value).replace(day=1), 3 * quarters - (value.month - 1) % 3)
    return first, add_months(first, 3) - ONE_SECOND, "month"


def month_end_day(value: datetime, months: int = 0) -> tuple[datetime, datetime, Granularity]:
    """The last day of the month holding `value` (shifted by `months`): 月底, end of the month."""
    _, last, _ = month_interval(value, months)
    return day_interval(last)


def year_interval(value: datetime, years: int = 0) -> tuple[datetime, datetime, Granularity]:
    first = day_start(value).replace(month=1, day=1, year=value.year + years)
    return first, first.replace(year=first.year + 1) - ONE_SECOND, "year"


def weekend_interval(value: datetime, weeks: int = 0) -> tuple[datetime, datetime, Granularity]:
    """Saturday 00:00 to Sunday 23:59:59 of the week holding `value`, shifted by `weeks`."""
    saturday = weekday_in_week(value, 5, weeks)
    return saturday, saturday + timedelta(days=2) - ONE_SECOND, "day"


def shift(value: datetime, unit: str, amount: float) -> datetime:
    """`value` moved by `amount` units (minute, hour, day, week, month, year; amount may be negative)."""
    if unit == "minute":
        return value + timedelta(minutes=amount)
    if unit == "hour":
        return value + timedelta(hours=amount)
    if unit == "day":
        return value + timedelta(days=amount)
    if unit == "week":
        return value + timedelta(weeks=amount)
    if unit == "month":
        if amount != int(amount):
            return value + timedelta(days=amount * 30)  # 半个月 = 15 days
        return add_months(value, int(amount))
    return add_months(value, round(amount * 12))


def elapsed(value: datetime, unit: str, amount: float, zone: tzinfo | None = None) -> datetime:
    """`value` (a naive wall clock in `zone`) moved by `amount` minutes or hours of elapsed time.

    Hours and minutes are counted on the UTC line and read back on the wall clock, so 72 hours across
    a clock change land an hour off the wall-clock sum; without a zone (or for days and longer, which
    keep their wall-clock time) it is `shift`. The result keeps `fold` for a wall-clock hour said twice.

    >>> from zoneinfo import ZoneInfo
    >>> elapsed(datetime(2028, 9, 22, 19, 30), "hour", 72, ZoneInfo("Pacific/Auckland")).isoformat()
    '2028-09-25T20:30:00'
    """
    if zone is None or unit not in ("minute", "hour"):
        return shift(value, unit, amount)
    step = timedelta(minutes=amount) if unit == "minute" else timedelta(hours=amount)
    moved = (value.replace(tzinfo=zone).astimezone(UTC) + step).astimezone(zone)
    return moved.replace(tzinfo=None)


def delta_interval(
    base: datetime, unit: str, amount: float, zone: tzinfo | None = None
) -> tuple[datetime, datetime, Granularity]:
    """The interval a relative offset names: a minute for minutes/hours, a day for days to months, a year for years.

    Minutes and hours are elapsed time in `zone` (`elapsed`): "in 3 hours" across a clock change is
    three hours on the UTC line, not on the wall clock.
    """
    point = elapsed(base, unit, amount, zone)
    if unit in ("minute", "hour"):
        return minute_interval(point)
    if unit == "year":
        return year_interval(point)
    return day_interval(point)


def add_business_days(value: datetime, days: int) -> datetime:
    """The day `days` working days (Monday–Friday; public holidays are not known) after `value`'s day.

    A weekend day counts from the Friday before it, so three working days from a Saturday end on
    Wednesday. numpy's business-day calendar does the counting.

    >>> add_business_days(datetime(2026, 11, 30, 9), 3).isoformat()  # Monday → Thursday
    '2026-12-03T00:00:00'
    >>> add_business_days(datetime(2026, 12, 4, 9), 1).isoformat()  # Friday → Monday
    '2026-12-07T00:00:00'
    >>> add_business_days(datetime(2026, 12, 5, 9), 3).isoformat()  # Saturday → Wednesday
    '2026-12-09T00:00:00'
    """
    day = np.busday_offset(np.datetime64(value.date(), "D"), days, roll="backward", weekmask="1111100")
    return datetime.fromisoformat(str(day))


def end_of_day(value: datetime) -> datetime:
    """The last second of `value`'s day (the house convention for an interval's end)."""
    return day_start(value) + timedelta(days=1) - ONE_SECOND


# Named days of the shopping and holiday calendar, as (month, day) or (month, weekday, nth, days after).
_FIXED_DAYS = {
    "christmas eve": (12, 24),
    "christmas day": (12, 25),
    "christmas": (12, 25),
    "boxing day": (12, 26),
    "new year's eve": (12, 31),
    "new year's day": (1, 1),
    "valentine's day": (2, 14),
    "halloween": (10, 31),
}
# Days after the fourth Thursday of November.
_THANKSGIVING_DAYS = {"thanksgiving": 0, "black friday": 1, "cyber monday": 4}


def named_day(name: str, year: int) -> datetime | None:
    """The date of a named day in `year` (Black Friday: the day after the fourth Thursday of
    November); None for a name not known.

    >>> named_day("black friday", 2026).date(), named_day("christmas", 2027).date()
    (datetime.date(2026, 11, 27), datetime.date(2027, 12, 25))
    """
    key = name.lower().replace("’", "'")
    if key in _FIXED_DAYS:
        month, day = _FIXED_DAYS[key]
        return datetime(year, month, day)  # noqa: DTZ001 - naive local wall clock by design
    if key in _THANKSGIVING_DAYS:
        first = datetime(year, 11, 1)  # noqa: DTZ001
        thursday = first + timedelta(days=(3 - first.weekday()) % 7 + 21)
        return thursday + timedelta(days=_THANKSGIVING_DAYS[key])
    return None


def nearest_named_day(name: str, base: datetime, mod: str) -> datetime | None:
    """A named day relative to `base`: `last` the latest one before today, `next` the first after
    today, otherwise this year's unless it is over, then next year's.

    >>> nearest_named_day("black friday", datetime(2027, 3, 15), "last").date()
    datetime.date(2026, 11, 27)
    """
    today = day_start(base)
    this = named_day(name, today.year)
    if this is None:
        return None
    if mod == "last":
        return this if this < today else named_day(name, today.year - 1)
    if mod == "next":
        return this if this > today else named_day(name, today.year + 1)
    return this if this >= today else named_day(name, today.year + 1)
