"""Tense cues of a done clause (是…的 after a place, negations without an apostrophe, a regular past verb
with its object, a bill paid), a participle after need / want / get, month parts that roll to next year,
and lengths said with "and a half", a hyphened number, or "after" / "in" under a perfect."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from state.time.extract import normalise_times


def _local(text: str, base: datetime, tz: str, mix: str = "en") -> list[tuple[str, str, str]]:
    zone = ZoneInfo(tz)
    return [
        (e.original_form, e.start.astimezone(zone).isoformat(), e.kind)
        for e in normalise_times(text, base, mix, timezone=tz)  # type: ignore[arg-type]
    ]


# Wednesday 2029-03-14, 10:00 UTC
WED = datetime(2029, 3, 14, 10, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("我周六去你们诊所拔的智齿，现在还疼", "2029-03-10"),  # 去 + place + verb + 的: how a done thing was done
        ("周日在医院拍的片子找不到了", "2029-03-11"),
        ("周六来店里修的车又坏了", "2029-03-10"),
        ("周日来店里买的客户都会有赠品", "2029-03-18"),  # 会 after it: ahead
        ("3月17号您记得过来拿一下新配的眼镜", "2029-03-17"),  # no place before the verb: no 是…的
    ],
)
def test_a_place_then_a_verb_and_de_is_a_done_clause(text: str, day: str) -> None:
    assert _local(text, WED, "UTC", "zh")[0][1][:10] == day


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("my bin wasnt collected on monday", "2029-03-12"),
        ("the driver didnt show up on monday", "2029-03-12"),
        ("the parcel hasnt moved since monday", "2029-03-12"),
        ("they werent open on monday", "2029-03-12"),
        ("The courier wasn’t there on Monday.", "2029-03-12"),
    ],
)
def test_a_negated_past_counts_with_or_without_its_apostrophe(text: str, day: str) -> None:
    assert _local(text, WED, "UTC")[0][1][:10] == day


@pytest.mark.parametrize(
    "text",
    [
        "The council needs the dog registration renewed by Monday.",
        "I want it fixed by Monday.",
        "We need the forms signed by Monday.",
    ],
)
def test_a_participle_after_need_or_want_and_an_object_is_no_past(text: str) -> None:
    (expr,) = normalise_times(text, WED, "en", timezone="UTC")
    assert expr.kind == "deadline"
    assert expr.deadline is not None
    assert expr.deadline.isoformat() == "2029-03-19T23:59:59+00:00"


def test_a_weekday_deadline_takes_the_zone_offset_of_its_own_day() -> None:
    # Thursday 3 Oct 2030 in Adelaide (+09:30); daylight saving starts on Sunday 6 Oct (+10:30)
    base = datetime(2030, 10, 3, 4, tzinfo=UTC)
    (expr,) = normalise_times(
        "The council needs the registration renewed by Tuesday.", base, "en", timezone="Australia/Adelaide"
    )
    assert expr.deadline is not None
    assert expr.deadline.astimezone(ZoneInfo("Australia/Adelaide")).isoformat() == "2030-10-08T23:59:59+10:30"


DEC_30 = datetime(2030, 12, 30, 6, 20, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("新校区1月中旬开放参观", "2031-01-11"),  # no tense: a month over this year is next year's
        ("3月底交房", "2031-03-31"),
        ("这款11月上旬会补货", "2031-11-01"),  # future
        ("1月中旬我去过一次", "2030-01-11"),  # past: this year's
        ("12月下旬开放参观", "2030-12-21"),  # this month: stays
        ("明年1月中旬开放", "2031-01-11"),
    ],
)
def test_a_month_part_of_a_month_already_over_rolls_to_next_year(text: str, start: str) -> None:
    assert _local(text, DEC_30, "Asia/Shanghai", "zh")[0][1][:10] == start


def _lengths(text: str, base: datetime = WED) -> list[tuple[str, str, str, str]]:
    return [
        (e.original_form, e.kind, e.start.isoformat()[:16], e.end.isoformat()[:16])
        for e in normalise_times(text, base, "en", timezone="UTC")
    ]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (
            "We've been sitting on the shoulder for two and a half hours waiting.",
            [("two and a half hours", "duration", "2029-03-14T07:30", "2029-03-14T10:00")],
        ),
        (
            "the flight lasts an hour and a half",
            [("an hour and a half", "duration", "2029-03-14T10:00", "2029-03-14T11:30")],
        ),
        (
            "I'll be there in two and a half hours",
            [("in two and a half hours", "point", "2029-03-14T12:30", "2029-03-14T12:30")],
        ),
        (
            "He left two and a half hours ago",
            [("two and a half hours ago", "point", "2029-03-14T07:30", "2029-03-14T07:30")],
        ),
    ],
)
def test_and_a_half_adds_half_a_unit(text: str, found: list[tuple[str, str, str, str]]) -> None:
    assert _lengths(text) == found


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (
            "My phone still hasn't shipped after six weeks.",
            [("six weeks", "duration", "2029-01-31T10:00", "2029-03-14T10:00")],
        ),
        ("it hasnt arrived after 3 days", [("3 days", "duration", "2029-03-11T10:00", "2029-03-14T10:00")]),
        ("We have waited after 2 hours of queueing", [("2 hours", "duration", "2029-03-14T08:00", "2029-03-14T10:00")]),
        # no perfect: "after" a count is the point that far ahead
        ("Call me back after two days.", [("after two days", "point", "2029-03-16T00:00", "2029-03-16T23:59")]),
        ("After 3 days we will refund you.", [("After 3 days", "point", "2029-03-17T00:00", "2029-03-17T23:59")]),
    ],
)
def test_after_a_count_under_a_perfect_looks_back(text: str, found: list[tuple[str, str, str, str]]) -> None:
    assert _lengths(text) == found


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("The letting agent inspected the flat on the 21st and is withholding my deposit.", "2029-02-21"),
        ("The roofer repaired our gutter on the 20th and it leaks again.", "2029-02-20"),
        ("Our landlord cleaned it on the 20th.", "2029-02-20"),
        ("The plumber will fix the sink on the 20th.", "2029-03-20"),  # no done verb: ahead
        ("The signed lease starts on the 20th.", "2029-03-20"),  # a participle before a noun: no object
        ("The delivery is scheduled the 20th.", "2029-03-20"),
    ],
)
def test_a_regular_past_verb_with_its_object_is_a_done_clause(text: str, day: str) -> None:
    assert _local(text, WED, "UTC")[0][1][:10] == day


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("我20号交的话费怎么到现在还显示欠费", "2029-02-20"),  # 话费 is the bill paid, not 的话 (if)
        ("我20号交的话费会到账吗", "2029-03-20"),  # 会 after it: ahead
        ("20号交的话就不收滞纳金", "2029-03-20"),  # 的话: a condition
    ],
)
def test_a_bill_paid_is_a_done_clause_but_de_hua_is_a_condition(text: str, day: str) -> None:
    assert _local(text, WED, "UTC", "zh")[0][1][:10] == day


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (
            "I've been stuck on the login page for twenty-five minutes.",
            [("twenty-five minutes", "duration", "2029-03-14T09:35", "2029-03-14T10:00")],
        ),
        (
            "We've waited for seventy-five minutes.",
            [("seventy-five minutes", "duration", "2029-03-14T08:45", "2029-03-14T10:00")],
        ),
        # a range from one word to another still counts its upper end
        (
            "it takes twenty to thirty minutes",
            [("twenty to thirty minutes", "duration", "2029-03-14T10:00", "2029-03-14T10:30")],
        ),
    ],
)
def test_a_tens_word_hyphened_to_a_ones_word_is_one_number(text: str, found: list[tuple[str, str, str, str]]) -> None:
    assert _lengths(text) == found


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (
            "The line at the post office hasn't moved in 45 minutes.",
            [("45 minutes", "duration", "2029-03-14T09:15", "2029-03-14T10:00")],
        ),
        (
            "The contractor hasn't answered a single email in two weeks.",
            [("two weeks", "duration", "2029-02-28T10:00", "2029-03-14T10:00")],
        ),
        ("I have not slept in two days", [("two days", "duration", "2029-03-12T10:00", "2029-03-14T10:00")]),
        (
            "the claim hasnt been touched in 3 business days",
            [("3 business days", "duration", "2029-03-09T10:00", "2029-03-14T10:00")],
        ),
        # no negated perfect in the count's clause: "in" a count is the point that far ahead
        (
            "They haven't replied, so call me in 2 days",
            [("in 2 days", "point", "2029-03-16T00:00", "2029-03-16T23:59")],
        ),
        ("It has moved, see you in 2 hours", [("in 2 hours", "point", "2029-03-14T12:00", "2029-03-14T12:00")]),
    ],
)
def test_in_a_count_under_a_negated_perfect_looks_back(text: str, found: list[tuple[str, str, str, str]]) -> None:
    assert _lengths(text) == found


@pytest.mark.parametrize(
    ("text", "found"),
    [
        # a perfect of not doing with its to-verb is a state up to now
        (
            "The scanners have refused to sync for three hours.",
            [("three hours", "duration", "2029-03-14T07:00", "2029-03-14T10:00")],
        ),
        (
            "The app has failed to load for two days",
            [("two days", "duration", "2029-03-12T10:00", "2029-03-14T10:00")],
        ),
        # a perfect of deciding with its to-verb is a plan: the length runs ahead
        (
            "She has decided to stay for two days",
            [("two days", "duration", "2029-03-14T10:00", "2029-03-16T23:59")],
        ),
    ],
)
def test_for_a_length_after_a_perfect_of_not_doing_looks_back(
    text: str, found: list[tuple[str, str, str, str]]
) -> None:
    assert _lengths(text) == found


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (
            "The crack has been taped over for a fortnight",
            [("a fortnight", "duration", "2029-02-28T10:00", "2029-03-14T10:00")],
        ),
        (
            "We have waited for two fortnights",
            [("two fortnights", "duration", "2029-02-14T10:00", "2029-03-14T10:00")],
        ),
        (
            "We will refund you within a fortnight",
            [("within a fortnight", "deadline", "2029-03-14T10:00", "2029-03-28T23:59")],
        ),
    ],
)
def test_a_fortnight_is_two_weeks(text: str, found: list[tuple[str, str, str, str]]) -> None:
    assert _lengths(text) == found


@pytest.mark.parametrize(
    ("text", "day"),
    [
        # a promise reported from someone else keeps its day ahead: what a third party said they would
        # do is a commitment of theirs, and its deadline is what recall's overdue reading needs
        ("Maria said she would send the quote on Friday", "2029-03-16"),
        ("She told me they would call on Monday", "2029-03-19"),
        ("The plumber will come on Friday", "2029-03-16"),
    ],
)
def test_a_future_reported_from_someone_else_stays_ahead(text: str, day: str) -> None:
    assert _local(text, WED, "UTC")[0][1][:10] == day


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("我礼拜一在网上挂的专家号，怎么查不到", "2029-03-12"),  # a surface (网上) is a place too
        ("周二在APP上订的票还没出", "2029-03-13"),
        ("周五在网上买的客户都会有赠品", "2029-03-16"),  # 会 after it: ahead
    ],
)
def test_a_place_on_a_surface_then_a_verb_and_de_is_a_done_clause(text: str, day: str) -> None:
    assert _local(text, WED, "UTC", "zh")[0][1][:10] == day
