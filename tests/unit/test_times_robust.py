"""Time normalisation never stops the flow on text jionlp mis-parses (found replaying CrossWOZ)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import pytest

from state.core.language import language_mix
from state.time.chinese import parse_chinese
from state.time.extract import normalise_times


def test_a_year_jionlp_cannot_print_as_iso_is_skipped_not_raised() -> None:
    # jionlp reads "100年" as the year 100 and returns '100-01-01 00:00:00', not ISO 8601.
    text = "可以，地址在颐和园路5号北京大学100年纪念讲堂北侧B1层。"
    base = datetime(2024, 12, 12, 9, 9, 30, tzinfo=UTC)
    times = normalise_times(text, base, language_mix(text), timezone="UTC")
    assert all(t.start.year >= 1000 for t in times)


def test_strings_jionlp_cannot_read_are_a_debug_note_not_an_error_traceback(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    root_handlers = list(logging.getLogger().handlers)
    with caplog.at_level(logging.DEBUG):
        found = parse_chinese("我想把套餐改成每月七十三的那个。", datetime(2026, 3, 4, 10))
        parse_chinese("我想把套餐改成每月七十三的那个。", datetime(2026, 3, 4, 10))
    assert [f.form for f in found] == []
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    notes = [r for r in caplog.records if "could not read a time string" in r.getMessage()]
    assert len(notes) == 1  # once per string
    assert "七十三" in notes[0].getMessage()
    assert "Traceback" not in capsys.readouterr().err
    assert logging.getLogger().handlers == root_handlers


@pytest.mark.parametrize(
    ("text", "forms"),
    [
        ("1000 Yuan. Here you are.", []),  # a price, not the year 1000
        ("I'm on extension 4283.", []),
        ("Your code is 0411.", []),
        ("We opened in 1995.", ["in 1995"]),
        ("It was shipped on March 3rd 2027.", ["March 3rd 2027"]),
    ],
)
def test_a_bare_four_digit_number_is_a_date_only_when_it_can_be_a_year(text: str, forms: list[str]) -> None:
    found = normalise_times(text, datetime(2026, 1, 1, tzinfo=UTC), "en")
    assert [t.original_form for t in found] == forms
