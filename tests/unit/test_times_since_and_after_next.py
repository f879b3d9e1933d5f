"""Start points (从…开始, 自从…以来), evening clocks, a day and a clock around a limit word, thirds of a
relative month, "after next", a count from a named day, past lengths after a perfect, done verbs after
a pronoun and irregular past forms, bare days a month lacks, vague counts of days back (前两天), and hour
counts across a clock change."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from schemas.memory import TimeExpression
from state.core.language import language_mix
from state.time import calendar as cal
from state.time.extract import normalise_times

# Tue 2027-06-15 10:00 in Shanghai
SHANGHAI = "Asia/Shanghai"
TUESDAY = datetime(2027, 6, 15, 2, 0, tzinfo=UTC)


def local(text: str, base: datetime = TUESDAY, tz: str = SHANGHAI) -> list[tuple[str, str, str, str | None]]:
    zone = ZoneInfo(tz)
    found: tuple[TimeExpression, ...] = normalise_times(text, base, language_mix(text), timezone=tz)
    return [
        (
            t.original_form,
            t.kind,
            t.start.astimezone(zone).strftime("%Y-%m-%d %H:%M"),
            None if t.deadline is None else t.deadline.astimezone(zone).strftime("%Y-%m-%d %H:%M"),
        )
        for t in found
    ]


@pytest.mark.parametrize(
    ("text", "form", "start"),
    [
        ("自从6月2号装了这个软件以来，电脑就变慢了", "6月2号", "2027-06-02 00:00"),
        ("从上周三开始就一直咳嗽", "上周三", "2027-06-09 00:00"),
        ("自从3号那天交了押金，就没人联系我", "3号", "2027-06-03 00:00"),
        ("从下周一起调整营业时间", "下周一", "2027-06-21 00:00"),
    ],
)
def test_a_start_word_around_a_date_leaves_the_date_a_point(text: str, form: str, start: str) -> None:
    assert local(text) == [(form, "point", start, None)]


def test_a_range_said_with_both_ends_stays_a_range() -> None:
    (found,) = local("从6月20号到6月25号暂停营业")
    assert found[:2] == ("从6月20号到6月25号", "range")


@pytest.mark.parametrize(
    ("text", "form", "start"),
    [
        ("The delivery window is tonight at 10:15", "tonight at 10:15", "2027-06-15 22:15"),
        ("we go live tonight at 8", "tonight at 8", "2027-06-15 20:00"),
        ("Doors close at 11 pm tonight", "11 pm tonight", "2027-06-15 23:00"),
        ("the sale ends tonight at 12", "tonight at 12", "2027-06-16 00:00"),
        ("the alarm went off last night at 9:40", "last night at 9:40", "2027-06-14 21:40"),
    ],
)
def test_a_clock_with_tonight_is_that_evening_s_clock(text: str, form: str, start: str) -> None:
    assert local(text) == [(form, "point", start, None)]


@pytest.mark.parametrize(
    ("text", "form", "limit"),
    [
        ("Please return the form Thursday before 3 pm", "Thursday before 3 pm", "2027-06-17 15:00"),
        ("send it over tomorrow by 9:30 am", "tomorrow by 9:30 am", "2027-06-16 09:30"),
        ("tomorrow no later than noon, please", "tomorrow no later than noon", "2027-06-16 12:00"),
    ],
)
def test_a_day_then_a_limit_word_then_a_clock_is_a_deadline_at_that_clock(text: str, form: str, limit: str) -> None:
    assert local(text) == [(form, "deadline", "2027-06-15 10:00", limit)]


@pytest.mark.parametrize(
    ("text", "form", "start"),
    [
        ("We can schedule the audit mid next month", "mid next month", "2027-07-11 00:00"),
        ("the invoice goes out early next month", "early next month", "2027-07-01 00:00"),
        ("prices drop late this month", "late this month", "2027-06-21 00:00"),
    ],
)
def test_a_third_of_a_relative_month(text: str, form: str, start: str) -> None:
    assert local(text) == [(form, "range", start, None)]


@pytest.mark.parametrize(
    ("text", "form", "kind", "start"),
    [
        ("How about the weekend after next?", "the weekend after next", "range", "2027-07-03 00:00"),
        ("Let's meet the week after next", "the week after next", "range", "2027-06-28 00:00"),
        ("the crew can come the Thursday after next", "the Thursday after next", "point", "2027-07-01 00:00"),
    ],
)
def test_after_next_is_two_weeks_on(text: str, form: str, kind: str, start: str) -> None:
    # next Thursday is the Thursday of next week (24 June), so the one after next is 1 July; next
    # weekend is 26-27 June, the one after it 3-4 July
    assert local(text) == [(form, kind, start, None)]


@pytest.mark.parametrize(
    ("text", "form", "start"),
    [
        ("The surgery is scheduled for a week from Monday.", "a week from Monday", "2027-06-28 00:00"),
        ("the movers come two weeks from Friday", "two weeks from Friday", "2027-07-02 00:00"),
        ("Can we do it three days from tomorrow?", "three days from tomorrow", "2027-06-19 00:00"),
        ("the review is a week from next Friday", "a week from next Friday", "2027-07-02 00:00"),
    ],
)
def test_a_count_from_a_named_day_is_that_day_moved_on(text: str, form: str, start: str) -> None:
    # a bare Monday is the next one (21 June), next Friday the Friday of next week (25 June)
    assert local(text) == [(form, "point", start, None)]


def test_a_count_from_a_day_to_another_is_no_count_from_it() -> None:
    assert [form for form, *_ in local("I'm away for a week from Monday to Sunday")] == ["a week", "Monday", "Sunday"]


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("I've been sitting in this waiting room for 35 minutes", "2027-06-15 09:25"),
        ("We have been parked outside your gate for an hour", "2027-06-15 09:00"),
        ("She's been locked out of her account for 20 minutes", "2027-06-15 09:40"),
    ],
)
def test_a_length_after_a_perfect_runs_up_to_the_event(text: str, start: str) -> None:
    ((_, kind, begin, _),) = local(text)
    assert (kind, begin) == ("duration", start)


def test_a_length_said_in_the_present_still_runs_ahead_after_a_perfect() -> None:
    ((_, kind, begin, _),) = local("I've been told the repair takes 3 days")
    assert (kind, begin) == ("duration", "2027-06-15 10:00")


@pytest.mark.parametrize(
    ("text", "form", "start"),
    [
        ("I renewed my parking permit on the 20th and it still says expired", "the 20th", "2027-05-20 00:00"),
        ("we noticed the leak on Friday", "Friday", "2027-06-11 00:00"),
        ("They switched my tariff on the 30th without asking", "the 30th", "2027-05-30 00:00"),
    ],
)
def test_a_done_verb_after_a_pronoun_puts_a_bare_date_in_the_past(text: str, form: str, start: str) -> None:
    assert local(text) == [(form, "point", start, None)]


@pytest.mark.parametrize(
    ("text", "form", "start"),
    [
        ("Your ATM kept my bank card on the 29th and the branch has no record of it", "the 29th", "2027-05-29 00:00"),
        ("The machine took my card on the 3rd.", "the 3rd", "2027-06-03 00:00"),
        ("the courier threw my parcel over the fence on Friday", "Friday", "2027-06-11 00:00"),
    ],
)
def test_an_irregular_past_form_puts_a_bare_date_in_the_past(text: str, form: str, start: str) -> None:
    # the 29th not yet come this month is last month's; the 3rd already gone is this month's
    assert local(text) == [(form, "point", start, None)]


def test_a_state_with_be_is_no_irregular_past() -> None:
    assert local("I'm stuck at home until the 20th") == [
        ("until the 20th", "deadline", "2027-06-15 10:00", "2027-06-20 23:59")
    ]


@pytest.mark.parametrize(
    "text",
    [
        "We need the parts on the 20th",  # need: -eed is no past form
        "The charger you recommended should be in stock on the 20th",  # a pronoun after a noun describes it
    ],
)
def test_a_pronoun_cue_needs_a_past_form_opening_its_clause(text: str) -> None:
    assert [start for _, _, start, _ in local(text)] == ["2027-06-20 00:00"]


@pytest.mark.parametrize(
    ("text", "form", "start"),
    [
        ("我周四刚在你们这儿换的电池，又没电了", "周四", "2027-06-10 00:00"),
        ("这件外套是上周六做的干洗", "上周六", "2027-06-12 00:00"),
    ],
)
def test_just_done_marks_a_bare_weekday_past(text: str, form: str, start: str) -> None:
    assert local(text) == [(form, "point", start, None)]


def test_just_right_is_no_past() -> None:
    assert local("刚好周四有空") == [("周四", "point", "2027-06-17 00:00", None)]


def test_a_day_the_month_lacks_is_the_nearest_month_that_has_it() -> None:
    base = datetime(2027, 6, 20, 2, tzinfo=UTC)  # June has no 31st
    assert local("上次31号来装的空调又不制冷了", base) == [("31号", "point", "2027-05-31 00:00", None)]
    assert local("31号会有人上门", base) == [("31号", "point", "2027-07-31 00:00", None)]


def test_moving_a_late_day_by_months_keeps_the_day() -> None:
    assert cal.month_with_day(datetime(2027, 3, 31), 31, -1) == datetime(2027, 1, 31)
    assert cal.month_with_day(datetime(2027, 1, 30), 30, 1) == datetime(2027, 3, 30)


@pytest.mark.parametrize(
    ("text", "tz", "base", "want"),
    [
        # Paris springs forward on Sun 28 Mar 2027: 48 elapsed hours from Fri 10:00 CET are Sun 11:00 CEST
        ("我们会在48小时内回复", "Europe/Paris", datetime(2027, 3, 26, 9, 0, tzinfo=UTC), "2027-03-28 11:00"),
        ("within 48 hours", "Europe/Paris", datetime(2027, 3, 26, 9, 0, tzinfo=UTC), "2027-03-28 11:00"),
        # New York falls back on Sun 7 Nov 2027: 30 hours from Sat 12:00 EDT are Sun 17:00 EST
        ("in the next 30 hours", "America/New_York", datetime(2027, 11, 6, 16, 0, tzinfo=UTC), "2027-11-07 17:00"),
    ],
)
def test_an_hour_count_across_a_clock_change_is_elapsed_time(text: str, tz: str, base: datetime, want: str) -> None:
    ((_, kind, _, limit),) = local(text, base, tz)
    assert (kind, limit) == ("deadline", want)


def test_a_day_count_across_a_clock_change_keeps_the_wall_clock() -> None:
    ((_, _, _, limit),) = local("两天内", datetime(2027, 3, 26, 9, 0, tzinfo=UTC), "Europe/Paris")
    assert limit == "2027-03-28 23:59"


def test_a_past_hour_length_across_a_clock_change_is_elapsed_time() -> None:
    # Sun 28 Mar 2027 04:30 CEST = 02:30 UTC; three hours before is 23:30 UTC = 00:30 CET
    base = datetime(2027, 3, 28, 2, 30, tzinfo=UTC)
    ((_, kind, start, _),) = local("I waited 3 hours", base, "Europe/Paris")
    assert (kind, start) == ("duration", "2027-03-28 00:30")


@pytest.mark.parametrize(
    ("text", "form", "start"),
    [
        ("我前两天在你们店买的鞋，鞋底开胶了", "前两天", "2027-06-13 00:00"),
        ("前几天寄的快递一直没到", "前几天", "2027-06-12 00:00"),
        ("前些天收到的包裹是坏的", "前些天", "2027-06-12 00:00"),
        ("前些日子办的卡被冻结了", "前些日子", "2027-06-12 00:00"),
    ],
)
def test_a_vague_count_of_days_back_is_a_day_that_far_back(text: str, form: str, start: str) -> None:
    # 两 is two days; 几 and 些 are read as three, as 几天后 is
    assert local(text) == [(form, "point", start, None)]


@pytest.mark.parametrize("text", ["请提前两天通知我们", "开学的前两天我要回去", "开课前两天会有短信通知您"])
def test_days_before_something_else_are_no_days_ago(text: str) -> None:
    assert ("前两天", "point", "2027-06-13 00:00", None) not in local(text)
