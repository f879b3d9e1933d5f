"""Term whitelist, the short-sentence entropy shortcut and the authority lexicon (docs/design.md#terms)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from operators.terms import annotate_terms
from schemas.events import ConversationEvent
from state.normalise.turn import NormaliseConfig, normalise_turn
from state.terms.whitelist import TermLexicon, TermsConfig, load_term_lexicon, match_terms, note_sentence
from state.units.assemble import turn_entropy, units_from_turn

LEX: TermLexicon = load_term_lexicon().get()
CFG = TermsConfig()


def test_bilingual_terms_are_found() -> None:
    assert match_terms("接口超时，查一下 Kafka consumer group 的 offset", LEX) == (
        "接口",
        "超时",
        "Kafka",
        "consumer group",
        "offset",
    )
    assert match_terms("请帮我申请退款，订单号在这", LEX) == ("申请", "退款", "订单号")


def test_short_sentence_with_a_term_skips_entropy_with_0_1() -> None:
    note = note_sentence("TCP三次握手失败。", LEX, CFG)
    assert (note.terms, note.fixed_entropy, note.priority_flag) == (("TCP", "三次握手"), 0.1, False)


def test_long_sentence_with_a_term_is_left_to_the_entropy_stage() -> None:
    note = note_sentence("关于接口文档麻烦补充下错误码说明另外测试账号权限我们已经开通了", LEX, CFG)
    assert note.terms
    assert note.fixed_entropy is None


def test_spec_authority_sentence_is_flagged_raised_and_kept_atomic() -> None:
    note = note_sentence("请务必在5月20日前完成，这是老板亲自交代的", LEX, CFG)
    assert note.authority == ("务必", "老板", "亲自交代")
    assert (note.priority_flag, note.entropy_floor, note.no_merge) == (True, 0.5, True)


def test_short_authority_term_sentence_gets_the_floor_not_the_shortcut() -> None:
    note = note_sentence("CEO说必须修复接口超时。", LEX, CFG)
    assert note.terms == ("接口", "超时")
    assert note.fixed_entropy == 0.5


@pytest.mark.parametrize("text", ["The deadline is Friday, this is a must.", "Our CEO needs it ASAP."])
def test_english_authority(text: str) -> None:
    assert note_sentence(text, LEX, CFG).priority_flag


def _turn(text: str) -> object:
    from datetime import UTC, datetime

    event = ConversationEvent(event_id="e", session_id="s", ts=datetime(2026, 1, 1, tzinfo=UTC), text=text)
    return normalise_turn(event, NormaliseConfig())


def test_unit_carries_terms_priority_and_entropy() -> None:
    turn = annotate_terms(_turn("好的收到。接口超时了。请务必今天修复，这是老板交代的。"), LEX, CFG)  # type: ignore[arg-type]
    (unit,) = units_from_turn(turn)
    assert unit.terms == ("接口", "超时")
    assert unit.priority_flag
    assert unit.entropy == 0.5
    assert [n.priority_flag for n in turn.sentence_notes] == [False, False, True]


def test_turn_of_short_term_sentences_gets_the_shortcut_entropy() -> None:
    turn = annotate_terms(_turn("TCP握手超时。查下DNS。"), LEX, CFG)  # type: ignore[arg-type]
    assert units_from_turn(turn)[0].entropy == 0.1
    assert turn_entropy(()) == 0.5


@given(st.text(max_size=60))
def test_notes_are_in_range(text: str) -> None:
    note = note_sentence(text, LEX, CFG)
    assert note.fixed_entropy is None or 0.0 <= note.fixed_entropy <= 1.0
    assert note.entropy_floor in (0.0, 0.5)
    assert note.no_merge == note.priority_flag
    assert all(t.lower() in text.lower() for t in note.terms)
