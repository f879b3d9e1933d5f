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
