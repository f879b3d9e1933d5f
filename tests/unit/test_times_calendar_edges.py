"""Time expressions that leave the calendar are no time at all: the normaliser never raises."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from state.time.extract import normalise_times

TEXTS = [
    "in 9999 years",
    "9999年后",
    "9999年内",
    "一万年以后",
    "within 9999 years",
    "in 99999999 days",
    "持续9999年",
    "9999年12月31日之前",
    "the year 10000",
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("year", [1900, 2026, 2999])
def test_far_times_are_skipped_never_raised(text: str, year: int) -> None:
    for expr in normalise_times(text, datetime(year, 12, 31, 23, tzinfo=UTC), "mixed", timezone="Asia/Shanghai"):
        assert 2 <= expr.start.year <= 9997
        assert expr.start <= expr.end


def test_a_near_time_beside_a_far_one_is_kept() -> None:
    found = normalise_times("in 9999 years，明天下午三点", datetime(2026, 3, 1, tzinfo=UTC), "mixed", timezone="UTC")
    assert [e.original_form for e in found] == ["明天下午三点"]
