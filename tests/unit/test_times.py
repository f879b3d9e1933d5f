"""Time normalisation (docs/design.md#time): the gold set, colloquial forms, zones, jionlp's ValueError."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.time_gold import dateparser_only, judge, load_gold, ours
from state.core.language import language_mix
from state.time import chinese as times_zh
from state.time.chinese import chinese_number, parse_chinese, parse_point
from state.time.extract import normalise_times

BASE = datetime(2026, 3, 4, 10, 15, tzinfo=UTC)  # a Wednesday


def starts(text: str, base: datetime = BASE, tz: str = "UTC") -> list[tuple[str, str]]:
    """(form, instant) per expression: a deadline's limit, otherwise its start."""
    return [
        (t.original_form, (t.deadline or t.start).isoformat())
        for t in normalise_times(text, base, language_mix(text), timezone=tz)
    ]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_gold_set_is_at_least_95_percent_right_per_language(lang: str) -> None:
    items = [i for i in load_gold() if i.lang == lang]
    assert len(items) >= (150 if lang == "zh" else 80)
    right = sum(judge(i, ours(i))[0] for i in items)
    assert right / len(items) >= 0.95


def test_dateparser_alone_misses_most_chinese_colloquial_forms() -> None:
    items = [i for i in load_gold() if i.lang == "zh"][:40]
    assert sum(judge(i, dateparser_only(i))[0] for i in items) < len(items) / 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("明天下午三点开会", [("明天下午三点", "2026-03-05T15:00:00+00:00")]),
        ("下周二交付", [("下周二", "2026-03-10T00:00:00+00:00")]),
        ("上个月15号的账单", [("上个月15号", "2026-02-15T00:00:00+00:00")]),
        ("三天后再说", [("三天后", "2026-03-07T00:00:00+00:00")]),
        ("后天上午十点见", [("后天上午十点", "2026-03-06T10:00:00+00:00")]),
        ("下下周三晚上8点上线", [("下下周三晚上8点", "2026-03-18T20:00:00+00:00")]),
        ("月底前完成", [("月底前", "2026-03-31T23:59:59+00:00")]),
        ("这周末去爬山", [("这周末", "2026-03-07T00:00:00+00:00")]),
        ("半小时后回电话", [("半小时后", "2026-03-04T10:45:00+00:00")]),
        ("二十分钟后到", [("二十分钟后", "2026-03-04T10:35:00+00:00")]),
        ("see you tomorrow at 3pm", [("tomorrow at 3pm", "2026-03-05T15:00:00+00:00")]),
        ("the demo is next Tuesday", [("next Tuesday", "2026-03-10T00:00:00+00:00")]),
        ("I sent it two days ago and nobody replied", [("two days ago", "2026-03-02T00:00:00+00:00")]),
        ("due at the end of the month", [("the end of the month", "2026-03-31T00:00:00+00:00")]),
        ("明天3pm开会", [("明天3pm", "2026-03-05T15:00:00+00:00")]),
        ("客户说 tomorrow at 3pm 可以 demo", [("tomorrow at 3pm", "2026-03-05T15:00:00+00:00")]),
    ],
)
def test_colloquial_expressions(text: str, expected: list[tuple[str, str]]) -> None:
    assert starts(text) == expected


def test_the_event_time_is_the_base_not_the_clock() -> None:
    later = BASE + timedelta(days=10)
    assert starts("明天", later) == [("明天", "2026-03-15T00:00:00+00:00")]


def test_wall_clock_words_are_read_in_the_speakers_zone() -> None:
    local_morning = datetime(2026, 3, 4, 2, 15, tzinfo=UTC)  # 10:15 in Shanghai
    assert starts("明天下午三点开会", local_morning, "Asia/Shanghai") == [("明天下午三点", "2026-03-05T07:00:00+00:00")]


def test_asr_text_without_punctuation() -> None:
    assert starts("那个我们明天下午三点开个会吧然后月底之前把钱退回来") == [
        ("明天下午三点", "2026-03-05T15:00:00+00:00"),
        ("月底之前", "2026-03-31T23:59:59+00:00"),
    ]


def test_parse_point_returns_none_where_jionlp_raises_value_error() -> None:
    assert parse_point("abc", datetime(2026, 3, 4)) is None  # jionlp.parse_time raises ValueError here


def test_a_value_error_from_the_extractor_only_drops_the_failing_clause(monkeypatch: pytest.MonkeyPatch) -> None:
    jionlp = times_zh._jionlp()
    real = jionlp.ner.extract_time

    def picky(text: str, **kwargs: Any) -> Any:
        if "坏" in text:
            raise ValueError("## exception string")
        return real(text, **kwargs)

    monkeypatch.setattr(jionlp.ner, "extract_time", picky)
    found = parse_chinese("坏数据，明天下午三点开会", datetime(2026, 3, 4, 10, 15))
    assert [(f.form, f.span, f.start.isoformat()) for f in found] == [("明天下午三点", (4, 10), "2026-03-05T15:00:00")]


def test_chinese_numbers() -> None:
    assert [chinese_number(t) for t in ("三", "十五", "二十", "两", "一百零五", "半", "3")] == [
        3,
        15,
        20,
        2,
        105,
        0.5,
        3,
    ]
    with pytest.raises(ValueError, match="not a Chinese numeral"):
        chinese_number("三x")


def test_impossible_month_end_is_not_a_time() -> None:
    assert starts("十三月底前") == []


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="明天后下周二三点半小时月底末初这个的 tomorrow at 3pm next Tuesday ago 12345，。", max_size=40))
def test_spans_point_at_the_original_form_and_never_raise(text: str) -> None:
    for expr in normalise_times(text, BASE, language_mix(text)):
        assert text[expr.span[0] : expr.span[1]] == expr.original_form
        assert expr.start <= expr.end
        assert expr.start.tzinfo is not None
