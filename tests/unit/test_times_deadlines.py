"""Deadlines, durations and tense: kinds, the exact limit instant, business days, past dates."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.time_gold import judge, load_gold, ours
from schemas.memory import MemoryUnit, TimeExpression
from state.core.language import language_mix
from state.time.extract import normalise_times

MONDAY = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
FRESH = Path(__file__).resolve().parents[1] / "fixtures" / "time_fresh.jsonl"
HOLDOUT = Path(__file__).resolve().parents[1] / "fixtures" / "time_holdout.jsonl"
FRESH2 = Path(__file__).resolve().parents[1] / "fixtures" / "time_fresh2.jsonl"


def times(text: str, base: datetime = MONDAY, tz: str = "UTC") -> list[TimeExpression]:
    return list(normalise_times(text, base, language_mix(text), timezone=tz))


def only(text: str, base: datetime = MONDAY) -> TimeExpression:
    found = times(text, base)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(
    ("text", "form", "limit", "granularity"),
    [
        ("请在12月20日前完成付款", "12月20日前", "2026-12-20T23:59:59+00:00", "day"),
        ("今天下午4点前回复我", "今天下午4点前", "2026-11-30T16:00:00+00:00", "minute"),
        ("明天中午12点前发货", "明天中午12点前", "2026-12-01T12:00:00+00:00", "minute"),
        ("Please pay before December 20", "before December 20", "2026-12-20T23:59:59+00:00", "day"),
        ("I need it by 4pm", "by 4pm", "2026-11-30T16:00:00+00:00", "minute"),
        ("no later than Friday", "no later than Friday", "2026-12-04T23:59:59+00:00", "day"),
        ("截止到12月25日", "截止到12月25日", "2026-12-25T23:59:59+00:00", "day"),
        ("最晚周五给您答复", "最晚周五", "2026-12-04T23:59:59+00:00", "day"),
        ("You'll have it Friday at the latest", "Friday at the latest", "2026-12-04T23:59:59+00:00", "day"),
    ],
)
def test_a_limit_word_makes_a_deadline_with_the_exact_instant(
    text: str, form: str, limit: str, granularity: str
) -> None:
    t = only(text)
    assert (t.kind, t.original_form, t.granularity) == ("deadline", form, granularity)
    assert t.deadline is not None
    assert t.deadline.isoformat() == limit
    assert (t.start, t.end) == (MONDAY, t.deadline)  # from the event to the limit


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        ("两天内发到您的账户", "2026-12-02T23:59:59+00:00"),
        ("三个工作日内处理", "2026-12-03T23:59:59+00:00"),
        ("within 5 business days", "2026-12-07T23:59:59+00:00"),  # Monday + 5 working days = next Monday
        ("48小时内", "2026-12-02T09:00:00+00:00"),
        ("一周之内", "2026-12-07T23:59:59+00:00"),
        ("someone will call you within an hour", "2026-11-30T10:00:00+00:00"),
    ],
)
def test_a_count_with_within_is_a_deadline(text: str, limit: str) -> None:
    t = only(text)
    assert t.kind == "deadline"
    assert t.deadline is not None
    assert t.deadline.isoformat() == limit


def test_working_days_skip_the_weekend() -> None:
    friday = datetime(2026, 12, 4, 15, 30, tzinfo=UTC)
    assert only("三个工作日内退款", friday).deadline == datetime(2026, 12, 9, 23, 59, 59, tzinfo=UTC)
    assert only("within 3 calendar days", friday).deadline == datetime(2026, 12, 7, 23, 59, 59, tzinfo=UTC)


def test_before_a_span_means_before_it_starts_unless_it_names_an_end() -> None:
    assert only("before next month").deadline == datetime(2026, 11, 30, 23, 59, 59, tzinfo=UTC)
    assert only("年底前上线").deadline == datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC)


def test_a_visit_is_not_a_deadline() -> None:
    assert only("Come by tomorrow at 10.").kind == "point"


def test_durations_run_forward_or_back_to_the_event() -> None:
    ahead = only("退款一般需要3到5个工作日")
    assert (ahead.kind, ahead.start, ahead.end.date().isoformat()) == ("duration", MONDAY, "2026-12-07")
    assert ahead.deadline is None
    waited = only("我已经等了两个星期了")
    assert (waited.kind, waited.start.isoformat(), waited.end) == ("duration", "2026-11-16T09:00:00+00:00", MONDAY)
    on_hold = only("I was on hold for 45 minutes.")
    assert (on_hold.start.isoformat(), on_hold.end) == ("2026-11-30T08:15:00+00:00", MONDAY)


def test_duration_ranges_decimals_and_what_is_no_duration() -> None:
    ranged = only("游玩时间是1小时 - 4小时")
    assert (ranged.kind, ranged.original_form, ranged.end.isoformat()) == (
        "duration",
        "1小时 - 4小时",
        "2026-11-30T13:00:00+00:00",
    )
    assert only("游玩的时长是0.5小时").end.isoformat() == "2026-11-30T09:30:00+00:00"
    assert times("提供24小时热水") == []  # an attribute, no length of anything said
    assert times("我过两天要和朋友出去玩") == []  # 过两天 is "in a couple of days", no length


def test_a_duration_bounds_no_validity() -> None:
    from state.core.datafiles import packaged, read_data
    from state.validity.rules import assign_validity, parse_calendar, parse_lexicon

    lex = parse_lexicon(read_data(packaged("validity_lexicon.yaml")))
    cal = parse_calendar(read_data(packaged("promotion_calendar.yaml")))
    text = "这个景点可以玩2-3小时"
    validity = assign_validity(text, tuple(times(text)), MONDAY, lex, cal)
    assert validity.effective_to is None


def test_offsets_stay_points() -> None:
    assert [(t.kind, t.original_form) for t in times("两天前就发货了，三天后再说")] == [
        ("point", "两天前"),
        ("point", "三天后"),
    ]


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("The order I placed on October 15 never arrived", "2026-10-15"),
        ("I called on Tuesday and nobody answered", "2026-11-24"),
        ("周二我打过电话", "2026-11-24"),
        ("Your refund will arrive on January 3", "2027-01-03"),
        ("10月15日会发货", "2027-10-15"),
        ("Saturday is booked.", "2026-12-05"),  # a participle after "is" is no past tense
    ],
)
def test_tense_decides_an_ambiguous_date(text: str, day: str) -> None:
    assert only(text).start.date().isoformat() == day


def test_kinds_of_points_and_ranges() -> None:
    assert [t.kind for t in times("明天下午三点，这周末，下个月")] == ["point", "range", "range"]


def test_a_unit_carries_its_earliest_deadline() -> None:
    found = tuple(times("周三前给初稿，12月20日前给终稿"))
    unit = MemoryUnit(
        memory_id="m",
        unit_index=0,
        tenant_id="t",
        session_id="s",
        turn_id="u",
        event_id="e",
        ts=MONDAY,
        text="周三前给初稿，12月20日前给终稿",
        source_text="周三前给初稿，12月20日前给终稿",
        times=found,
    )
    assert unit.deadline == datetime(2026, 12, 2, 23, 59, 59, tzinfo=UTC)
    assert MemoryUnit.model_validate(unit.model_dump()).deadline == unit.deadline  # survives the payload
    assert unit.model_copy(update={"times": ()}).deadline is None


def test_fresh_set_every_deadline_exact_and_97_percent_overall() -> None:
    items = load_gold(FRESH)
    assert len(items) >= 80
    assert sum(i.kind in ("deadline", "duration") for i in items) >= 25
    assert sum(i.tense == "past" for i in items) >= 15
    verdicts = [(i, judge(i, ours(i))[0]) for i in items]
    assert all(ok for i, ok in verdicts if i.kind == "deadline")
    assert sum(ok for _, ok in verdicts) / len(items) >= 0.97


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_held_out_set_stays_at_95_percent_per_language(lang: str) -> None:
    items = [i for i in load_gold(HOLDOUT) if i.lang == lang]
    assert sum(judge(i, ours(i))[0] for i in items) / len(items) >= 0.95


_TOKENS = [
    "前",
    "之前",
    "以内",
    "内",
    "截止到",
    "最晚",
    "为止",
    "个工作日",
    "天",
    "小时",
    "个月",
    "年",
    "周五",
    "12月20日",
    "下午4点",
    "三",
    "两",
    "几",
    "百",
    "999",
    "0",
    "到",
    "-",
    "within",
    "by",
    "before",
    "no later than",
    "business",
    "days",
    "hours",
    "weeks",
    "for",
    "took",
    "was",
    "will",
    "at the latest",
    "Friday",
    "October 15",
    "the 31st",
    "2/30",
    "了",
    "过",
    "会",
    " ",
    "，",
    "。",
    "?",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=12), st.integers(min_value=0, max_value=3))
def test_any_mix_of_limit_words_and_counts_never_raises(parts: list[str], shift: int) -> None:
    text = "".join(parts)
    base = datetime(2026 + shift * 300, 12, 31, 23, 30, tzinfo=UTC)
    for t in normalise_times(text, base, language_mix(text)):
        assert 0 <= t.span[0] < t.span[1] <= len(text)
        assert t.start <= t.end
        assert t.kind != "deadline" or t.deadline == t.end


WEDNESDAY = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        # a limit on a bare weekday or day of the month lies ahead; 之前 is the limit, not a past cue
        ("周一之前能处理好吗？", "2026-12-07T23:59:59+00:00"),
        ("Please return the signed form by the 1st.", "2027-01-01T23:59:59+00:00"),
        # the weekend is a span of its own: before it means by Friday's end
        ("Can this be fixed before the weekend?", "2026-12-04T23:59:59+00:00"),
        ("周末前给我回个话", "2026-12-04T23:59:59+00:00"),
        # an hour with tonight or in the evening is that evening's hour
        ("Let me know before 9 tonight.", "2026-12-02T21:00:00+00:00"),
    ],
)
def test_limits_ahead_of_the_event(text: str, limit: str) -> None:
    (found,) = [t for t in times(text, WEDNESDAY) if t.kind == "deadline"]
    assert found.deadline is not None
    assert found.deadline.isoformat() == limit


def test_a_past_clause_keeps_a_limit_behind_the_event() -> None:
    (found,) = times("I had paid it before Monday.", WEDNESDAY)
    assert found.deadline is not None
    assert found.deadline.date().isoformat() == "2026-11-30"


@pytest.mark.parametrize(
    ("text", "start", "kind"),
    [
        ("The parcel went out on the 3rd of last month.", "2026-11-03T00:00:00+00:00", "point"),
        ("We restock in mid-December.", "2026-12-11T00:00:00+00:00", "range"),
        ("Late January suits me.", "2027-01-21T00:00:00+00:00", "range"),
        ("Come round at 7 in the evening tomorrow.", "2026-12-03T19:00:00+00:00", "point"),
        ("上个月月底就寄出去了", "2026-11-30T00:00:00+00:00", "point"),
        ("下个月月初再联系", "2027-01-01T00:00:00+00:00", "range"),
        # an aside between commas takes its sentence's tense
        ("My first order, the one from November 20, never arrived.", "2026-11-20T00:00:00+00:00", "point"),
    ],
)
def test_more_dates_and_parts_of_months(text: str, start: str, kind: str) -> None:
    found = only(text, WEDNESDAY)
    assert (found.start.isoformat(), found.kind) == (start, kind)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        # waited, spent, been: a length up to the event
        ("I've been waiting two hours for a reply.", "2026-12-02T07:00:00+00:00", "2026-12-02T09:00:00+00:00"),
        ("I've been emailing your team for three weeks.", "2026-11-11T09:00:00+00:00", "2026-12-02T09:00:00+00:00"),
        ("已经过去两周了，还没有消息", "2026-11-18T09:00:00+00:00", "2026-12-02T09:00:00+00:00"),
        # a past word in another clause does not turn a length said ahead into the past
        ("最近快递会慢一些，大概要两天", "2026-12-02T09:00:00+00:00", "2026-12-04T23:59:59+00:00"),
    ],
)
def test_durations_up_to_or_from_the_event(text: str, start: str, end: str) -> None:
    found = only(text, WEDNESDAY)
    assert (found.kind, found.start.isoformat(), found.end.isoformat()) == ("duration", start, end)


def test_second_fresh_set_every_deadline_exact_and_97_percent_overall() -> None:
    items = load_gold(FRESH2)
    verdicts = [(i, judge(i, ours(i))[0]) for i in items]
    assert all(ok for i, ok in verdicts if i.kind == "deadline")
    assert sum(ok for _, ok in verdicts) / len(items) >= 0.97


@pytest.mark.parametrize(
    ("text", "day"),
    [
        # only an aside between commas borrows its sentence's tense
        ("Friday works, I already told your colleague.", "2026-12-04"),
        # "been" before a participle is no past: the Friday is ahead
        ("Your visit has been moved to Friday.", "2026-12-04"),
    ],
)
def test_a_date_ahead_stays_ahead(text: str, day: str) -> None:
    assert only(text, WEDNESDAY).start.date().isoformat() == day


def test_a_count_before_this_morning_is_no_clock() -> None:
    assert [t.original_form for t in times("I bought 3 this morning.", WEDNESDAY)] == ["this morning"]


def test_a_part_of_a_month_said_in_the_past_is_behind() -> None:
    assert only("It was delivered in mid-October.", WEDNESDAY).start.date().isoformat() == "2026-10-11"


FRESH3 = Path(__file__).resolve().parents[1] / "fixtures" / "time_fresh3.jsonl"


def test_third_fresh_set_every_deadline_exact_and_97_percent_overall() -> None:
    items = load_gold(FRESH3)
    verdicts = [(i, judge(i, ours(i))[0]) for i in items]
    assert all(ok for i, ok in verdicts if i.kind == "deadline")
    assert sum(ok for _, ok in verdicts) / len(items) >= 0.97


def test_noon_as_a_limit_is_twelve_oclock() -> None:
    found = only("后天中午之前把合同签回来", MONDAY)
    assert (found.kind, found.deadline, found.granularity) == (
        "deadline",
        datetime(2026, 12, 2, 12, 0, tzinfo=UTC),
        "minute",
    )


@pytest.mark.parametrize(
    ("text", "base", "day"),
    [
        # a relative clause with a done verb (寄出的, 来装的, 来修的, 交的) puts its date behind the event
        ("12月20日交的押金一直没退。", datetime(2027, 1, 5, 9, tzinfo=UTC), "2026-12-20"),
        ("周日来修的热水器又不出热水了。", datetime(2026, 12, 2, 9, tzinfo=UTC), "2026-11-29"),
        # a plain past verb the list did not know: failed, expired
        ("My card was fine but the payment failed on December 28.", datetime(2027, 1, 5, 9, tzinfo=UTC), "2026-12-28"),
        ("The voucher expired on December 30.", datetime(2027, 1, 5, 9, tzinfo=UTC), "2026-12-30"),
    ],
)
def test_a_done_clause_puts_its_date_behind(text: str, base: datetime, day: str) -> None:
    assert only(text, base).start.date().isoformat() == day


def test_a_length_said_with_now_runs_up_to_the_event() -> None:
    found = only("We've been stuck at the border for six hours now.", WEDNESDAY)
    assert (found.kind, found.end) == ("duration", WEDNESDAY)
    assert found.start == WEDNESDAY.replace(hour=WEDNESDAY.hour - 6)


@pytest.mark.parametrize(
    ("text", "day"),
    [
        # said on Wednesday 2 December 2026: the last Black Friday is the one just gone
        ("I ordered it last Black Friday.", "2026-11-27"),
        ("We were closed last Christmas Eve.", "2025-12-24"),
        ("The shop reopens after Boxing Day.", "2026-12-26"),
        # a named day already over this year is next year's
        ("The next sale is on Cyber Monday.", "2027-11-29"),
    ],
)
def test_named_days_of_the_calendar(text: str, day: str) -> None:
    assert only(text, WEDNESDAY).start.date().isoformat() == day


def test_a_limit_on_a_named_day_ends_with_it() -> None:
    found = only("Can it arrive before Christmas?", WEDNESDAY)
    assert (found.kind, found.deadline) == ("deadline", datetime(2026, 12, 25, 23, 59, 59, tzinfo=UTC))


FRESH4 = Path(__file__).resolve().parents[1] / "fixtures" / "time_fresh4.jsonl"


def test_fourth_fresh_set_every_deadline_exact_and_97_percent_overall() -> None:
    items = load_gold(FRESH4)
    verdicts = [(i, judge(i, ours(i))[0]) for i in items]
    assert all(ok for i, ok in verdicts if i.kind == "deadline")
    assert sum(ok for _, ok in verdicts) / len(items) >= 0.97


@pytest.mark.parametrize(
    ("text", "base", "day"),
    [
        # a thing brought over (送过来的, 拿回来的) or charged (扣的) before the event
        ("周三送过来的那台洗衣机一甩干就响。", datetime(2027, 7, 11, 9, tzinfo=UTC), "2027-07-07"),
        ("20号扣的那笔年费能不能给我退了？", datetime(2027, 6, 15, 9, tzinfo=UTC), "2027-05-20"),
        # 预约的 is what was booked, not a booking ahead
        ("我2月14号预约的空调清洗，师傅一直都没上门。", datetime(2028, 2, 29, 9, tzinfo=UTC), "2028-02-14"),
        # "since" looks back
        ("My internet has been down since Thursday.", datetime(2027, 6, 1, 9, tzinfo=UTC), "2027-05-27"),
    ],
)
def test_more_done_clauses_put_their_date_behind(text: str, base: datetime, day: str) -> None:
    assert only(text, base).start.date().isoformat() == day


def test_until_a_day_is_a_limit_that_includes_it() -> None:
    found = only("Could you hold my post at the depot until November 8?", WEDNESDAY)
    assert (found.kind, found.deadline) == ("deadline", datetime(2027, 11, 8, 23, 59, 59, tzinfo=UTC))


def test_a_length_said_in_the_present_runs_ahead_of_a_reported_past() -> None:
    found = only("The courier said delivery takes 2 to 3 business days from here.", WEDNESDAY)
    assert (found.kind, found.start) == ("duration", WEDNESDAY)
    assert found.end > WEDNESDAY


@pytest.mark.parametrize(
    ("text", "form", "limit"),
    [
        ("Send me the updated quote by EOD so I can compare.", "by EOD", "2026-12-02T23:59:59+00:00"),
        ("The architect wants our comments by COB Monday.", "by COB Monday", "2026-12-07T23:59:59+00:00"),
        ("Can you get it to me by end of day tomorrow?", "by end of day tomorrow", "2026-12-03T23:59:59+00:00"),
        ("We need the form by end of day Thursday.", "by end of day Thursday", "2026-12-03T23:59:59+00:00"),
        ("Please reply by close of business Friday.", "by close of business Friday", "2026-12-04T23:59:59+00:00"),
        ("The figures are due Friday by EOB.", "Friday by EOB", "2026-12-04T23:59:59+00:00"),
        ("请今天下班前给我回复", "今天下班前", "2026-12-02T23:59:59+00:00"),
        ("周五下班之前把报价发过来", "周五下班之前", "2026-12-04T23:59:59+00:00"),
    ],
)
def test_the_end_of_a_working_day_is_a_limit_at_the_end_of_that_day(text: str, form: str, limit: str) -> None:
    found = only(text, WEDNESDAY)
    assert (found.original_form, found.kind, found.granularity) == (form, "deadline", "day")
    assert found.deadline is not None
    assert found.deadline.isoformat() == limit


def test_a_corn_cob_is_no_end_of_day() -> None:
    assert times("They served corn on the cob.", WEDNESDAY) == []


@pytest.mark.parametrize(
    ("text", "form", "day"),
    [
        ("I'd like the membership to restart on next month's 3rd.", "next month's 3rd", "2027-01-03"),
        ("The discount applies from this month's 15th.", "this month's 15th", "2026-12-15"),
        ("We can start the 5th next month.", "the 5th next month", "2027-01-05"),
        ("It was charged on last month's 28th.", "last month's 28th", "2026-11-28"),
    ],
)
def test_a_day_of_a_month_named_around_it_is_that_day(text: str, form: str, day: str) -> None:
    found = only(text, WEDNESDAY)
    assert (found.original_form, found.kind, found.start.date().isoformat()) == (form, "point", day)
