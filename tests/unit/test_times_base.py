"""Time normalisation uses the event's own timestamp as the base, in the speaker's zone."""

from __future__ import annotations

from datetime import UTC, datetime

from state.core.language import language_mix, split_sentences
from state.time.extract import normalise_times

BASE = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)  # a Thursday


def _starts(text: str, base: datetime = BASE, tz: str = "UTC") -> dict[str, str]:
    return {t.original_form: t.start.isoformat() for t in normalise_times(text, base, language_mix(text), timezone=tz)}


def test_chinese_colloquial_from_event_ts() -> None:
    assert _starts("明天下午三点开会") == {"明天下午三点": "2026-01-02T15:00:00+00:00"}
    later = datetime(2026, 3, 10, 8, 0, tzinfo=UTC)
    assert _starts("明天下午三点开会", later) == {"明天下午三点": "2026-03-11T15:00:00+00:00"}


def test_chinese_in_speaker_zone() -> None:
    assert _starts("明天下午三点开会", tz="Asia/Shanghai") == {"明天下午三点": "2026-01-02T07:00:00+00:00"}


def test_english_next_tuesday() -> None:
    assert _starts("call me next Tuesday") == {"next Tuesday": "2026-01-06T00:00:00+00:00"}


def test_no_false_positive_on_plain_words() -> None:
    assert _starts("we may go there") == {}


def test_original_form_and_span_kept() -> None:
    (expr,) = normalise_times("会议改到下周二", BASE, "zh")
    assert expr.original_form == "下周二"
    assert "会议改到下周二"[expr.span[0] : expr.span[1]] == "下周二"
    assert expr.granularity == "day"


def test_language_mix_and_sentences() -> None:
    assert language_mix("帮我check一下order") == "mixed"
    assert [s.text for s in split_sentences("你好。在吗？")] == ["你好。", "在吗？"]
