"""Coreference mechanisms that do not depend on a word list of the domain: bare identifiers, heads
of references no list holds, the question rule's verb, product words jieba splits."""

from __future__ import annotations

import pytest

from schemas.memory import CorefAnchor
from state.coref.anaphora import question_rule_applies
from state.coref.mentions import extract_mentions
from tests.coref_support import LEX, last_anchors


def first_reference(anchors: tuple[CorefAnchor, ...]) -> str | None:
    return next((a.resolved_entity for a in anchors if a.kind != "entity" and a.resolved_entity), None)


def entity_meant(anchors: tuple[CorefAnchor, ...]) -> str | None:
    """The first resolved reference, else the first entity named (a short form of a known name)."""
    return first_reference(anchors) or next((a.resolved_entity for a in anchors if a.resolved_entity), None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("退款的流水号是RF9932018877，麻烦看一下。", ("RF9932018877", "identifier")),
        ("Please look at case 552910 again.", ("552910", "ticket")),
        ("My reservation number is 773104.", ("773104", "booking")),
        ("宽带账号07558812345一直掉线。", ("07558812345", "account")),
    ],
)
def test_a_bare_identifier_is_found_and_typed_by_the_word_before_it(text: str, expected: tuple[str, str]) -> None:
    found = [(n.surface, n.types[0]) for n in extract_mentions(text, LEX) if n.source == "identifier"]
    assert found == [expected]


@pytest.mark.parametrize("text", ["我上个月花了12000元。", "It cost 25000 dollars.", "版本是10.20345。"])
def test_a_sum_or_a_decimal_is_no_identifier(text: str) -> None:
    assert [n for n in extract_mentions(text, LEX) if n.source == "identifier"] == []


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("我的主号 138 0571 2264 要改套餐。", "138 0571 2264"),
        ("My SIM for 07912 448 305 stopped working.", "07912 448 305"),
    ],
)
def test_a_number_in_groups_split_by_spaces_is_one_identifier(text: str, number: str) -> None:
    assert [n.surface for n in extract_mentions(text, LEX) if n.source == "identifier"] == [number]


@pytest.mark.parametrize("text", ["总共 100 200 300 元都退了。", "Rooms 101 202 303 are free."])
def test_short_groups_or_a_sum_are_no_spaced_number(text: str) -> None:
    assert [n.surface for n in extract_mentions(text, LEX) if " " in n.surface and n.surface[0].isdigit()] == []


def test_a_record_reference_takes_a_bare_identifier_and_a_pronoun_prefers_a_named_thing() -> None:
    assert first_reference(last_anchors("流水号RF9932018877的钱还没到。", "这笔转账能加急吗？")) == "RF9932018877"
    assert first_reference(last_anchors("Reference 6610293 for my claim.", "Is that claim approved?")) is None
    anchors = last_anchors("我买的飞利浦剃须刀坏了，付款流水是4410023319。", "它还能保修吗？")
    assert first_reference(anchors) == "飞利浦剃须刀"


@pytest.mark.parametrize(
    ("text", "applies"),
    [("这个东西是不是有问题？", False), ("你问问他能不能退？", True), ("我想确认一下它到了吗？", True)],
)
def test_a_noun_holding_the_asking_verb_is_no_question_verb(text: str, applies: bool) -> None:
    assert (question_rule_applies(text, LEX) is not None) is applies


def test_a_pointer_with_a_classifier_and_one_character_of_the_name_refers_to_it() -> None:
    anchors = last_anchors("我在网上买的九阳豆浆机，用了一周。", "这个机是不是质量不行？")
    assert first_reference(anchors) == "九阳豆浆机"


def test_one_character_inside_a_longer_word_is_no_reference() -> None:
    anchors = last_anchors("工单号T77120023还没处理。", "已经交给李工跟进。", "这个工单什么时候能好？")
    assert first_reference(anchors) == "T77120023"


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("I sent back a Garmin Venu 3 and a Fitbit band.", "Did the Garmin arrive?", "Garmin Venu 3"),
        ("My new Logitech Lightspeed mouse stopped working.", "Should I re-pair the speed dongle?", None),
        ("I set up a Yubikey 5 last week.", "The site rejects the key on Safari.", "Yubikey 5"),
        ("I got a Roborock S8 vacuum.", "Does the Roborock need a new filter?", "Roborock S8"),
    ],
)
def test_the_brand_or_a_word_end_of_a_name_after_the_refers_to_it(
    first: str, second: str, expected: str | None
) -> None:
    assert entity_meant(last_anchors(first, second)) == expected


def test_a_brand_and_a_product_word_jieba_splits_are_one_product() -> None:
    found = [(n.surface, n.types) for n in extract_mentions("我买的美的电饭锅煮饭夹生。", LEX)]
    assert ("美的电饭锅", ("product",)) in found


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("I bought three chairs in two orders, 77120-A and 77164-B.", "The second one never shipped.", "77164-B"),
        ("我有两张卡，尾号88231和99102。", "第一张卡被冻结了。", "88231"),
        ("We ate at Blue Orchid and at Pasta Roma tonight.", "The first one overcharged me.", "Blue Orchid"),
    ],
)
def test_an_ordinal_counts_the_kind_said_twice(first: str, second: str, expected: str) -> None:
    assert first_reference(last_anchors(first, second)) == expected


def test_a_clause_that_merely_holds_an_identifier_makes_no_list() -> None:
    found = [n.surface for n in extract_mentions("付款单号是PX99120034551，商家说没看到。", LEX)]
    assert found == ["PX99120034551"]


def test_a_capitalised_name_before_a_type_noun_is_of_that_type() -> None:
    found = {n.surface: n.types for n in extract_mentions("My Amex Gold card was charged twice in Denver.", LEX)}
    assert found["Amex Gold"] == ("card",)
    anchors = last_anchors("My Amex Gold card was charged twice at a hotel in Denver.", "Can you reverse it?")
    assert first_reference(anchors) == "Amex Gold"


def test_a_record_reference_never_takes_an_untyped_name() -> None:
    anchors = last_anchors("I use Okta at work.", "Can you check the ticket?")
    assert first_reference(anchors) is None


def test_a_job_title_is_no_person_and_a_counted_noun_is_no_name() -> None:
    found = [(n.surface, n.types) for n in extract_mentions("我的保险经理周洁让我买了一份年金险。", LEX)]
    assert ("周洁", ("person",)) in found
    assert all(surface not in ("险经理", "一份年金险") for surface, _ in found)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("My accountant, Priya Raman, filed it late.", "Priya Raman"),
        ("The installer Tom Becker never came.", "Tom Becker"),
    ],
)
def test_a_name_after_a_role_noun_is_a_person(text: str, name: str) -> None:
    assert (name, ("person",)) in [(n.surface, n.types) for n in extract_mentions(text, LEX)]


def test_the_person_asked_is_kept_for_review_and_the_asker_is_cleared() -> None:
    anchors = last_anchors("My case went to Priya in billing.", "Could you ask her to call me back?")
    her = next(a for a in anchors if a.mention == "her")
    assert (her.resolved_entity, her.needs_human_review) == ("Priya", True)
    _, asked = dialogue_anchors("首页性能优化模块下周上线。", "他们问这个功能能不能下周上线吗？")
    assert next(a for a in asked if a.mention == "他们").resolved_entity is None


def dialogue_anchors(*texts: str) -> tuple[None, tuple[CorefAnchor, ...]]:
    return None, last_anchors(*texts)


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("我在饿了么点的杨国福麻辣烫外卖洒了一半。", "这家店能不能赔？", "杨国福麻辣烫"),
        ("My DoorDash order from Golden Wok is missing a dish.", "Can you tell the restaurant?", "Golden Wok"),
    ],
)
def test_a_shop_said_with_its_platform_is_what_this_shop_refers_to(first: str, second: str, expected: str) -> None:
    assert first_reference(last_anchors(first, second)) == expected


def test_a_bank_card_keeps_its_name_while_an_order_never_is_one() -> None:
    found = {
        n.surface: n.types for n in extract_mentions("My Citi Premier card and my Grubhub order both failed.", LEX)
    }
    assert found.get("Citi Premier") == ("card",)
    assert found.get("Grubhub", ()) != ("order",)


def test_a_code_the_thing_shows_is_no_model_and_software_after_de_is_the_subject() -> None:
    found = [n.surface for n in extract_mentions("我的热水器是林内RUS-16E，今天一直显示E32。", LEX)]
    assert "E32" not in found
    software = [n.surface for n in extract_mentions("刚更新的剪映一直闪退。", LEX) if n.types == ("software",)]
    assert software == ["剪映"]


def test_a_name_split_from_its_title_by_the_sentence_splitter_is_the_titled_person() -> None:
    anchors = last_anchors("I saw Dr. Okonkwo last week about my knee.", "Is he available on Thursday?")
    assert first_reference(anchors) == "Dr. Okonkwo"


def test_a_machine_reference_with_none_of_its_type_said_takes_another_machine() -> None:
    anchors = last_anchors("The backup share on NAS-04 is full.", "Can you clean up that server tonight?")
    assert first_reference(anchors) == "NAS-04"


def test_a_classifier_a_clause_back_does_not_make_a_titled_person_a_description() -> None:
    found = [n.surface for n in extract_mentions("这个单子已经转给了客服组的周工。", LEX)]
    assert "周工" in found


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("理财规划师许婷说这只基金很稳。", "她现在电话打不通。", "许婷"),
        ("我挂了骨科郑主任的号。", "他下午还出诊吗？", "郑主任"),
    ],
)
def test_a_person_after_a_role_word_or_with_a_title_is_found(first: str, second: str, expected: str) -> None:
    assert first_reference(last_anchors(first, second)) == expected


def test_a_plan_or_course_name_may_hold_a_price() -> None:
    found = {n.surface: n.types for n in extract_mentions("我办的是大王卡29元套餐，最近老扣钱。", LEX)}
    assert found.get("大王卡29元套餐") == ("plan",)
    assert first_reference(last_anchors("给孩子报了新东方英语寒假班。", "这个班能转到下学期吗？")) == "新东方英语寒假班"


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("我有两个号码，13700001234和13900005678。", "后面那个要停机。", "13900005678"),
        ("我有两个号码，13700001234和13900005678。", "前者换成大流量套餐。", "13700001234"),
        ("I have two bookings, 66120 and 66188.", "The latter needs a crib.", "66188"),
        ("I have two bookings, 66120 and 66188.", "The earlier one can be cancelled.", "66120"),
        ("Both lines, 415-555-0182 and 415-555-0199, were billed.", "The second line was never used.", "415-555-0199"),
    ],
)
def test_positional_references_pick_by_position(first: str, second: str, expected: str) -> None:
    assert first_reference(last_anchors(first, second)) == expected


def test_a_code_said_as_a_number_is_an_identifier_typed_by_its_keyword() -> None:
    found = [(n.surface, n.types) for n in extract_mentions("我的报修编号是BX-2026-0042。", LEX)]
    assert found == [("BX-2026-0042", ("identifier",))]
    anchors = last_anchors("I need to change a booking, reference number QX-55-2210.", "Can the booking move to May?")
    assert first_reference(anchors) == "QX-55-2210"


def test_a_participle_between_the_and_a_type_noun_keeps_the_reference() -> None:
    anchors = last_anchors(
        "My flight DL 405 was delayed six hours.", "Is the delayed flight eligible for compensation?"
    )
    assert first_reference(anchors) == "DL 405"


def test_a_verb_of_contact_is_no_part_of_a_name() -> None:
    assert "马上联系酒店" not in [n.surface for n in extract_mentions("我马上联系酒店。", LEX)]


def test_a_unit_after_a_number_is_no_brand_and_a_shop_called_x_is_an_organisation() -> None:
    assert "GHz band" not in [n.surface for n in extract_mentions("The Eero router drops the 5 GHz band.", LEX)]
    found = {n.surface: n.types for n in extract_mentions("I bought a lamp from a seller called LumiNest.", LEX)}
    assert found.get("LumiNest") == ("organization",)


def test_an_untyped_name_takes_the_type_of_the_reference_that_bound_it() -> None:
    anchors = last_anchors(
        "Webex freezes on my office desktop.", "The app froze again during a call.", "Should I reinstall it?"
    )
    assert first_reference(anchors) == "Webex"


def test_a_name_opened_by_a_type_word_is_of_that_type() -> None:
    anchors = last_anchors("We have a room at the Hotel Lindqvist in Uppsala.", "Does the hotel serve breakfast?")
    assert first_reference(anchors) == "Hotel Lindqvist"
