"""Temporal validity: types, windows and evaluable cycle patterns (docs/design.md#validity)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from schemas.errors import CyclePatternError
from schemas.memory import TimeExpression, Validity
from state.core.datafiles import packaged, read_data
from state.time.extract import normalise_times
from state.validity.rules import (
    PromotionCalendar,
    ValidityLexicon,
    assign_validity,
    cycle_active,
    parse_calendar,
    parse_cycle,
    parse_lexicon,
    valid_at,
)

TS = datetime(2026, 11, 2, 1, 0, tzinfo=UTC)  # Monday 09:00 in Shanghai


@pytest.fixture(scope="module")
def lex() -> ValidityLexicon:
    return parse_lexicon(read_data(packaged("validity_lexicon.yaml")))


@pytest.fixture(scope="module")
def cal() -> PromotionCalendar:
    return parse_calendar(read_data(packaged("promotion_calendar.yaml")))


def _times(text: str) -> tuple[TimeExpression, ...]:
    return normalise_times(text, TS, "zh", timezone="Asia/Shanghai")


@pytest.mark.parametrize(
    ("text", "kind", "cycle"),
    [
        ("退货政策是七天无理由", "permanent", None),
        ("我的订单号是DD1", "permanent", None),
        ("每周一上午十点上新", "periodic", "every_monday"),
        ("星期六都不发货", "periodic", "every_saturday"),
        ("每月15号出账单", "periodic", "monthly_day_15"),
        ("工作日九点到六点有人工客服", "periodic", "weekdays"),
        ("每天晚上十点盘点", "periodic", "daily"),
        ("We restock every Friday", "periodic", "every_friday"),
        ("Support is closed on weekends", "periodic", "weekends"),
        ("双11期间满300减50", "periodic", "during_promotion:double11"),
        ("大促期间发货时效是72小时", "periodic", "during_promotion"),
        ("东莞仓目前停电", "transient", None),
        ("这款现在缺货", "transient", None),
        ("The warehouse is down right now", "transient", None),
    ],
)
def test_types_and_cycles(
    lex: ValidityLexicon, cal: PromotionCalendar, text: str, kind: str, cycle: str | None
) -> None:
    v = assign_validity(text, _times(text), TS, lex, cal)
    assert (v.validity_type, v.cycle_pattern) == (kind, cycle)
    assert v.last_verified == TS


def test_transient_fact_expires_after_its_ttl(lex: ValidityLexicon, cal: PromotionCalendar) -> None:
    v = assign_validity("这款现在缺货", (), TS, lex, cal)
    assert v.effective_from == TS
    assert v.effective_to == TS + timedelta(hours=6)
    assert valid_at(v, TS + timedelta(hours=5), "Asia/Shanghai", cal)
    assert not valid_at(v, TS + timedelta(hours=7), "Asia/Shanghai", cal)


def test_end_cue_sets_effective_to(lex: ValidityLexicon, cal: PromotionCalendar) -> None:
    text = "这张优惠券11月30日前有效"
    v = assign_validity(text, _times(text), TS, lex, cal)
    assert v.effective_to == datetime(2026, 11, 30, 15, 59, 59, tzinfo=UTC)  # end of 11-30 in Shanghai
    assert v.effective_from == TS


@pytest.mark.parametrize(
    "text", ["The new return rule applies from December 1", "Starting next Monday, returns need a receipt"]
)
def test_start_cue_sets_effective_from(lex: ValidityLexicon, cal: PromotionCalendar, text: str) -> None:
    # (state/time/extract.py finds no time in "12月1日起生效"; the Chinese start cue 起 is covered by the lexicon.)
    v = assign_validity(text, normalise_times(text, TS, "en", timezone="Asia/Shanghai"), TS, lex, cal)
    assert v.effective_from is not None
    assert v.effective_from > TS
    assert v.effective_to is None


def test_range_sets_both_ends(lex: ValidityLexicon, cal: PromotionCalendar) -> None:
    text = "满减活动从11月1日到11月11日"
    v = assign_validity(text, _times(text), TS, lex, cal)
    assert v.effective_from is not None
    assert v.effective_to is not None
    assert v.effective_from < TS < v.effective_to < TS + timedelta(days=10)


def test_weekday_cycle_is_read_in_the_local_zone(cal: PromotionCalendar) -> None:
    sunday_utc_monday_shanghai = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)
    assert cycle_active("every_monday", sunday_utc_monday_shanghai, "Asia/Shanghai", cal)
    assert not cycle_active("every_monday", sunday_utc_monday_shanghai, "UTC", cal)
    assert cycle_active("weekends", sunday_utc_monday_shanghai, "UTC", cal)
    assert cycle_active("weekdays", TS, "Asia/Shanghai", cal)
    assert cycle_active("daily", TS, "UTC", cal)
    assert cycle_active("monthly_day_2", TS, "Asia/Shanghai", cal)


def test_promotions_from_the_calendar(cal: PromotionCalendar) -> None:
    in_double11 = datetime(2026, 11, 5, 4, tzinfo=UTC)
    assert cycle_active("during_promotion", in_double11, "UTC", cal)
    assert cycle_active("during_promotion:double11", in_double11, "UTC", cal)
    assert not cycle_active("during_promotion:618", in_double11, "UTC", cal)
    assert not cycle_active("during_promotion", datetime(2026, 8, 1, tzinfo=UTC), "UTC", cal)
    v = Validity(validity_type="periodic", cycle_pattern="during_promotion:double11", effective_from=TS)
    assert valid_at(v, in_double11, "UTC", cal)
    assert not valid_at(v, datetime(2026, 12, 25, tzinfo=UTC), "UTC", cal)


def test_calendar_one_off_and_new_year_wrap() -> None:
    cal = parse_calendar(
        {
            "timezone": "UTC",
            "promotions": [
                {"id": "ny", "yearly": {"start": "12-28", "end": "01-03"}},
                {"id": "launch", "start": "2026-03-01", "end": "2026-03-05"},
            ],
        }
    )
    assert cal.active(datetime(2027, 1, 2, tzinfo=UTC), "ny")
    assert not cal.active(datetime(2027, 1, 4, tzinfo=UTC), "ny")
    assert cal.active(datetime(2026, 3, 3, tzinfo=UTC), "launch")
    assert not cal.active(datetime(2027, 3, 3, tzinfo=UTC), "launch")


def test_calendar_errors() -> None:
    with pytest.raises(ValueError, match="needs `yearly`"):
        parse_calendar({"promotions": [{"id": "x"}]})
    with pytest.raises(ValueError, match="day is out of range"):
        parse_calendar({"promotions": [{"id": "x", "yearly": {"start": "02-30", "end": "03-01"}}]})


def test_unknown_cycle_pattern_raises_and_is_not_applicable(cal: PromotionCalendar) -> None:
    with pytest.raises(CyclePatternError, match="every_blue_moon"):
        parse_cycle("every_blue_moon")
    v = Validity(validity_type="periodic", cycle_pattern="every_blue_moon")
    assert not valid_at(v, TS, "UTC", cal)


def test_lexicon_default_type_is_checked() -> None:
    with pytest.raises(ValueError, match="default_type"):
        parse_lexicon({"default_type": "forever"})


def test_window_bounds(cal: PromotionCalendar) -> None:
    v = Validity(effective_from=TS, effective_to=TS + timedelta(days=1))
    assert not valid_at(v, TS - timedelta(seconds=1), "UTC", cal)
    assert valid_at(v, TS + timedelta(hours=1), "UTC", cal)
