"""Antecedents no finder registered, found again from the session's recent sentences (state.coref.heads):
a pointer's noun that ends a name phrase, an ordinal over the last enumeration; an identifier's kind
from the noun before it; a pronoun keeping the topic its sentence referred back to."""

from __future__ import annotations

import pytest

from schemas.memory import CorefAnchor
from state.coref.heads import enumeration, head_phrase, pointers
from state.coref.mentions import extract_mentions
from tests.coref_support import LEX, last_anchors


def first_reference(anchors: tuple[CorefAnchor, ...]) -> str | None:
    return next((a.resolved_entity for a in anchors if a.kind != "entity" and a.resolved_entity), None)


@pytest.mark.parametrize(
    ("sentence", "head", "phrase"),
    [
        ("孩子报的新东方少儿编程暑期班，还没开课。", "班", "新东方少儿编程暑期班"),
        ("The Comcast internet bill went up again.", "bill", "Comcast internet bill"),
        ("I dropped it off at the Target Oakland store yesterday.", "store", "Target Oakland store"),
    ],
)
def test_the_name_phrase_ending_in_the_pointer_noun_is_found(sentence: str, head: str, phrase: str) -> None:
    found = head_phrase(sentence, head)
    assert found is not None
    assert found[1] == phrase


@pytest.mark.parametrize(
    ("sentence", "head"),
    [
        ("游玩时间是3小时。", "时间"),  # a common noun, no name
        ("Is that bill right?", "bill"),  # itself a reference
        ("那张账单我没看到。", "账单"),  # itself a reference
    ],
)
def test_a_common_noun_or_a_reference_is_no_name_phrase(sentence: str, head: str) -> None:
    assert head_phrase(sentence, head) is None


def test_pointers_read_the_noun_after_a_demonstrative() -> None:
    assert [p.head for p in pointers("这盒饼干能退吗？")] == ["饼干"]
    assert [p.head for p in pointers("Can you call that branch today?")] == ["branch"]
    assert pointers("The light is on.") == []  # "the" alone: the tagger does not run


@pytest.mark.parametrize(
    ("sentence", "items"),
    [
        ("账单里有两笔退款，一笔是56元，一笔是230元。", ["56元", "230元"]),
        ("在京东买的九阳豆浆机和美的电饭煲，一起到的。", ["九阳豆浆机", "美的电饭煲"]),
        ("There are two pending payments, $40.00 and $75.50.", ["$40.00", "$75.50"]),
        ("我昨天去了一趟银行。", []),
    ],
)
def test_an_enumeration_lists_its_items_in_order(sentence: str, items: list[str]) -> None:
    assert enumeration(sentence) == items


def test_a_pointer_noun_binds_to_the_name_phrase_said_before() -> None:
    anchors = last_anchors("我在淘宝订的云南高山蓝莓到了，好多都坏了。", "请上传照片。", "已经传了，这盒蓝莓能退吗？")
    assert first_reference(anchors) == "云南高山蓝莓"


def test_an_ordinal_counts_the_items_of_the_last_enumeration() -> None:
    said = ("账户里有两笔转账没到，一笔是500元，一笔是2000元。", "请问是哪天转的？")
    assert first_reference(last_anchors(*said, "后者是昨天转的。")) == "2000元"
    assert first_reference(last_anchors(*said, "第一笔是前天转的。")) == "500元"


def test_an_identifier_takes_the_noun_before_it_as_its_kind() -> None:
    found = [n for n in extract_mentions("My warranty number is WR-55102.", LEX) if n.source == "identifier"]
    assert [n.kinds for n in found] == [("warranty",)]
    anchors = last_anchors("My warranty number is WR-55102.", "Let me look.", "Is this warranty still valid?")
    assert first_reference(anchors) == "WR-55102"


def test_a_pronoun_keeps_the_topic_its_sentence_referred_back_to() -> None:
    anchors = last_anchors(
        "My Lenovo Yoga 7i will not boot past the logo.",
        "Sorry, it is still covered under Premium Care.",
        "Great, can someone repair it this week?",
    )
    assert first_reference(anchors) == "Lenovo Yoga 7i"


def test_a_one_character_title_follows_a_surname_only() -> None:
    people = [n.surface for n in extract_mentions("那台扫地机器人总是卡住。", LEX) if n.types == ("person",)]
    assert people == []
    assert [n.surface for n in extract_mentions("我们管理员是张工，他在线。", LEX) if n.types == ("person",)] == [
        "张工"
    ]


def test_a_measure_word_is_no_product() -> None:
    found = [n.surface for n in extract_mentions("I ordered a pair of running shoes.", LEX)]
    assert "pair" not in found


def test_a_chinese_head_binds_to_a_name_holding_its_last_word() -> None:
    anchors = last_anchors("我买的科沃斯扫地机器人T30，昨天到的。", "请问有什么问题？", "那台扫地机器人一直报错。")
    meant = first_reference(anchors)
    assert meant is not None
    assert "T30" in meant


def test_a_hotel_name_keeps_the_place_said_after_its_type_word() -> None:
    found = [n.surface for n in extract_mentions("We stayed at the Holiday Inn Chicago Midway last week.", LEX)]
    assert "Holiday Inn Chicago Midway" in found
    assert "Grand Hotel" in [n.surface for n in extract_mentions("We stayed at the Grand Hotel on Monday.", LEX)]


def test_got_it_refers_unless_it_closes_its_clause() -> None:
    said = ("My Ninja Foodi grill arrived with a dent.", "When did it arrive?")
    assert first_reference(last_anchors(*said, "I got it two days ago.")) == "Ninja Foodi grill"
    assert first_reference(last_anchors(*said, "Got it, thanks.")) is None


def test_the_other_one_is_the_item_of_the_pair_not_just_spoken_of() -> None:
    anchors = last_anchors(
        "I have two open tickets, INC-1001 and INC-1002.",
        "Which one do you need?",
        "The first one is fixed.",
        "Great.",
        "What about the other one?",
    )
    assert first_reference(anchors) == "INC-1002"
