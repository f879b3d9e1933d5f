"""An hour or minute offset (in 3 hours, 三小时后) is elapsed time: counted on UTC across a clock change."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from state.time.extract import normalise_times

SPRING = datetime(2029, 3, 11, 5, 30, tzinfo=UTC)  # 00:30 EST in New York; clocks go 02:00 → 03:00
AUTUMN = datetime(2029, 11, 4, 5, 15, tzinfo=UTC)  # 01:15 EDT; clocks go 02:00 EDT → 01:00 EST


@pytest.mark.parametrize(
    ("text", "mix", "minutes"),
    [
        ("in 3 hours", "en", 180),
        ("3 hours from now", "en", 180),
        ("90 minutes later", "en", 90),
        ("in an hour and a half", "en", 90),
        ("三小时后", "zh", 180),
        ("两个半小时后", "zh", 150),
        ("三小时以后开始", "zh", 180),
    ],
)
@pytest.mark.parametrize("base", [SPRING, AUTUMN])
def test_offsets_add_elapsed_time_across_a_clock_change(text: str, mix: str, minutes: int, base: datetime) -> None:
    (expr,) = normalise_times(text, base, mix, timezone="America/New_York")  # type: ignore[arg-type]
    assert expr.start == base + timedelta(minutes=minutes)
    assert expr.start <= expr.end < expr.start + timedelta(minutes=1)


def test_an_offset_back_is_elapsed_too() -> None:
    (expr,) = normalise_times(
        "3 hours ago", datetime(2029, 3, 11, 8, 30, tzinfo=UTC), "en", timezone="America/New_York"
    )
    assert expr.start == datetime(2029, 3, 11, 5, 30, tzinfo=UTC)


def test_a_minute_said_twice_keeps_its_second_reading() -> None:
    (expr,) = normalise_times("in 45 minutes", AUTUMN, "en", timezone="America/New_York")
    assert expr.start == AUTUMN + timedelta(minutes=45)  # 01:00 EST, the second 01:00 that night
    assert expr.end == expr.start + timedelta(seconds=59)


def test_day_offsets_keep_the_wall_clock() -> None:
    (expr,) = normalise_times("in 2 days", datetime(2029, 3, 10, 15, tzinfo=UTC), "en", timezone="America/New_York")
    assert expr.start == datetime(2029, 3, 12, 4, tzinfo=UTC)  # midnight EDT of the 12th
