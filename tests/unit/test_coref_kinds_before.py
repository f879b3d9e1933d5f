"""Kind words said right before a name (扫地机器人石头G20, 空气炸锅美的KZE5004)."""

from __future__ import annotations

from state.coref.mentions import extract_mentions
from tests.coref_support import LEX, last_entity


def test_a_product_word_right_before_a_name_is_its_kind_and_no_name_of_its_own() -> None:
    found = extract_mentions("订单 3908817724603 是空气炸锅美的KZE5004，今天到了。", LEX)
    assert [(n.entity, n.kinds) for n in found if n.source == "open"] == [("美的KZE5004", ("空气炸锅",))]


def test_a_word_after_a_comma_is_no_kind_of_the_name_before_it() -> None:
    found = extract_mentions("订单 3908817724551 是扫地机器人石头G20，订单 3908817724603 是电饭煲。", LEX)
    assert next(n.kinds for n in found if n.entity == "石头G20") == ("扫地机器人",)


def test_a_head_noun_that_a_kind_word_holds_finds_the_name_said_with_it() -> None:
    first = "订单一是扫地机器人石头G20，订单二是电饭煲苏泊尔SF40，都到了。"
    assert last_entity(first, "好的，请问哪一件有问题？", "那台扫地机一开机就报错") == "石头G20"


def test_a_pointer_takes_the_model_not_the_kind_word_said_before_it() -> None:
    assert last_entity("订单 3908817724603 是空气炸锅美的KZE5004。", "好的。", "那个的内胆起皮了") == "美的KZE5004"
