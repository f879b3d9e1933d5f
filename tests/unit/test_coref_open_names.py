"""Coreference to entities no dictionary lists: products and models, identifiers, organisations, people."""

from __future__ import annotations

import pytest

from schemas.memory import CorefAnchor
from state.coref.mentions import extract_mentions
from state.coref.open_names import open_names
from tests.coref_support import LEX, last_anchors


def referents(anchors: tuple[CorefAnchor, ...]) -> list[tuple[str, str | None]]:
    return [(a.mention, a.resolved_entity) for a in anchors if a.kind != "entity"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("上个月我在你们这买了一台华为Mate60，屏幕有一条绿线。", [("华为Mate60", "product")]),
        ("我的戴森吹风机用了两天就坏了。", [("戴森吹风机", "product")]),
        ("我买的小米14 Pro充电很慢", [("小米14 Pro", "product")]),
        ("I bought an iPhone 15 Pro from your store last month.", [("iPhone 15 Pro", "product")]),
        ("My laptop is a ThinkPad X1 Carbon.", [("laptop", "product"), ("ThinkPad X1 Carbon", "product")]),
        ("The Bose headphones keep disconnecting.", [("Bose headphones", "product")]),
        ("I ordered a blender last week.", [("blender", "product")]),
        ("Maria from your sales team said she would send a quote.", [("Maria", "person")]),
    ],
)
def test_products_and_people_are_found_without_a_dictionary(text: str, expected: list[tuple[str, str]]) -> None:
    assert [(n.surface, n.types[0]) for n in open_names(text, LEX, [])] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("发票号码：FP20261130001，抬头开错了。", ("FP20261130001", "invoice")),
        ("顺丰单号SF1234567890三天没动了", ("SF1234567890", "parcel")),
        ("My ticket #4521 has been open for a week.", ("4521", "ticket")),
    ],
)
def test_identifiers_are_typed(text: str, expected: tuple[str, str]) -> None:
    found = [(n.surface, n.types[0]) for n in extract_mentions(text, LEX) if n.source == "identifier"]
    assert found == [expected]


def test_a_number_or_a_place_name_is_no_product() -> None:
    assert open_names("推荐您去7天连锁酒店住宿，人均消费68元。", LEX, []) == []
    assert open_names("去故宫玩一天怎么样？", LEX, []) == []


def test_the_issue_conversation_resolves_it_to_the_phone() -> None:
    anchors = last_anchors("上个月我在你们这买了一台华为Mate60，屏幕有一条绿线。", "它能免费修吗？")
    assert referents(anchors) == [("它", "华为Mate60")]
    assert anchors[0].antecedent_turn_id == "t0"


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (("我在京东买的戴森吹风机用了两天就坏了。", "那台能换新吗？"), [("那台", "戴森吹风机")]),
        (("我买了一件羽绒服，拉链坏了。", "这个能退吗？"), [("这个", "羽绒服")]),
        (("I ordered a blender from Amazon last week.", "It arrived broken."), [("It", "blender")]),
        (("My Dell XPS 13 won't boot.", "Can you fix that one?"), [("that one", "Dell XPS 13")]),
        (("My laptop won't connect to the VPN since yesterday.", "Should I restart it?"), [("it", "laptop")]),
    ],
)
def test_pronouns_and_demonstratives_resolve_to_open_entities(
    texts: tuple[str, ...], expected: list[tuple[str, str]]
) -> None:
    assert referents(last_anchors(*texts)) == expected


def test_an_organisation_yields_to_the_product_for_it() -> None:
    anchors = last_anchors("我的华为Mate60是在顺丰快递寄丢的。", "它还能找回来吗？")
    assert referents(anchors) == [("它", "华为Mate60")]


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (
            ("我买了一个戴森吸尘器和一个飞利浦电动牙刷。", "吸尘器吸力变小了。", "另外那个牙刷充不上电。"),
            "飞利浦电动牙刷",
        ),
        (
            ("The Instant Pot Duo I received doesn't heat up.", "The display is on, but the pot stays cold."),
            "Instant Pot Duo",
        ),
    ],
)
def test_a_pointer_and_the_end_of_a_name_said_before_refer_to_it(texts: tuple[str, ...], expected: str) -> None:
    anchors = last_anchors(*texts)
    assert [a.resolved_entity for a in anchors if a.kind == "anaphor"][-1] == expected


def test_a_head_noun_prefers_the_entity_whose_name_holds_it() -> None:
    anchors = last_anchors("生产环境的订单服务很慢。", "我们看到数据库的连接数满了。", "那这个环境今晚能扩容吗？")
    assert referents(anchors) == [("这个环境", "生产环境")]
    anchors = last_anchors("我同一个订单买了一台海尔冰箱和一台格力空调。", "空调什么时候来安装？")
    assert referents(anchors) == [("空调", "格力空调")]


def test_a_quantity_is_no_model_and_a_chinese_name_with_a_title_is_a_person() -> None:
    assert open_names("这个套餐包含60G流量。", LEX, []) == []
    found = open_names("你们的客户经理王丽说我的理财到期可以续期。", LEX, [])
    assert [(n.surface, n.types) for n in found] == [("王丽", ("person",))]


def test_a_card_said_after_its_bank_is_the_card() -> None:
    anchors = last_anchors("我的招商银行信用卡昨天被盗刷了。", "这张卡冻结以后还能还款吗？")
    assert referents(anchors) == [("这张卡", "招商银行信用卡")]


def test_the_end_of_a_product_name_opening_a_clause_refers_to_it() -> None:
    anchors = last_anchors("我同时买了一条李宁运动裤和一件安踏卫衣。", "运动裤的尺码偏小。")
    assert referents(anchors) == [("运动裤", "李宁运动裤")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我手机上的剪映一直闪退。", "剪映"),
        ("帮我卸载爱奇艺再装一次", "爱奇艺"),
        ("网易云音乐客户端登不上去", "网易云音乐"),
        ("Notion keeps crashing whenever I paste a table.", "Notion"),
        ("Should I uninstall Grammarly first?", "Grammarly"),
        ("The Trello app shows a blank board.", "Trello"),
    ],
)
def test_software_is_found_from_what_is_done_to_it(text: str, expected: str) -> None:
    found = [(n.surface, n.types) for n in extract_mentions(text, LEX) if "software" in n.types]
    assert found == [(expected, ("software",))]


@pytest.mark.parametrize(
    "text",
    [
        "我的手机一直闪退",
        "这个文件打不开",
        "请问是报错还是没反应？",
        "My Pixel 8 keeps freezing.",
        "Version 4.2 crashes on start.",
    ],
)
def test_a_device_or_a_release_is_no_software(text: str) -> None:
    assert not [n for n in extract_mentions(text, LEX) if "software" in n.types]


def test_a_software_word_and_a_pronoun_that_speaks_of_software_skip_the_device() -> None:
    said = ("剪映在我的荣耀X50上一直闪退。", "先清一下缓存试试。")
    assert referents(last_anchors(*said, "清了，这个软件还是打不开。")) == [("这个软件", "剪映")]
    assert referents(last_anchors("荣耀X50上装的剪映一直崩溃。", *said[1:], "重装以后它的草稿还在吗？"))[0][1] == "剪映"
    english = ("Notion crashes on my Surface Laptop 5.", "Try clearing the cache.")
    assert referents(last_anchors(*english, "Done, and it still crashes."))[0][1] == "Notion"


def test_a_plan_is_a_type_of_its_own() -> None:
    said = ("我现在用的是无忧88套餐。", "好的，我帮您查一下。")
    assert referents(last_anchors(*said, "这个套餐每月有多少通话分钟？")) == [("这个套餐", "无忧88套餐")]
    english = ("I'm on the Family Share plan with two lines.", "Let me look it up.", "Does that plan include roaming?")
    assert referents(last_anchors(*english)) == [("that plan", "Family Share")]


def test_an_ordinal_picks_by_position_among_those_said_together() -> None:
    said = ("我下了两单，订单号分别是P88120和P88157。", "请问是哪一单有问题？")
    assert referents(last_anchors(*said, "第二个订单还没发货。")) == [("第二个订单", "P88157")]
    assert referents(last_anchors(*said, "第一个订单地址写错了。")) == [("第一个订单", "P88120")]


def test_plural_pronouns_prefer_the_plural_thing() -> None:
    said = ("My Jabra Elite 85t earbuds lose sound when paired with my phone.", "Have you reset them?")
    assert referents(last_anchors(*said, "Yes, they still cut out."))[0][1] == "Jabra Elite 85t"


def test_an_apposition_names_the_thing_and_keeps_its_kind() -> None:
    said = ("My printer, an Epson L3250, jams on every page.", "Please send a photo of the tray.")
    assert referents(last_anchors(*said, "Should I unplug the printer first?")) == [("the printer", "Epson L3250")]


def test_an_english_he_never_falls_back_to_a_thing() -> None:
    said = ("The Asus RT-AX58U router drops every night.", "A technician will visit.")
    assert [a for a in last_anchors(*said, "When will he arrive?") if a.resolved_entity is not None] == []


def test_a_flight_number_is_a_flight_and_this_flight_refers_to_it() -> None:
    said = ("我订的MU5137航班被取消了。", "我帮您看一下改签。")
    assert referents(last_anchors(*said, "这个航班还能退票吗？")) == [("这个航班", "MU5137")]
    assert [n.types for n in extract_mentions("Is flight BA0287 delayed?", LEX) if n.source == "identifier"] == [
        ("flight",)
    ]


def test_a_doctor_named_by_title_is_a_person() -> None:
    said = ("上周给我看诊的是赵医生。", "请问您要复诊吗？")
    assert referents(last_anchors(*said, "对，她下周三出诊吗？")) == [("她", "赵医生")]


@pytest.mark.parametrize(("text", "name"), [("我帮您约了赵师傅上门。", "赵师傅"), ("眼科吴医生明天出诊。", "吴医生")])
def test_a_person_named_by_title_is_the_surname_and_the_title(text: str, name: str) -> None:
    assert [n.surface for n in extract_mentions(text, LEX) if n.types == ("person",)] == [name]
