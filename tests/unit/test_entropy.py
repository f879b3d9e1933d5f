"""Entropy windows and the unit cut: the documented examples, upstream notes, lookahead, properties."""

from __future__ import annotations

import pickle
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.errors import ConfigurationError
from schemas.events import ConversationEvent
from state.core.embedding import Embedder, normalise_rows
from state.core.language import split_sentences
from state.normalise.segments import SegmentTags, segment_sentences
from state.normalise.turn import NormaliseConfig, Turn, normalise_turn
from state.tagging.lexicon import CLASSES, load_lexicon
from state.tagging.tagger import TagConfig, tag_turn
from state.units.assemble import units_from_turn
from state.units.entropy import (
    EntropyConfig,
    EntropyState,
    advance,
    cut_units,
    flush,
    load_entropy_table,
    needs_lookahead,
    novelty,
    parse_entropy_table,
)

LEX = load_lexicon()
TABLE = load_entropy_table()
TS = datetime(2026, 1, 1, 8, tzinfo=UTC)
EXAMPLE_TEXT = "好的收到，关于接口文档麻烦补充下错误码说明，另外测试账号权限我们已开通，谢谢"
AUTHORITY_TEXT = "请务必在5月20日前完成，这是老板亲自交代的"


def tagged(text: str, *, event_id: str = "e", ts: datetime = TS, role: str = "customer") -> Turn:
    ev = ConversationEvent(event_id=event_id, session_id="s", ts=ts, text=text, speaker_role=role)  # type: ignore[arg-type]
    return tag_turn(None, normalise_turn(ev, NormaliseConfig()), TagConfig(), LEX)[1]


def released(turn: Turn, embedder: Embedder) -> Turn:
    cfg = EntropyConfig(embedder_name=embedder.name)
    state, out = advance(None, turn, embedder.passage([s.text for s in turn.segments]), TABLE, cfg)
    _, rest = flush(state, TABLE, cfg)
    [done] = out + rest
    return done


def test_spec_example_gives_an_atomic_request_and_a_separate_low_entropy_status(static_embedder: Embedder) -> None:
    turn = released(tagged(EXAMPLE_TEXT), static_embedder)
    units = units_from_turn(turn)
    request = next(u for u in units if u.unit_type == "action_request")
    status = next(u for u in units if u.unit_type == "status_update")
    assert "补充下错误码说明" in request.text
    assert "测试账号" not in request.text
    assert request.entropy >= 0.6
    assert not request.merged_from
    assert "测试账号权限我们已开通" in status.text
    assert status.entropy <= 0.3
    assert status.memory_id != request.memory_id
    assert "".join(u.text for u in units).replace("，", "") == EXAMPLE_TEXT.replace("，", "")


def test_authority_sentence_is_kept_atomic_with_priority(static_embedder: Embedder) -> None:
    turn = tagged(AUTHORITY_TEXT)
    noted = replace(turn, sentence_priority=(True,))  # the authority filter flags the sentence
    units = units_from_turn(released(noted, static_embedder))
    authority = next(u for u in units if "老板亲自交代" in u.text)
    assert authority.priority_flag
    assert authority.entropy >= 0.5
    assert not authority.merged_from
    assert all(u.priority_flag and not u.merged_from for u in units)
    assert units[0].times
    assert units[0].times[0].original_form.startswith("5月20日")


def test_authority_clause_survives_even_without_upstream_notes(static_embedder: Embedder) -> None:
    units = units_from_turn(released(tagged(AUTHORITY_TEXT), static_embedder))
    assert any("这是老板亲自交代的" in u.text for u in units)
    assert any("5月20日前完成" in u.text for u in units)


def test_priority_segments_never_merge_even_when_low() -> None:
    turn = replace(tagged("好的。谢谢。收到。"), sentence_priority=(False, True, False))
    cut = cut_units(turn, (0.1, 0.1, 0.1), TABLE)
    assert [(u.first, u.last, u.atomic, u.priority) for u in cut] == [
        (0, 0, False, False),
        (1, 1, True, True),
        (2, 2, False, False),
    ]


def test_whitelisted_short_sentence_override_skips_entropy_and_lookahead(static_embedder: Embedder) -> None:
    turn = replace(tagged("TCP三次握手超时了"), sentence_entropy_override=(0.1,))
    assert not needs_lookahead(turn)
    state, out = advance(None, turn, static_embedder.passage(["TCP三次握手超时了"]), TABLE, EntropyConfig())
    assert state.held is None
    assert out[0].segment_entropy == (0.1,)


def test_low_entropy_runs_merge_and_record_merged_from(static_embedder: Embedder) -> None:
    units = units_from_turn(released(tagged("好的。谢谢。收到。"), static_embedder))
    assert len(units) == 1
    assert units[0].merged_from == ("好的。", "谢谢。", "收到。")
    assert units[0].unit_type == "smalltalk"


def test_by_default_no_turn_waits_for_the_next_one(static_embedder: Embedder) -> None:
    first = tagged("订单号是12345", event_id="a")
    state, out = advance(None, first, static_embedder.passage(["订单号是12345"]), TABLE, EntropyConfig())
    assert [t.event.event_id for t in out] == ["a"]  # released at once, cut alone
    assert state.held is None
    assert out[0].unit_cut
    assert len(out[0].segment_entropy) == len(first.segments)


def test_lookahead_holds_until_the_next_turn(static_embedder: Embedder) -> None:
    cfg = EntropyConfig(lookahead=timedelta(seconds=10))
    first = tagged("订单号是12345", event_id="a")
    second = tagged("麻烦帮我取消这个订单", event_id="b", ts=TS + timedelta(seconds=3))
    state, out = advance(None, first, static_embedder.passage(["订单号是12345"]), TABLE, cfg)
    assert out == []
    assert state.held is not None
    assert state.held.event.event_id == "a"
    state, out = advance(state, second, static_embedder.passage(["麻烦帮我取消这个订单"]), TABLE, cfg)
    assert [t.event.event_id for t in out] == ["a"]
    assert state.held is not None
    assert state.held.event.event_id == "b"
    state, out = flush(state, TABLE, cfg)
    assert [t.event.event_id for t in out] == ["b"]
    assert state.held is None
    assert flush(state, TABLE, cfg)[1] == []


def test_a_next_turn_beyond_the_window_is_not_a_neighbour(static_embedder: Embedder) -> None:
    cfg = EntropyConfig(lookahead=timedelta(seconds=10))
    first = tagged("订单号是12345", event_id="a")
    vec = static_embedder.passage(["订单号是12345"])
    held, _ = advance(None, first, vec, TABLE, cfg)
    alone = flush(held, TABLE, cfg)[1][0]
    late = tagged("完全无关的另一件事，比如天气", event_id="b", ts=TS + timedelta(minutes=5))
    _, out = advance(held, late, static_embedder.passage([s.text for s in late.segments]), TABLE, cfg)
    assert out[0].segment_entropy == alone.segment_entropy


def test_novelty_is_the_mean_distance_to_neighbours() -> None:
    same = normalise_rows(np.ones((3, 4)))
    assert novelty(same, None, None).tolist() == pytest.approx([0.0, 0.0, 0.0], abs=1e-6)
    assert np.isnan(novelty(same[:1], None, None)[0])
    ortho = np.eye(2, dtype=np.float32)
    assert novelty(ortho[:1], ortho[1], None).tolist() == pytest.approx([1.0])
    assert len(novelty(np.zeros((0, 4), dtype=np.float32), None, None)) == 0


def test_entropy_table_errors() -> None:
    with pytest.raises(ConfigurationError, match="mapping"):
        parse_entropy_table([1, 2])
    with pytest.raises(ConfigurationError):
        parse_entropy_table({"calibration": {"default": {"lo": 0.1, "hi": 0.5}}})
    good = {
        "calibration": {"x": {"lo": 0.1, "hi": 0.5}},
        "salience_weight": 0.5,
        "novelty_weight": 0.5,
        "atomic_threshold": 0.4,
        "salience": dict.fromkeys(CLASSES, 0.5),
    }
    with pytest.raises(ConfigurationError, match="default"):
        parse_entropy_table(good)
    good["calibration"] = {"default": {"lo": 0.5, "hi": 0.5}}
    with pytest.raises(ConfigurationError, match="lo < hi"):
        parse_entropy_table(good)


def test_entropy_table_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot read"):
        load_entropy_table(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("calibration: [unclosed", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="YAML"):
        load_entropy_table(bad)


def _segment_tags(label: str, stress: float) -> SegmentTags:
    intent = tuple(0.9 if c == label else 0.02 for c in CLASSES)
    return SegmentTags(intent=intent, label=label, stress=stress, certainty=0.5, urgency=0.1, cooperation=0.5)


@st.composite
def tagged_turns(draw: st.DrawFn) -> tuple[Turn, np.ndarray]:
    n = draw(st.integers(min_value=1, max_value=6))
    text = "。".join(f"第{i}句话" for i in range(n)) + "。"
    ev = ConversationEvent(event_id="h", session_id="s", ts=TS, text=text)
    turn = Turn(event=ev, lang="zh", text=text, sentences=split_sentences(text), times=())
    segments = segment_sentences(turn.sentences)
    tags = tuple(_segment_tags(draw(st.sampled_from(CLASSES)), draw(st.floats(0, 1))) for _ in segments)
    priority = tuple(draw(st.booleans()) for _ in turn.sentences)
    override = tuple(draw(st.none() | st.floats(0, 1)) for _ in turn.sentences)
    vectors = np.array(
        draw(
            st.lists(st.lists(st.floats(-1, 1), min_size=8, max_size=8), min_size=len(segments), max_size=len(segments))
        ),
        dtype=np.float32,
    )
    turn = replace(turn, segments=segments, tags=tags, sentence_priority=priority, sentence_entropy_override=override)
    return turn, normalise_rows(vectors)


@settings(max_examples=60, deadline=None)
@given(tagged_turns(), st.booleans())
def test_entropy_in_range_cut_covers_every_segment_and_state_pickles(case: tuple[Turn, np.ndarray], hold: bool) -> None:
    turn, vectors = case
    state, out = advance(None, turn, vectors, TABLE, EntropyConfig())
    restored = pickle.loads(pickle.dumps(state))
    assert isinstance(restored, EntropyState)
    assert (restored.held is None) == (state.held is None)
    _, rest = flush(restored, TABLE, EntropyConfig())
    [done] = out + rest
    assert len(done.segment_entropy) == len(done.segments)
    assert all(0.0 <= e <= 1.0 for e in done.segment_entropy)
    covered = [i for u in done.unit_cut for i in range(u.first, u.last + 1)]
    assert covered == list(range(len(done.segments)))
    for u in done.unit_cut:
        if u.priority:
            assert u.atomic
            assert u.first == u.last
    for i, seg in enumerate(done.segments):
        if done.sentence_priority[seg.sentence]:
            assert done.segment_entropy[i] >= TABLE.priority_floor
    units = units_from_turn(done)
    assert [u.unit_index for u in units] == list(range(len(done.unit_cut)))


def test_head_emotion_is_mixed_per_unit_and_apologies_still_invert(static_embedder: Embedder) -> None:
    from state.units.assemble import blend_unit_emotion, head_texts

    turn = released(tagged("非常抱歉，这是我们的问题，我们马上处理", role="agent"), static_embedder)
    texts = head_texts(turn)
    assert texts == [u.embedding_text for u in units_from_turn(turn)]  # the heads read the stored vector
    head_rows = [[0.9, 0.2, 0.8, 0.6] for _ in texts]
    mixed = blend_unit_emotion(turn, head_rows, 0.5, 0.5)
    units = units_from_turn(mixed)
    apologetic = [i for i, u in enumerate(turn.unit_cut) if any(t.apology for t in turn.tags[u.first : u.last + 1])]
    assert apologetic
    for i, unit in enumerate(units):
        head_stress = 0.1 if i in apologetic else 0.9  # 0.9 > 0.5 in an agent's apology → 1 − 0.9
        lexicon_stress = max(t.stress for t in turn.tags[turn.unit_cut[i].first : turn.unit_cut[i].last + 1])
        assert unit.emotion.stress == pytest.approx(0.5 * lexicon_stress + 0.5 * head_stress)
    assert blend_unit_emotion(turn, head_rows, 0.0, 0.5).unit_emotion[0][0] == pytest.approx(
        units_from_turn(turn)[0].emotion.stress
    )
