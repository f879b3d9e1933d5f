"""People referred to by their role (那个骑手, the driver, the other tech) and names a role word opens."""

from __future__ import annotations

from state.coref.mentions import extract_mentions
from tests.coref_support import LEX, last_entity


def test_a_role_noun_after_a_pointer_binds_the_person_named_with_that_role() -> None:
    said = "您的订单 WM20261130 由骑手王建平配送，预计 20 分钟送达。"
    assert last_entity("我的外卖到哪了", said, "那个骑手电话打不通") == "王建平"


def test_a_role_word_opening_an_english_name_is_cut_and_types_a_person() -> None:
    found = extract_mentions("Courier Dana Lopez will pick it up at noon.", LEX)
    assert [(n.entity, n.types, n.kinds) for n in found] == [("Dana Lopez", ("person",), ("courier",))]


def test_the_role_said_later_finds_the_person_it_opened() -> None:
    said = "Your order 55120 is out for delivery. Driver Tomas Reyes has it."
    assert last_entity("Where is my package?", said, "Can the driver ring the bell when he arrives?") == "Tomas Reyes"


def test_a_thing_said_before_a_person_tells_the_person_apart() -> None:
    bought = "我买了海尔BCD-501冰箱和西门子WM12洗衣机"
    said = "冰箱由严立伟师傅送装，洗衣机由潘浩师傅送装，都是周六。"
    assert last_entity(bought, said, "装冰箱的那个师傅几点到？") == "严立伟"
    assert last_entity(bought, said, "送洗衣机的那位能早点来吗") == "潘浩"


def test_a_thing_before_a_person_noun_in_english_is_a_cue_for_the_person() -> None:
    said = "Tech Lena Ortiz will fit the oven, and tech Sam Price the fridge."
    assert last_entity("When is the install?", said, "Can the fridge guy call me first?") == "Sam Price"


def test_the_other_person_of_a_pair_is_the_one_not_spoken_of_since() -> None:
    said = "We have two tutors free: Alice Moreau, who teaches grammar, and Ben Okoro, who teaches writing."
    slots = "Ben has slots SL-101 and SL-102 next week."
    assert last_entity("I need a tutor", said, slots, "Could the other tutor do Fridays?") == "Alice Moreau"


def test_a_name_a_role_word_and_is_introduce_is_a_person() -> None:
    found = extract_mentions("The 3C tenant is Gloria Hunt.", LEX)
    assert [n.types for n in found if n.entity == "Gloria Hunt"] == [("person",)]


def test_a_thing_after_a_name_is_no_part_of_it() -> None:
    assert [n.entity for n in extract_mentions("and the Slack thing, is it fixed?", LEX)] == ["Slack"]


def test_a_person_noun_after_a_word_no_one_was_said_with_is_the_person_in_focus() -> None:
    said = "Work order WO-77 is open. The 7C tenant is Harvey Cole."
    assert (
        last_entity("Water is leaking from 7C upstairs.", said, "can the upstairs guy shut his tap?") == "Harvey Cole"
    )
