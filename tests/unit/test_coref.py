"""Coreference with dynamic windows (docs/design.md#coreference): its examples, the window, binding, state."""

from __future__ import annotations

import pickle
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.memory import CorefAnchor
from state.core.language import split_sentences
from state.coref.anaphora import has_backref_cue
from state.coref.lexicon import CorefLexicon, load_coref_lexicon
from state.coref.resolver import CorefConfig, CorefState, CorefTurn, Mention, end_session, resolve_turn

TS = datetime(2026, 3, 4, 10, 15, tzinfo=UTC)
LEX: CorefLexicon = load_coref_lexicon().get()
CFG = CorefConfig()


def say(state: CorefState | None, text: str, n: int = 0) -> tuple[CorefState, tuple[CorefAnchor, ...]]:
    return resolve_turn(state, CorefTurn(f"t{n}", TS + timedelta(seconds=n), split_sentences(text)), CFG, LEX)


def dialogue(*texts: str) -> tuple[CorefState, tuple[CorefAnchor, ...]]:
    state: CorefState | None = None
    anchors: tuple[CorefAnchor, ...] = ()
    for n, text in enumerate(texts):
        state, anchors = say(state, text, n)
    assert state is not None
    return state, anchors


def test_spec_dictionary_entity_is_the_core_referent_not_the_generic_noun() -> None:
    _, anchors = say(None, "请在测试环境验证后再同步到生产环境。")
    assert [(a.core_referent, a.resolved_entity, a.entity_type) for a in anchors] == [
        ("测试环境", "测试环境", "infrastructure"),
        ("生产环境", "生产环境", "infrastructure"),
    ]
    first = anchors[0]
    assert first.context_window == "请在测试环境验证后再同步到生产环境。"
    assert first.antecedent_turn_id == "t0"
    assert first.context_window[first.antecedent_span[0] : first.antecedent_span[1]] == "测试环境"


def test_spec_anaphor_anchor_is_explicit_and_traceable() -> None:
    _, anchors = dialogue("首页性能优化模块下周上线。", "这个功能上线后他们反馈很卡，特别是首页加载。")
    anchor = anchors[0]
    assert (anchor.mention, anchor.core_referent, anchor.resolved_entity) == ("这个功能", "功能", "首页性能优化模块")
    assert (anchor.antecedent_turn_id, anchor.context_window) == ("t0", "首页性能优化模块下周上线。")
    assert anchor.antecedent_span == (0, 8)
    assert anchor.mention_span == (0, 4)
    assert 0 < anchor.confidence <= 1


def test_spec_question_with_ask_verb_goes_to_review_and_the_questioner_is_not_guessed() -> None:
    _, anchors = dialogue("首页性能优化模块下周上线。", "他们问这个功能能不能下周上线吗？")
    by_mention = {a.mention: a for a in anchors}
    assert by_mention["他们"].resolved_entity is None
    assert by_mention["他们"].needs_human_review
    assert by_mention["这个功能"].needs_human_review
    assert by_mention["这个功能"].resolved_entity == "首页性能优化模块"  # the object of the question is still anchored


@pytest.mark.parametrize("text", ["我想咨询一下这个功能什么时候上线呢？", "你确认它已经上线了吗？"])
def test_consult_and_confirm_questions_also_go_to_review(text: str) -> None:
    _, anchors = dialogue("首页性能优化模块下周上线。", text)
    assert anchors
    assert all(a.needs_human_review for a in anchors)


def test_polite_qing_wen_is_not_the_asking_verb() -> None:
    _, anchors = dialogue("推荐您去讲礼驴肉馆用餐。", "请问这家餐馆的地址在哪？")
    assert (anchors[0].resolved_entity, anchors[0].needs_human_review) == ("讲礼驴肉馆", False)


def _filler(n: int) -> list[str]:
    """Turns that each name one entity: 订单A000001, 订单A000002 …"""
    return [f"订单号A{i:06d}已创建。" for i in range(n)]


def test_spec_back_reference_cue_widens_the_window_from_50_to_80() -> None:
    # the restaurant is named, then 60 other entities: 61 mentions back, outside 50 but inside 80
    turns = ["推荐您去讲礼驴肉馆用餐。", *_filler(60)]
    state, _ = dialogue(*turns)
    _, plain = say(state, "这家餐馆的地址在哪？", 99)
    _, cued = say(state, "刚才那家餐馆的地址在哪？", 99)
    assert plain[0].resolved_entity is None
    assert cued[0].resolved_entity == "讲礼驴肉馆"
    assert cued[0].antecedent_turn_id == "t0"


@pytest.mark.parametrize(
    "text", ["上一轮说的那个", "刚才提到的", "上次那个", "之前说的", "as I said earlier", "like last time"]
)
def test_back_reference_cues(text: str) -> None:
    assert has_backref_cue(text, LEX)


def test_weak_reference_binds_by_its_descriptor() -> None:
    state, anchors = dialogue("我们有两款：蓝色的SKU-A12盒子和红色的SKU-B7盒子。", "那个蓝色的盒子还有货吗？")
    assert (anchors[0].kind, anchors[0].resolved_entity) == ("weak", "SKU-A12")
    _, anchors = say(state, "红色的那个呢？", 5)
    assert (anchors[0].kind, anchors[0].resolved_entity) == ("weak", "SKU-B7")


def test_weak_reference_in_english() -> None:
    _, anchors = dialogue("We have two cases: the blue SKU-A12 and the red SKU-B7.", "I'll take the red one.")
    assert (anchors[0].mention, anchors[0].resolved_entity) == ("the red one", "SKU-B7")


def test_english_pronoun_and_definite_noun() -> None:
    state, anchors = dialogue("The Grand Hyatt Hotel is fully booked.", "Can you check the hotel for Friday?")
    assert (anchors[0].mention, anchors[0].resolved_entity, anchors[0].entity_type) == (
        "the hotel",
        "Grand Hyatt Hotel",
        "hotel",
    )
    _, anchors = say(state, "Is it close to the airport?", 3)
    assert anchors[0].resolved_entity == "Grand Hyatt Hotel"


def test_type_of_the_anaphor_picks_among_recent_entities() -> None:
    _, anchors = dialogue(
        "推荐您去北京京仪大酒店住宿。", "周边的景点有颐和园。", "推荐您去讲礼驴肉馆用餐。", "那家酒店的电话是多少？"
    )
    assert anchors[0].resolved_entity == "北京京仪大酒店"


def test_zero_anaphor_asks_about_the_entity_in_focus() -> None:
    _, anchors = dialogue("推荐您去颐和园游玩。", "门票多少钱？")
    assert (anchors[0].kind, anchors[0].resolved_entity) == ("zero", "颐和园")


@pytest.mark.parametrize(
    "ask",
    ["我打算换一家评分4.5分以上的酒店住，可以推荐一家吗？", "请再帮我找一家评分4.5分以上，价格200元的酒店。"],
)
def test_contrast_resolves_to_the_entity_it_goes_beyond(ask: str) -> None:
    _, anchors = dialogue("推荐您去北京京仪大酒店住宿。", "推荐您去讲礼驴肉馆用餐。", ask)
    contrast = next(a for a in anchors if a.kind == "contrast")
    assert (contrast.resolved_entity, contrast.antecedent_turn_id) == ("北京京仪大酒店", "t0")


def test_another_in_english_is_a_contrast() -> None:
    _, anchors = dialogue("I recommend the Grand Hyatt Hotel.", "Can you find another hotel near the park?")
    assert [(a.mention, a.kind, a.resolved_entity) for a in anchors if a.kind == "contrast"] == [
        ("another hotel", "contrast", "Grand Hyatt Hotel")
    ]


def test_background_name_regains_focus_when_recommended() -> None:
    _, anchors = dialogue(
        "周边的酒店有北京首都宾馆, 北京贵都大酒店。",
        "抱歉，周边酒店没有经济型的，推荐您去豪华型的北京天伦王朝酒店住宿。",
        "这个酒店的地址在哪啊？",
    )
    assert anchors[0].resolved_entity == "北京天伦王朝酒店"


def test_a_place_is_typed_by_what_it_is_recommended_for() -> None:
    _, anchors = dialogue("推荐您去钓鱼台国宾馆尝尝，这里人均消费很高。", "这个餐馆的地址在哪？")
    assert anchors[0].resolved_entity == "钓鱼台国宾馆"


def test_unresolvable_anaphor_keeps_the_guess_empty() -> None:
    _, anchors = say(None, "这个接口又超时了。")
    assert (anchors[0].mention, anchors[0].resolved_entity, anchors[0].confidence) == ("这个接口", None, 0.0)
    assert anchors[0].antecedent_turn_id is None


def test_session_end_starts_a_fresh_window_for_later_turns_only() -> None:
    state, _ = dialogue("推荐您去讲礼驴肉馆用餐。")
    ended = end_session(state, TS + timedelta(minutes=1))
    assert end_session(None, TS) is None
    _, late = resolve_turn(
        ended, CorefTurn("late", TS + timedelta(seconds=30), split_sentences("这家餐馆在哪？")), CFG, LEX
    )
    _, fresh = resolve_turn(
        ended, CorefTurn("new", TS + timedelta(minutes=5), split_sentences("这家餐馆在哪？")), CFG, LEX
    )
    assert late[0].resolved_entity == "讲礼驴肉馆"
    assert fresh[0].resolved_entity is None


_SENTENCES = [
    "推荐您去讲礼驴肉馆用餐。",
    "这家餐馆的地址在哪？",
    "请在测试环境验证后再同步到生产环境。",
    "订单号A123456已发货。",
    "刚才那个订单呢？",
    "它的物流到哪了？",
    "蓝色的SKU-A12盒子有货。",
    "那个蓝色的盒子呢？",
    "上次说的那个接口还超时吗？",
    "The Grand Hyatt Hotel is booked.",
    "Is it near the park?",
    "I'll take the blue one.",
    "好的谢谢。",
    "电话是多少？",
]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_SENTENCES), min_size=1, max_size=4), min_size=1, max_size=40))
def test_window_never_exceeds_its_size_and_referents_come_from_it(turns: list[list[str]]) -> None:
    state: CorefState | None = None
    for n, sentences in enumerate(turns):
        text = "".join(sentences)
        size = CFG.wide_window if has_backref_cue(text, LEX) else CFG.window
        before = state.mentions[-size:] if state else ()
        state, anchors = say(state, text, n)
        assert len(state.mentions) <= CFG.wide_window
        visible = {m.entity for m in before} | {a.resolved_entity for a in anchors if a.kind == "entity"}
        for anchor in anchors:
            if anchor.resolved_entity is not None:
                assert anchor.resolved_entity in visible
                assert anchor.antecedent_turn_id is not None
                assert anchor.context_window is not None
                assert anchor.antecedent_span is not None


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(_SENTENCES), min_size=1, max_size=12))
def test_state_round_trips_through_pickle_and_resumes_identically(texts: list[str]) -> None:
    state, _ = dialogue(*texts)
    restored = pickle.loads(pickle.dumps(state))
    assert restored == state
    assert say(restored, "这家餐馆的地址在哪？", 99) == say(state, "这家餐馆的地址在哪？", 99)


def test_mentions_are_plain_records() -> None:
    state, _ = dialogue("推荐您去讲礼驴肉馆用餐。")
    assert isinstance(state.mentions[0], Mention)
    assert state.mentions[0].sentence == "推荐您去讲礼驴肉馆用餐。"


_PIECES = [
    "这家",
    "那个",
    "它",
    "他们",
    "餐馆",
    "酒店(",
    ")",
    "（分店）",
    "蓝色的",
    "盒子",
    "推荐您去",
    "公园",
    "的",
    "吗",
    "问",
    "，",
    "。",
    "？",
    "SKU-A1",
    "the blue one",
    "it",
    "Hotel",
    "Grand",
    " ",
    "刚才",
    "和",
    "店",
    "1",
    "の",
]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet=st.characters(codec="utf-8"), max_size=60),
            st.lists(st.sampled_from(_PIECES), max_size=20).map("".join),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_any_text_resolves_without_error_and_spans_point_at_the_mention(texts: list[str]) -> None:
    state: CorefState | None = None
    for n, text in enumerate(texts):
        state, anchors = say(state, text, n)
        for anchor in anchors:
            assert anchor.mention_span is not None
            assert text[anchor.mention_span[0] : anchor.mention_span[1]] == anchor.mention
            assert 0.0 <= anchor.confidence <= 1.0
