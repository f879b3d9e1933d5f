"""Lengths up to now said by a negation (三天没有更新) or a perfect before "for" (has ignored … for two
months), "first thing" with a day, an hour in words after a day, and a year said with a month end
(明年月底, the end of July next year)."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from state.time.extract import normalise_times

# Thursday 2031-03-06, 17:30 UTC
THU = datetime(2031, 3, 6, 17, 30, tzinfo=UTC)


def _found(text: str, mix: str, tz: str = "UTC") -> list[tuple[str, str, str, str, str]]:
    zone = ZoneInfo(tz)
    return [
        (
            e.original_form,
            e.kind,
            e.start.astimezone(zone).isoformat(),
            e.end.astimezone(zone).isoformat(),
            e.granularity,
        )
        for e in normalise_times(text, THU, mix, timezone=tz)  # type: ignore[arg-type]
    ]


@pytest.mark.parametrize(
    ("text", "form", "start"),
    [
        ("寄回老家的那箱腊肉已经三天没有物流更新了", "三天", "2031-03-03T17:30:00+00:00"),
        ("快递两周都没回复我", "两周", "2031-02-20T17:30:00+00:00"),
        ("工单一个月未处理", "一个月", "2031-02-06T17:30:00+00:00"),
        ("已经两个月了还没退款", "两个月", "2031-01-06T17:30:00+00:00"),
    ],
)
def test_a_chinese_count_before_a_negation_or_after_yijing_runs_up_to_the_event(
    text: str, form: str, start: str
) -> None:
    assert _found(text, "zh") == [(form, "duration", start, "2031-03-06T17:30:00+00:00", _gran(form))]


def _gran(form: str) -> str:
    return "week" if "周" in form else "month" if "月" in form else "day"


def test_a_count_before_mei_wenti_is_no_length() -> None:
    assert _found("三天没问题", "zh") == []


@pytest.mark.parametrize(
    ("text", "back"),
    [
        ("The HOA has ignored my complaint about the broken sprinklers for two months.", True),
        ("They haven't answered my emails for a week.", True),
        ("I have lived here for two years.", True),
        ("The bank has frozen my card for 30 days.", False),  # a verb that sets a span ahead
        ("We have decided to stay for two weeks.", False),  # a "to" verb between: the stay is ahead
        ("Please hold the parcel for two weeks.", False),
    ],
)
def test_a_perfect_before_for_a_length_looks_back(text: str, back: bool) -> None:
    ((_, kind, start, end, _),) = _found(text, "en")
    assert kind == "duration"
    event = "2031-03-06T17:30:00+00:00"
    assert (end == event) is back
    assert (start == event) is not back


@pytest.mark.parametrize(
    ("text", "form", "start"),
    [
        ("The dermatologist can squeeze you in first thing Monday.", "first thing Monday", "2031-03-10T07:00:00"),
        ("I'll call you tomorrow first thing.", "tomorrow first thing", "2031-03-07T07:00:00"),
        ("We can start first thing on Friday", "first thing on Friday", "2031-03-07T07:00:00"),
        ("I'll send it first thing tomorrow", "first thing tomorrow", "2031-03-07T07:00:00"),
        ("I'll do it first thing in the morning", "first thing in the morning", "2031-03-07T07:00:00"),
    ],
)
def test_first_thing_with_a_day_is_the_start_of_its_morning(text: str, form: str, start: str) -> None:
    ((got_form, kind, got_start, _, gran),) = _found(text, "en", "America/Los_Angeles")
    assert (got_form, kind, got_start[:19], gran) == (form, "point", start, "hour")


def test_first_thing_without_a_day_is_nothing() -> None:
    assert _found("I do that first thing", "en") == []


@pytest.mark.parametrize(
    ("text", "form", "start"),
    [
        ("uh lets do thursday at two", "thursday at two", "2031-03-13T14:00:00+00:00"),
        ("Monday at eleven works", "Monday at eleven", "2031-03-10T11:00:00+00:00"),
        ("tomorrow at nine", "tomorrow at nine", "2031-03-07T09:00:00+00:00"),
    ],
)
def test_an_hour_in_words_after_a_day_is_a_clock(text: str, form: str, start: str) -> None:
    assert _found(text, "en") == [(form, "point", start, start[:17] + "59+00:00", "minute")]


@pytest.mark.parametrize("text", ["meet me at two", "look at one of them", "Can we talk at noon?"])
def test_an_hour_in_words_alone_is_no_clock(text: str) -> None:
    forms = [f[0] for f in _found(text, "en")]
    assert forms == (["at noon"] if "noon" in text else [])


def test_a_day_then_at_one_of_is_no_clock() -> None:
    assert [f[0] for f in _found("Monday at one of our stores", "en")] == ["Monday"]


@pytest.mark.parametrize(
    ("text", "form", "start"),
    [
        ("明年月底交房", "明年月底", "2032-03-31"),
        ("去年月初搬的家", "去年月初", "2030-03-01"),
        ("明年一月底", "明年一月底", "2032-01-31"),
        ("the end of July next year", "the end of July next year", "2032-07-31"),
        ("the start of May next year", "the start of May next year", "2032-05-01"),
        ("the end of July", "the end of July", "2031-07-31"),
    ],
)
def test_a_year_with_a_month_end(text: str, form: str, start: str) -> None:
    mix = "en" if text.isascii() else "zh"
    ((got_form, _, got_start, _, _),) = _found(text, mix)
    assert (got_form, got_start[:10]) == (form, start)
