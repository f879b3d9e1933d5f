"""A year word bound to a month part, the edges of a named month, and tense cues that read the clause
right: passives with an adverb, "booked for", "plan" as a verb, 的话, a request after the date, "be waiting"."""

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


DEC_31 = datetime(2029, 12, 31, 12, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "form", "start"),
    [
        ("车贷明年一月底开始还第一期", "明年一月底", "2030-01-31T00:00:00"),
        ("明年三月初上新", "明年三月初", "2030-03-01T00:00:00"),
        ("去年十二月底就交了", "去年十二月底", "2028-12-31T00:00:00"),
        ("2031年3月中开工", "2031年3月中", "2031-03-11T00:00:00"),
        ("后年二月底到期", "后年二月底", "2031-02-28T00:00:00"),
    ],
)
def test_a_year_word_binds_to_the_month_part_after_it(text: str, form: str, start: str) -> None:
    found = _local(text, DEC_31, "UTC", "zh")
    assert [(f, s[:19]) for f, s, _ in found] == [(form, start)]


def test_a_month_part_without_a_year_follows_the_tense_of_its_clause() -> None:
    assert _local("一月底会还清", DEC_31, "UTC", "zh")[0][1].startswith("2030-01-31")


JULY_3 = datetime(2029, 7, 3, 5, 20, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        ("The renewal has to be done by the end of July to keep the bonus.", "2029-07-31T23:59:59+05:30"),
        ("Please pay before the end of August.", "2029-08-31T23:59:59+05:30"),
        ("We need it by the end of February.", "2030-02-28T23:59:59+05:30"),
    ],
)
def test_by_the_end_of_a_named_month_is_a_deadline_on_its_last_day(text: str, limit: str) -> None:
    (expr,) = normalise_times(text, JULY_3, "en", timezone="Asia/Kolkata")
    assert expr.kind == "deadline"
    assert expr.granularity == "day"
    assert expr.deadline is not None
    assert expr.deadline.astimezone(ZoneInfo("Asia/Kolkata")).isoformat() == limit


def test_the_start_and_end_of_a_named_month_are_days() -> None:
    assert _local("the shop opens at the start of May", JULY_3, "UTC") == [
        ("the start of May", "2030-05-01T00:00:00+00:00", "point")
    ]
    assert _local("see you at the end of June 2031", JULY_3, "UTC") == [
        ("the end of June 2031", "2031-06-30T00:00:00+00:00", "point")
    ]


def test_the_end_of_a_past_month_is_pulled_back_in_a_past_clause() -> None:
    assert _local("we closed the account at the end of June", JULY_3, "UTC")[0][1].startswith("2029-06-30")


@pytest.mark.parametrize(
    ("text", "start"),
    [
        # on 31 Dec (Sydney): booked for the 2nd is 2 January, a passive with "now" is no past
        ("Your knee arthroscopy is now booked for the 2nd, please do not eat anything.", "2030-01-02"),
        ("The upgrade is already booked for Monday.", "2030-01-07"),  # a bare weekday: the next one
        ("I booked for the 3rd", "2030-01-03"),
    ],
)
def test_booked_for_a_day_is_ahead(text: str, start: str) -> None:
    base = datetime(2029, 12, 30, 22, tzinfo=UTC)  # 31 Dec, 09:00 in Sydney (a Monday)
    assert _local(text, base, "Australia/Sydney")[0][1].startswith(start)


@pytest.mark.parametrize(
    "text",
    [
        "hello my postpaid bill got charged twice on the 1st can you check",
        "I got billed on the 1st please check",
        "the card got declined on the 1st could you look into it",
    ],
)
def test_a_request_after_the_date_leaves_the_past_of_its_clause(text: str) -> None:
    assert _local(text, JULY_3, "Asia/Kolkata")[0][1].startswith("2029-07-01")


def test_a_request_before_the_date_still_counts() -> None:
    assert _local("can you come on the 1st", JULY_3, "Asia/Kolkata")[0][1].startswith("2029-08-01")


def test_plan_is_future_as_a_verb_not_as_a_noun() -> None:
    assert _local("I switched to a new plan on the 1st", JULY_3, "UTC")[0][1].startswith("2029-07-01")
    assert _local("we plan to visit on Monday", JULY_3, "UTC")[0][1].startswith("2029-07-09")
    assert _local("I plan on coming on the 1st", JULY_3, "UTC")[0][1].startswith("2029-08-01")


def test_a_conditional_de_hua_is_no_done_verb() -> None:
    base = datetime(2029, 9, 20, 8, tzinfo=UTC)
    found = _local("车险续保10月底之前办的话还能保留折扣", base, "Europe/Paris", "zh")
    assert found[0][2] == "deadline"
    (expr,) = normalise_times("车险续保10月底之前办的话还能保留折扣", base, "zh", timezone="Europe/Paris")
    assert expr.deadline is not None
    assert expr.deadline.astimezone(ZoneInfo("Europe/Paris")).isoformat() == "2029-10-31T23:59:59+01:00"


def test_be_waiting_for_a_length_runs_ahead() -> None:
    (ahead,) = normalise_times("I'll be waiting for 20 minutes", JULY_3, "en", timezone="UTC")
    assert (ahead.start, ahead.end) == (JULY_3, datetime(2029, 7, 3, 5, 40, tzinfo=UTC))
    (back,) = normalise_times("I was waiting for 20 minutes", JULY_3, "en", timezone="UTC")
    assert (back.start, back.end) == (datetime(2029, 7, 3, 5, 0, tzinfo=UTC), JULY_3)


SUNDAY_JULY_30 = datetime(2034, 7, 30, 12, 40, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "base", "start"),
    [
        ("月初我要搬家，宽带能不能先暂停", SUNDAY_JULY_30, "2034-08-01"),  # this month's start is over
        ("月中再来复查", datetime(2034, 7, 25, 2, tzinfo=UTC), "2034-08-11"),
        ("月初我已经交过了", SUNDAY_JULY_30, "2034-07-01"),  # past: this month's
        ("本月初开始执行", SUNDAY_JULY_30, "2034-07-01"),  # 本月 names this month
        ("月初发工资", datetime(2034, 7, 3, 2, tzinfo=UTC), "2034-07-01"),  # still inside it
    ],
)
def test_a_bare_month_start_already_over_is_the_next_months(text: str, base: datetime, start: str) -> None:
    ((_, found, kind),) = _local(text, base, "UTC", "zh")
    assert (found[:10], kind) == (start, "range")


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("我周五在你们APP上买的演唱会门票，到现在还没出票", "2034-12-22"),  # 演唱会 is no "will"
        ("周五买的会员卡怎么用不了", "2034-12-22"),
        ("周五来店里买的客户都会有赠品", "2034-12-29"),  # 会 as "will": ahead
    ],
)
def test_hui_inside_a_noun_does_not_undo_a_done_purchase(text: str, day: str) -> None:
    found = _local(text, datetime(2034, 12, 26, 11, 30, tzinfo=UTC), "Asia/Shanghai", "zh")
    assert found[0][1][:10] == day


# Wednesday 2029-03-14, 10:00 UTC (18:00 in Shanghai)
MAR_14 = datetime(2029, 3, 14, 10, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "base", "found"),
    [
        (
            "Can we roll it out by the end of the quarter?",
            MAR_14,
            ("by the end of the quarter", "2029-03-31", "deadline"),
        ),
        ("It has to ship by the end of Q2", MAR_14, ("by the end of Q2", "2029-06-30", "deadline")),
        ("Can the install be scheduled for Q3?", MAR_14, ("Q3", "2029-07-01", "range")),
        ("We expect it in the third quarter", MAR_14, ("the third quarter", "2029-07-01", "range")),
        ("The audit is in Q1", MAR_14, ("Q1", "2029-01-01", "range")),  # Q1 is not over yet
        ("The audit is in Q1", DEC_31, ("Q1", "2030-01-01", "range")),  # Q1 is over: next year's
        ("Let's revisit it next quarter", MAR_14, ("next quarter", "2029-04-01", "range")),
        ("Sales are up this quarter", DEC_31, ("this quarter", "2029-10-01", "range")),
        ("The launch slipped to Q4 2030", MAR_14, ("Q4 2030", "2030-10-01", "range")),
    ],
)
def test_calendar_quarters(text: str, base: datetime, found: tuple[str, str, str]) -> None:
    got = normalise_times(text, base, "en", timezone="UTC")[0]
    anchor = got.deadline if got.deadline is not None else got.start  # a deadline's day is its limit's
    assert (got.original_form, anchor.date().isoformat(), got.kind) == found


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("Is a cleaner free tomorrow mid-morning?", "2029-03-15T10:00:00+00:00"),
        ("Can you call Friday mid-afternoon", "2029-03-16T15:00:00+00:00"),
        ("tomorrow midmorning works", "2029-03-15T10:00:00+00:00"),
    ],
)
def test_mid_morning_and_mid_afternoon(text: str, start: str) -> None:
    assert _local(text, MAR_14, "UTC")[0][1] == start


@pytest.mark.parametrize(
    ("text", "base", "start"),
    [
        ("后半夜楼下的变压器响了好几声", MAR_14, "2029-03-14T00:00:00+08:00"),  # done: the night just gone
        ("后半夜会降温，记得关窗", MAR_14, "2029-03-15T00:00:00+08:00"),  # ahead, said in the evening
        ("后半夜楼下一直很吵", datetime(2029, 3, 13, 23, 50, tzinfo=UTC), "2029-03-14T00:00:00+08:00"),  # morning
    ],
)
def test_the_small_hours_are_the_night_the_clause_means(text: str, base: datetime, start: str) -> None:
    assert _local(text, base, "Asia/Shanghai", "zh")[0][1] == start


def test_a_quarter_to_a_clock_is_no_calendar_quarter() -> None:
    assert _local("The bus leaves at quarter to five.", MAR_14, "UTC")[0][:2] == (
        "quarter to five",
        "2029-03-14T16:45:00+00:00",
    )
