"""Clause segments: long Chinese sentences cut at commas, English at discourse markers, offsets kept."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from state.core.language import split_sentences
from state.normalise.segments import segment_sentences


def test_short_sentences_stay_whole() -> None:
    assert [s.text for s in segment_sentences(split_sentences("好的，谢谢"))] == ["好的，谢谢"]


def test_english_cuts_only_long_sentences_at_discourse_markers() -> None:
    text = "The invoice for March has been sent to your mailbox already, but the April one is still missing"
    assert [s.text for s in segment_sentences(split_sentences(text))] == [
        "The invoice for March has been sent to your mailbox already,",
        "but the April one is still missing",
    ]
    assert len(segment_sentences(split_sentences("Well, yes, I think so."))) == 1


def test_punctuation_alone_joins_the_previous_segment() -> None:
    segs = segment_sentences(split_sentences("我们下周二能给到初版……不过测试环境还在搭。"))
    assert [s.text for s in segs] == ["我们下周二能给到初版……", "不过测试环境还在搭。"]


def test_tiny_pieces_join_a_neighbour() -> None:
    segs = segment_sentences(split_sentences("嗯，关于这个接口文档的错误码说明还需要再补充一下，好"))
    assert [s.text for s in segs] == ["嗯，关于这个接口文档的错误码说明还需要再补充一下，好"]


@given(st.text(alphabet="好的收到谢谢，。！？,.abc 补充说明另外", max_size=80))
def test_segments_map_back_to_the_text_in_order(text: str) -> None:
    sentences = split_sentences(text)
    segments = segment_sentences(sentences, source=text)
    last = 0
    for seg in segments:
        assert text[seg.start : seg.end] == seg.text
        assert seg.start >= last
        last = seg.end
