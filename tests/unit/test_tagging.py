"""Intent and emotion tagging: the documented examples, the post rules, properties."""

from __future__ import annotations

import copyreg
import pickle
from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.events import AsrInfo, AsrPause, ConversationEvent
from state.normalise.turn import NormaliseConfig, normalise_turn
from state.tagging.lexicon import CLASSES, TagLexicon, load_lexicon
from state.tagging.tagger import TagConfig, TagState, cue_text, tag_segment, tag_texts, tag_turn, turn_intent

LEX = load_lexicon()
TS = datetime(2026, 1, 1, 8, tzinfo=UTC)


def _turn(text: str, role: str = "customer", *, asr: AsrInfo | None = None, event_id: str = "e", speaker: str = "A"):
    ev = ConversationEvent(
        event_id=event_id,
        session_id="s",
        ts=TS,
        text=text,
        speaker_role=role,
        speaker=speaker,  # type: ignore[arg-type]
        modality="asr" if asr else "text",
        asr=asr,
    )
    return normalise_turn(ev, NormaliseConfig())


def test_hedged_promise_on_a_price_is_a_request_with_low_confidence() -> None:
    tags = tag_segment("这个价格我们尽力争取", "agent", LEX)
    assert tags.label == "request"
    assert tags.confidence == pytest.approx(0.3)
    assert tags.hedged
    assert "hedge_rule" in tags.cues
    assert tags.commitment_strength == pytest.approx(0.3)
    plain = tag_segment("我们会把价格发给您", "agent", LEX)
    assert plain.confidence == pytest.approx(0.75)
    assert tags.certainty < plain.certainty  # uncertainty raised


def test_hedge_rule_in_english_and_only_with_a_negotiable_object() -> None:
    en = tag_segment("We'll try our best on the price.", "agent", LEX)
    assert (en.label, en.confidence) == ("request", pytest.approx(0.3))
    no_object = tag_segment("我们会尽力帮您", "agent", LEX)
    assert not no_object.hedged
    assert no_object.confidence == pytest.approx(0.75)


@pytest.mark.parametrize(
    ("text", "strength"),
    [
        ("我保证明天给你答复", 1.0),
        ("好的，我会发给你", 0.7),
        ("I promise I'll call you", 1.0),
        ("I will send it tonight", 0.7),
    ],
)
def test_commitment_strength_tiers(text: str, strength: float) -> None:
    tags = tag_segment(text, "agent", LEX)
    assert tags.label == "commitment"
    assert tags.commitment_strength == pytest.approx(strength)


def test_try_is_the_weakest_tier_even_beside_will() -> None:
    tags = tag_segment("I'll try to send it tonight", "agent", LEX)
    assert tags.commitment_strength == pytest.approx(0.3)


def test_no_commitment_no_strength() -> None:
    assert tag_segment("What time does the store open?", "customer", LEX).commitment_strength == 0.0


APOLOGY = "实在对不起，让您着急担心了，是我们的错！！"


def test_agent_apology_with_high_stress_is_inverted() -> None:
    customer = tag_segment(APOLOGY, "customer", LEX)
    agent = tag_segment(APOLOGY, "agent", LEX)
    assert customer.stress > 0.5
    assert agent.apology_inverted
    assert "apology_inversion" in agent.cues
    assert agent.stress == pytest.approx(1.0 - customer.stress)


def test_agent_without_apology_or_low_stress_is_not_inverted() -> None:
    angry = tag_segment("太过分了，你们到底怎么回事！！", "agent", LEX)
    assert angry.stress > 0.5
    assert not angry.apology_inverted
    calm = tag_segment("抱歉，稍等一下。", "agent", LEX)
    assert calm.stress <= 0.5
    assert not calm.apology_inverted


@pytest.mark.parametrize(("role", "weight"), [("customer", 1.0), ("agent", -0.6), ("third_party", 0.3)])
def test_role_weights_give_the_signed_pressure(role: str, weight: float) -> None:
    tags = tag_segment("这日子没法过了，烦死了！", role, LEX)
    assert tags.pressure == pytest.approx(weight * tags.stress)


def test_asr_pauses_of_a_second_lower_certainty() -> None:
    text = "我们下周二肯定能给到初版……不过测试环境还在搭。"
    cut = text.index("……")
    short = AsrInfo(confidence=0.9, start_ms=0, end_ms=5000, pauses=(AsrPause(after_char=cut, duration_ms=400),))
    long = AsrInfo(confidence=0.9, start_ms=0, end_ms=5000, pauses=(AsrPause(after_char=cut, duration_ms=1200),))
    _, calm = tag_turn(None, _turn(text, "agent", asr=short), TagConfig(), LEX)
    _, paused = tag_turn(None, _turn(text, "agent", asr=long), TagConfig(), LEX)
    assert all(p.certainty < c.certainty for p, c in zip(paused.tags, calm.tags, strict=True))


def test_spec_example_committed_date_with_a_blocker_reads_as_a_request() -> None:
    text = "我们下周二肯定能给到初版……不过测试环境还在搭。"
    asr = AsrInfo(
        confidence=0.9, start_ms=0, end_ms=5000, pauses=(AsrPause(after_char=text.index("……"), duration_ms=1200),)
    )
    _, turn = tag_turn(None, _turn(text, "agent", asr=asr), TagConfig(), LEX)
    assert turn.turn_intent_label == "request"
    blocker = turn.tags[-1]
    assert blocker.stress > 0.5
    assert blocker.certainty < 0.5
    assert blocker.urgency > tag_segment("测试环境搭好了。", "agent", LEX).urgency


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("Could you send me the invoice?", "request"),
        ("What time does the store open?", "question"),
        ("你能帮我查一下订单吗？", "request"),
        ("这家店几点开门？", "question"),
        ("不行，这个做不到。", "refuse"),
        ("No way, I won't sign it.", "refuse"),
        ("你是说哪个订单？", "clarify"),
        ("I work at a small design studio.", "neutral"),
        ("没问题，包在我身上。", "commitment"),
    ],
)
def test_bilingual_intents(text: str, label: str) -> None:
    assert tag_segment(text, "customer", LEX).label == label


@pytest.mark.parametrize(
    ("text", "label"),
    [
        # Orders: a bare verb, 你给我/你别/你赶紧 + verb, the 把 construction.
        ("你给我把门关上", "request"),
        ("你别再翻我的抽屉", "request"),
        ("赶紧把报表发过来", "request"),
        # Comfort, narration and compounds only look like orders.
        ("别太着急了", "neutral"),
        ("后来他给我打了个电话", "neutral"),
        ("别的都好说", "neutral"),
        ("看来今天下不了雨", "neutral"),
        ("说不定他已经到了", "neutral"),
        # Questions without a question mark: any A-not-A, 在哪, a presumptive 吧.
        ("这件外套贵不贵", "question"),
        ("钥匙放在哪", "question"),
        ("你昨天没去公司吧", "question"),
        # Wh-words as indefinites ask nothing.
        ("不管怎么说他也是好意", "neutral"),
        ("他倒不是什么坏人", "neutral"),
        # Refusals and disagreement: a short first-person refusal, dismissals, no need.
        ("我不喝", "refuse"),
        ("老板我不想加班", "refuse"),
        ("少来", "refuse"),
        ("用不着这么麻烦", "refuse"),
        # A preference inside a longer statement and a concession are not refusals.
        ("其实我不想把周末都花在路上", "neutral"),
        ("房子小一点也就算了", "neutral"),
    ],
)
def test_colloquial_chinese_intents(text: str, label: str) -> None:
    assert tag_segment(text, "customer", LEX).label == label


@pytest.mark.parametrize(
    ("text", "label"),
    [
        # An inverted modal inside a wh-question asks; "do you need to" and a handed-back question too.
        ("Which train would you take to the coast?", "question"),
        ("Where shall we park the car?", "question"),
        ("Do you have to wear a uniform at work?", "question"),
        ("I'm fine, thanks. How about you?", "question"),
        # Offering help and asking an opinion are questions.
        ("Good afternoon, can I help you?", "question"),
        ("您好，我能为您做点什么吗？", "question"),
        ("你觉得这套沙发怎么样？", "question"),
        # Suggestions with no modal verb still direct.
        ("It's time for you to turn off the TV.", "request"),
        ("孩子们，该洗手吃饭了。", "request"),
        # Declining an offer answers it.
        ("No, thanks. I just had lunch.", "refuse"),
        ("不用了，谢谢。", "refuse"),
        # Not being able to afford something asks for nothing.
        ("这么贵，我买不起。", "neutral"),
        # Asking leave to do something asks for it; asking about a skill or about the listener's
        # side of a topic asks.
        ("Could we move the meeting to Friday?", "request"),
        ("Excuse me, can I leave my bag here?", "request"),
        ("Where can I leave my bag?", "question"),
        ("Can you speak Spanish?", "question"),
        ("Can you speak more slowly, please?", "request"),
        ("How about your previous job?", "question"),
    ],
)
def test_speech_act_patterns_beyond_the_keywords(text: str, label: str) -> None:
    assert tag_segment(text, "customer", LEX).label == label


@pytest.mark.parametrize(
    ("accepting", "plain"),
    [("That sounds like a good idea.", "That sounds like a long trip."), ("好主意！", "好地方！")],
)
def test_taking_up_a_suggestion_leans_to_commitment(accepting: str, plain: str) -> None:
    commitment = CLASSES.index("commitment")
    after = tag_segment(accepting, "customer", LEX, prev_intent="request")
    assert after.label == "commitment"
    assert after.intent[commitment] > tag_segment(plain, "customer", LEX, prev_intent="request").intent[commitment]


def test_welcoming_an_offer_is_a_commitment() -> None:
    commitment = CLASSES.index("commitment")
    plain = tag_segment("The view from the window is great.", "customer", LEX)
    assert plain.label == "neutral"
    for text in ("That would be great, thanks.", "That'll be fine.", "A table by the window sounds good."):
        tags = tag_segment(text, "customer", LEX)
        assert tags.label == "commitment"
        assert "welcome_offer" in tags.cues
        assert tags.intent[commitment] > plain.intent[commitment]


def test_an_acceptance_after_a_request_is_a_commitment() -> None:
    state = TagState()
    state, first = tag_turn(state, _turn("Could you close the window, please?", speaker="A"), TagConfig(), LEX)
    assert first.turn_intent_label == "request"
    _, reply = tag_turn(state, _turn("Sure.", speaker="B", event_id="e2"), TagConfig(), LEX)
    assert reply.turn_intent_label == "commitment"
    _, alone = tag_turn(None, _turn("Sure.", speaker="B", event_id="e3"), TagConfig(context=False), LEX)
    assert alone.turn_intent_label != "commitment"


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("Would you like to try our new sunscreen?", "Sure, why not."),
        ("那下午一点方便吗？", "可以，她那时有空。"),
        ("你介意和我交换座位吗？", "没关系。"),
    ],
)
def test_an_acceptance_word_answering_a_question_takes_up_the_offer(question: str, reply: str) -> None:
    state, first = tag_turn(TagState(), _turn(question, speaker="A"), TagConfig(), LEX)
    assert first.turn_intent_label in ("question", "request")
    _, answer = tag_turn(state, _turn(reply, speaker="B", event_id="e2"), TagConfig(), LEX)
    assert answer.turn_intent_label == "commitment"
    assert any(c in answer.tags[0].cues for c in ("accept_offer", "zh_accept_offer", "zh_no_trouble"))
    # "Yes" / 是的 only answers the question.
    if "方便" in question:
        _, plain = tag_turn(state, _turn("是的，她那时有空。", speaker="B"), TagConfig(), LEX)
        assert plain.turn_intent_label == "neutral"


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("OK, when will you be back?", "question"),
        ("好的，你有收据吗？", "question"),
        ("他这会正做美容呢", "neutral"),
        ("那你呢", "question"),
        ("不是不是", "neutral"),
        ("我也不想这样", "neutral"),
        ("我不想这样", "refuse"),
    ],
)
def test_speech_act_forms(text: str, label: str) -> None:
    _, turn = tag_turn(None, _turn(text), TagConfig(context=False), LEX)
    assert turn.turn_intent_label == label


@pytest.mark.parametrize(
    ("negated", "plain"),
    [("我不开心", "我开心"), ("我不太满意", "我很满意"), ("I am not happy about this", "I am happy about this")],
)
def test_a_negated_relief_word_does_not_relieve(negated: str, plain: str) -> None:
    tags = tag_segment(negated, "customer", LEX)
    assert tags.stress > tag_segment(plain, "customer", LEX).stress
    assert "stress_negated" in tags.cues


def test_an_intensifier_strengthens_a_stress_word() -> None:
    strong = tag_segment("你们真讨厌", "customer", LEX)
    assert strong.stress > tag_segment("你们讨厌", "customer", LEX).stress
    assert "stress_intensified" in strong.cues


def test_english_valence_library_is_named_when_it_moves_stress() -> None:
    assert "stress_valence_neg" in tag_segment("This is a horrible, awful mess", "customer", LEX).cues
    assert "stress_valence_pos" in tag_segment("Wonderful, thank you so much", "customer", LEX).cues
    assert not any(c.startswith("stress_valence") for c in tag_segment("好的", "customer", LEX).cues)


def test_the_lexicon_half_does_not_carry_stress() -> None:
    # The speaker's running stress is carried on each unit's final stress (state/units/emotion.py):
    # carrying it here too would count the past twice.
    state, _ = tag_turn(None, _turn("你们太过分了！到底怎么回事！", speaker="A"), TagConfig(), LEX)
    _, calm_after_anger = tag_turn(state, _turn("好的。", speaker="A", event_id="e2"), TagConfig(), LEX)
    _, calm_alone = tag_turn(TagState(prev_intent=state.prev_intent), _turn("好的。", event_id="e3"), TagConfig(), LEX)
    assert calm_after_anger.tags[0].stress == calm_alone.tags[0].stress
    assert "stress_carry" not in calm_after_anger.tags[0].cues


@pytest.mark.parametrize(
    "old_fields",
    [["request", "B"], ["request", "B", (("B", 0.8), ("A", 0.2))]],
    ids=["two-field", "with-running-stress"],
)
def test_an_older_snapshot_still_resumes(old_fields: list[object]) -> None:
    # The pickled form of the two-field TagState, and of the three-field one that kept running
    # stress (now CarryState's): the class and its slot values, in order.
    class Snapshot:
        def __reduce__(self) -> tuple[object, ...]:
            return (copyreg._reconstructor, (TagState, object, None), old_fields)  # type: ignore[attr-defined]

    old = pickle.loads(pickle.dumps(Snapshot()))
    assert old == TagState("request", "B")
    state, turn = tag_turn(old, _turn("Sure.", speaker="A"), TagConfig(), LEX)
    assert turn.turn_intent_label == "commitment"
    assert state == TagState(prev_intent="commitment", prev_speaker="A")


def test_unit_kinds() -> None:
    assert tag_segment("谢谢", "customer", LEX).kind == "smalltalk"
    assert tag_segment("测试账号权限我们已开通", "agent", LEX).kind == "status_update"
    assert tag_segment("你们怎么回事，到现在还没发货！", "customer", LEX).kind == "complaint"
    assert tag_segment("麻烦补充下错误码说明", "customer", LEX).kind == "action_request"


def test_topics_follow_the_recall_question_classes() -> None:
    assert tag_segment("我的快递到哪了？", "customer", LEX).topic == "logistics"
    assert tag_segment("I want a refund", "customer", LEX).topic == "after_sales"
    assert tag_segment("今天天气不错", "customer", LEX).topic is None


def test_cue_text_normalises_tokenised_english() -> None:
    assert cue_text("I \\ ' ll be there , I ’ Ve SEEN it .") == "i'll be there, i've seen it."


def test_turn_intent_of_nothing_is_neutral() -> None:
    probs, label = turn_intent(())
    assert label == "neutral"
    assert probs[CLASSES.index("neutral")] == 1.0


def test_the_last_segment_that_says_something_carries_the_turn() -> None:
    tags = tag_texts(["Yes.", "Would you mind trading seats with me?"], "customer", LEX, prev_intent=None)
    assert turn_intent(tags)[1] == "request"


class _FixedHead:
    name = "fixed"

    def predict(self, texts, contexts):  # type: ignore[no-untyped-def]
        intent = np.tile(np.eye(len(CLASSES))[CLASSES.index("refuse")], (len(texts), 1)) * 0.94 + 0.01
        return intent, np.full((len(texts), 4), 0.9)


def test_a_head_blends_into_intent_by_weight() -> None:
    lexicon_only = tag_texts(["What time is it?"], "customer", LEX, prev_intent=None)[0]
    blended = tag_texts(
        ["What time is it?"], "customer", LEX, prev_intent=None, head=_FixedHead(), config=TagConfig(head_weight=0.9)
    )[0]
    assert lexicon_only.label == "question"
    assert blended.label == "refuse"
    assert sum(blended.intent) == pytest.approx(1.0)
    ignored = tag_texts(["What time is it?"], "customer", LEX, prev_intent=None, head=_FixedHead())[0]
    assert ignored.label == "question"  # head_weight 0 (the default): intent is the lexicon's


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=80), role=st.sampled_from(["customer", "agent", "third_party"]))
def test_probabilities_sum_to_one_and_loads_stay_in_range(text: str, role: str) -> None:
    tags = tag_segment(text, role, LEX)
    assert sum(tags.intent) == pytest.approx(1.0)
    assert all(0.0 <= p <= 1.0 for p in tags.intent)
    for value in (
        tags.stress,
        tags.certainty,
        tags.urgency,
        tags.cooperation,
        tags.confidence,
        tags.commitment_strength,
    ):
        assert 0.0 <= value <= 1.0
    assert tags.label in CLASSES


def test_lexicon_is_a_data_file() -> None:
    assert isinstance(LEX, TagLexicon)
    assert len(LEX.intent_cues) > 20


@pytest.mark.parametrize(
    ("text", "role", "cue"),
    [
        ("这边估计能给您申请到补偿", "agent", "zh_please"),  # 申请 (apply for) is no 请 (please)
        ("我邀请了朋友一起来", "customer", "zh_please"),
        ("好像还是不行", "customer", "zh_accept"),  # 好像 (seems) is no 好 (OK)
        ("好像已经到了", "customer", "zh_accept"),
    ],
)
def test_words_that_only_contain_a_cue_do_not_fire_it(text: str, role: str, cue: str) -> None:
    tags = tag_turn(None, _turn(text, role), TagConfig(), LEX)[1].tags
    assert tags
    assert all(cue not in t.cues for t in tags)
    assert all(t.label != "request" for t in tags)


@pytest.mark.parametrize(("text", "cue"), [("请您提供一下订单号", "zh_please"), ("好，那就这样", "zh_accept")])
def test_the_cue_words_themselves_still_fire(text: str, cue: str) -> None:
    assert any(cue in t.cues for t in tag_turn(None, _turn(text), TagConfig(), LEX)[1].tags)


@pytest.mark.parametrize("text", ["Here you are.", "给你。", "给您，先生。"])
def test_handing_something_over_is_a_commitment(text: str) -> None:
    tags = tag_segment(text, "customer", LEX)
    assert tags.label == "commitment"


def test_a_description_starting_with_this_is_not_handing_over() -> None:
    assert tag_segment("这就是福特福克斯，一辆很轻的车。", "customer", LEX).label == "neutral"


@pytest.mark.parametrize(
    ("text", "label"),
    [
        # Asking how a named thing or person is asks; a bare "…怎么样" after a proposal suggests.
        ("你的工作怎么样？", "question"),
        ("味道如何？", "question"),
        ("他们怎么样？", "question"),
        ("8号来试衣怎么样？", "request"),
    ],
)
def test_how_is_a_named_thing_asks(text: str, label: str) -> None:
    assert tag_segment(text, "customer", LEX).label == label


@pytest.mark.parametrize("text", ["我不是跟你说过吗", "这不是气话吗", "哪有时间和你吵架", "怎么可能"])
def test_a_rhetorical_question_asserts(text: str) -> None:
    tags = tag_segment(text, "customer", LEX)
    assert tags.label == "neutral"
    assert "zh_rhetorical_assert" in tags.cues


@pytest.mark.parametrize("text", ["你不是说今天去拍节目吗", "怎么可能呢？", "你去哪儿了？"])
def test_a_real_question_is_not_read_as_rhetorical(text: str) -> None:
    tags = tag_segment(text, "customer", LEX)
    assert tags.label == "question"
    assert "zh_rhetorical_assert" not in tags.cues


@pytest.mark.parametrize(
    ("text", "label"),
    [("亲爱的，把炉子关小点。", "request"), ("哈利，马上过来！", "request"), ("亲爱的，我到家了。", "neutral")],
)
def test_an_order_after_a_short_address_directs(text: str, label: str) -> None:
    assert tag_segment(text, "customer", LEX).label == label


@pytest.mark.parametrize("text", ["这对我来说太吵了。", "我来自河北省唐山市。", "对不起，我来不及吃晚饭了。"])
def test_for_me_and_i_come_from_promise_nothing(text: str) -> None:
    tags = tag_segment(text, "customer", LEX)
    assert "zh_will" not in tags.cues
    assert "zh_offer" not in tags.cues


def test_i_will_do_it_still_promises() -> None:
    assert "zh_will" in tag_segment("好。我来处理这件事。", "customer", LEX).cues


@pytest.mark.parametrize("text", ["我不知道怎么回家。", "我不晓得这是怎么发生的。", "我记得他住在哪里。"])
def test_an_embedded_wh_clause_states(text: str) -> None:
    tags = tag_segment(text, "customer", LEX)
    assert tags.label == "neutral"
    assert "zh_wh_embedded" in tags.cues


@pytest.mark.parametrize("text", ["你知道他在哪里吗？", "我不知道怎么回家，你能告诉我吗？", "你知道我在这等了多久"])
def test_a_wh_clause_that_still_asks_is_not_embedded(text: str) -> None:
    assert "zh_wh_embedded" not in tag_segment(text, "customer", LEX).cues


@pytest.mark.parametrize(
    ("text", "label"), [("在那里你可以找到盐和胡椒。", "neutral"), ("你可以先试试这件。", "request")]
)
def test_what_the_listener_can_find_is_possible_not_directed(text: str, label: str) -> None:
    assert tag_segment(text, "customer", LEX).label == label


def test_asking_whether_the_listener_can_find_it_is_not_a_statement_of_possibility() -> None:
    assert "zh_possible" not in tag_segment("你能在那里找到吗？", "customer", LEX).cues


@pytest.mark.parametrize("text", ["现金还是刷卡？", "你去慢跑还是去健身俱乐部？", "头发长的还是短的"])
def test_an_alternative_question_asks(text: str) -> None:
    tags = tag_segment(text, "customer", LEX)
    assert tags.label == "question"
    assert "zh_alternative_q" in tags.cues


@pytest.mark.parametrize("text", ["我还是先找工作", "这点风度咱还是有的"])
def test_still_or_had_better_is_not_an_alternative(text: str) -> None:
    assert "zh_alternative_q" not in tag_segment(text, "customer", LEX).cues


@pytest.mark.parametrize(
    ("text", "label"), [("我们希望你旅途愉快。", "neutral"), ("我们希望你明天再来一趟。", "request")]
)
def test_a_good_wish_asks_nothing(text: str, label: str) -> None:
    assert tag_segment(text, "customer", LEX).label == label


def test_sorry_for_the_trouble_is_not_handing_over() -> None:
    tags = tag_segment("给您添麻烦了，请问机身有没有放平？", "agent", LEX)
    assert "zh_handing_over" not in tags.cues
    assert tags.label == "question"
