"""Time normalisation never stops the flow on text jionlp mis-parses (found replaying CrossWOZ)."""

from __future__ import annotations

from datetime import UTC, datetime

from state.core.language import language_mix
from state.time.extract import normalise_times


def test_a_year_jionlp_cannot_print_as_iso_is_skipped_not_raised() -> None:
    # jionlp reads "100年" as the year 100 and returns '100-01-01 00:00:00', not ISO 8601.
    text = "可以，地址在颐和园路5号北京大学100年纪念讲堂北侧B1层。"
    base = datetime(2024, 12, 12, 9, 9, 30, tzinfo=UTC)
    times = normalise_times(text, base, language_mix(text), timezone="UTC")
    assert all(t.start.year >= 1000 for t in times)
