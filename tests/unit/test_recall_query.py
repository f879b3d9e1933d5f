import pytest

from state.recall.config import load_tables
from state.recall.query import (
    analyse_query,
    causal_cues,
    classify_question,
    identifiers,
    is_explicit_statement,
    name_candidates,
    strip_names,
)

TABLES = load_tables()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我的快递到哪了？", "logistics"),
        ("Where is my parcel? tracking says nothing", "logistics"),
        ("帮我取消这个订单", "order"),
        ("上周投诉的退款还没到", "after_sales"),
        ("双十一有什么优惠券", "promotion"),
        ("我的积分怎么兑换，账号登录不了", "account"),
        ("How was your weekend?", None),
    ],
)
def test_question_classes(text: str, expected: str | None) -> None:
    spec = classify_question(text, TABLES)
    assert (spec.name if spec else None) == expected


def test_cues_cap_at_one_and_absent_cues_are_zero() -> None:
    assert causal_cues("again and again, frustrated, urgent!", TABLES)[0] == 1.0
    assert causal_cues("What is the return policy", TABLES) == (0.0, ())


def test_emotion_of_a_frustrated_repeat_is_more_stressed_than_neutral() -> None:
    calm = analyse_query("what is the return policy", TABLES)
    upset = analyse_query("客服态度又这么差，太失望了", TABLES)
    assert upset.emotion[0] > calm.emotion[0]
    assert upset.cue_intensity == 1.0
    assert calm.cue_intensity == 0.0


def test_names_are_found_and_taken_out_of_the_embedded_text() -> None:
    q = analyse_query("When did Melanie paint a sunrise?", TABLES)
    assert q.name_candidates == ("Melanie",)
    assert "Melanie" not in q.semantic_text
    assert "sunrise" in q.semantic_text
    assert name_candidates("What did I tell you on Monday?", (), TABLES) == ()


def test_stripping_never_leaves_an_empty_query() -> None:
    assert strip_names("Caroline?", ["Caroline"]) == "Caroline?"
    assert strip_names("王经理说的方案", ["王经理"]) == "说的方案"


def test_identifiers_and_caller_entities_are_merged() -> None:
    assert identifiers("my order 20250601123 and 13800138000") == ("20250601123", "13800138000")
    q = analyse_query("where is order 20250601123", TABLES, entities=["SF1234567", "20250601123"])
    assert q.entities == ("20250601123", "SF1234567")
    assert q.needs_certainty


def test_explicit_statements() -> None:
    assert is_explicit_statement("Actually I already got the refund", TABLES)
    assert not is_explicit_statement("Did I get the refund?", TABLES)


def test_answer_focus_reads_the_question() -> None:
    tables = load_tables()
    assert analyse_query("上周五我找你们是为了什么事来着", tables).focus == "own"
    assert analyse_query("上次尺码发错的事后来怎么处理的？", tables).focus == "handling"
    assert analyse_query("我现在约的保洁是哪天？", tables).focus == "current"
    assert analyse_query("What did it cost?", tables).focus == "answer"  # whole words: not "what did i"
    assert analyse_query("How did that get resolved in the end?", tables).focus == "handling"
    assert analyse_query("还是那个代码 上次我是怎么搞好的", tables).focus == "handling"  # how it got fixed
    assert analyse_query("你们怎么还没修好", tables).focus == "answer"  # not fixed: a complaint, no "how"
    assert analyse_query("Why did I call you last week?", tables).focus == "own"
    assert analyse_query("When did Caroline go to the support group?", tables).focus == "answer"


def test_a_question_for_a_fact_has_the_information_focus() -> None:
    tables = load_tables()
    assert analyse_query("换 AirPods 要带什么？", tables).focus == "information"
    assert analyse_query("How long do I have to return it?", tables).focus == "information"
    assert analyse_query("Crushed pods in my box once more.", tables).focus == "answer"


def test_five_digit_numbers_and_four_digit_ones_a_record_noun_names_are_identifiers() -> None:
    assert identifiers("when is 66154 supposed to come?") == ("66154",)
    assert identifiers("7731那个订单到哪了") == ("7731",)
    assert identifiers("订单7719的床垫能不能改到周六送") == ("7719",)
    assert identifiers("order #4471 is late") == ("4471",)
    assert identifiers("2023年买的，12000元") == ()  # a year, an amount
    assert identifiers("I bought 3 chairs in 2023") == ()


def test_a_referent_phrase_with_a_gap_refers_to_the_open_matters() -> None:
    assert analyse_query("那个登不上的问题 它现在有人在跟吗", TABLES).refers_to_open
    assert analyse_query("那台会响的 它换好了没", TABLES).refers_to_open
    assert not analyse_query("7731那个订单到哪了", TABLES).refers_to_open
    assert not analyse_query("我的退款什么时候到账？", TABLES).refers_to_open


def test_what_the_agent_told_me_is_information_held_by_the_agents_turn() -> None:
    assert analyse_query("its kicking me out again, what did you tell me last time", TABLES).focus == "information"
    assert analyse_query("when is 66154 supposed to come?", TABLES).focus == "information"
    assert analyse_query("what was the manager call about, when was it scheduled?", TABLES).focus == "information"
    # what the agent said it comes to, and any amount asked for ("多少" with or without 钱)
    assert analyse_query("那台平板我决定换了 它当时你们说能抵多少", TABLES).focus == "information"
    assert analyse_query("运费大概多少", TABLES).focus == "information"
    assert analyse_query("你说的那个办法我试了", TABLES).focus == "information"
    # a number or a code asked for again: the agent gave it in reply to what the customer reported
    assert analyse_query("修理厂跟我要车子那次的案件编号 你再发我一下", TABLES).focus == "information"
    assert analyse_query("what's the confirmation code for my trip?", TABLES).focus == "information"
