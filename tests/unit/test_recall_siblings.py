from state.recall.config import load_tables
from state.recall.siblings import kin_groups, siblings
from state.recall.specifics import coverage, specific_terms

TABLES = load_tables()


def _siblings(question: str, texts: list[str]) -> tuple[str, ...]:
    terms = specific_terms(question, TABLES.general_terms)
    c = coverage(terms, texts, 0.5, 0.3)
    lacking = [t for t in terms if t.text in c.missing]
    return siblings(question, lacking, texts, TABLES.kin, TABLES.stopwords)


def test_another_identifier_of_the_same_shape_is_a_sibling() -> None:
    assert _siblings("订单 88213 的退款到了吗", ["订单 88231 已退款，3 天内到账。"]) == ("88213→88231",)
    assert _siblings("Is ticket RQ-5521 closed?", ["Ticket RQ-5512 is closed now."]) == ("RQ-5521→RQ-5512",)


def test_an_identifier_of_another_shape_is_no_sibling() -> None:
    assert _siblings("Where is parcel QX48812?", ["Call us on 555-0101 any time."]) == ()


def test_the_same_identifier_is_no_sibling() -> None:
    assert _siblings("订单 88213 的退款到了吗", ["订单 88213 已退款。"]) == ()


def test_another_family_member_is_a_sibling_zh() -> None:
    assert _siblings("我爸的复查约在哪天", ["我妈的复查约在周四上午"]) == ("我爸→我妈",)


def test_another_family_member_is_a_sibling_en() -> None:
    found = _siblings("When is my dad's eye exam?", ["Your mother's eye exam is on Friday at 3pm."])
    assert found == ("dad→mother",)


def test_one_family_member_named_two_ways_is_no_sibling() -> None:
    assert _siblings("我爸的复查约在哪天", ["父亲的复查已约在周四上午"]) == ()
    assert _siblings("When is my dad's eye exam?", ["Your father's eye exam is on Friday."]) == ()
    assert kin_groups("我爸和我妈", TABLES.kin) == {"father": "我爸", "mother": "我妈"}


def test_a_relative_the_memories_never_name_is_a_sibling_of_the_user_themself() -> None:
    assert _siblings("did you add the roaming pass to my son's line too?", ["I've added the pass to your line."]) == (
        "son→self",
    )
    assert _siblings("我妈家那边燃气费欠了多少钱", ["我家电费怎么这个月四百多"]) == ("我妈→self",)
    # a general word for relatives may stand for the one asked about, and is no member of its own
    assert _siblings("我儿子的疫苗约在哪天", ["孩子的疫苗已约在周四上午"]) == ()
    assert _siblings("when is the kids' dentist visit?", ["Your dentist visit is on Friday."]) == ()


def test_another_card_named_by_its_last_digits_is_a_sibling() -> None:
    assert _siblings("尾号3318那张卡今年的年费能不能免掉", ["你好 我尾号3381的信用卡 想提一下额度"]) == ("3318→3381",)
    assert _siblings("is the card ending in 4471 blocked?", ["Your card ending 4417 is active."]) == ("4471→4417",)


def test_a_modifier_reads_past_the_space_between_scripts_and_an_attributive_de() -> None:
    assert _siblings("我的 Spotify auto-renew 关掉了没有", ["爱奇艺的 auto-renew 帮我关掉 每个月扣25"]) == (
        "Spotify→爱奇艺",
    )
    assert _siblings("宠物的保险怎么理赔", ["车辆的保险已续保"]) == ("宠物→车辆",)
    assert _siblings("我的 Spotify auto-renew 关掉了没有", ["Spotify 的 auto-renew 已关闭"]) == ()


def test_another_place_is_a_sibling() -> None:
    assert _siblings("杭州的酒店能退吗", ["已为您预订南京的酒店，5月3日入住。"]) == ("杭州→南京",)


def test_another_kind_of_the_same_thing_is_a_sibling_en() -> None:
    assert _siblings("Was my home insurance claim approved?", ["Your car insurance claim was approved."]) == (
        "home→car",
    )


def test_another_kind_of_the_same_thing_is_a_sibling_zh() -> None:
    assert _siblings("宠物保险怎么理赔", ["您的车辆保险理赔已受理。"]) == ("宠物→车辆",)


def test_an_adjective_before_the_held_noun_is_no_sibling() -> None:
    assert _siblings("did you ever send that replacement battery?", ["We'll send a new battery tomorrow."]) == ()
    assert _siblings("did you ever send that replacement battery?", ["New battery arrived, thanks."]) == ()


def test_no_memories_no_siblings() -> None:
    assert _siblings("我爸的复查约在哪天", []) == ()


def test_the_lexicon_groups_kin_words() -> None:
    assert TABLES.kin["我爸"] == TABLES.kin["father"] == TABLES.kin["dad"]
    assert TABLES.kin["我妈"] != TABLES.kin["我爸"]


def test_another_appliance_before_a_general_noun_is_a_sibling() -> None:
    # "technician" is a general word, so no term; what modifies it still names the appliance
    found = _siblings("When is the dishwasher technician coming?", ["The fridge technician comes on Monday."])
    assert found == ("dishwasher→fridge",)
