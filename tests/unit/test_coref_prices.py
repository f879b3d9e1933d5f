"""Options picked by their price (state.coref.prices), through the resolver."""

from __future__ import annotations

from state.coref.prices import price_comparison
from tests.coref_support import last_entity

ZH_LIST = "这次保养有标准套餐450元和尊享套餐990元两种。"
EN_LIST = "We have a Starter Box for $39 or a Family Box for $119."


def test_the_cheaper_or_dearer_listed_option_is_picked_by_its_own_price() -> None:
    assert last_entity("想约保养", ZH_LIST, "贵的那个多做些什么") == "尊享套餐990元"
    assert last_entity("想约保养", ZH_LIST, "那还是做便宜的吧") == "标准套餐450元"
    assert last_entity("any packing boxes?", EN_LIST, "what's in the pricier one?") == "Family Box"
    assert last_entity("any packing boxes?", EN_LIST, "I'll take the cheaper box") == "Starter Box"


def test_a_request_for_something_cheaper_is_no_reference() -> None:
    assert price_comparison("有没有便宜点的", (3, 7)) is None
    assert last_entity("想约保养", ZH_LIST, "有没有便宜点的") is None


def test_a_price_compared_with_no_priced_options_said_refers_to_nothing() -> None:
    assert last_entity("我的宽带总是断", "那还是做便宜的吧") is None


def test_a_plan_said_with_its_price_tier_keeps_it_in_its_name() -> None:
    assert last_entity("现在用的畅享套餐128元档，有点贵", "这个套餐还能降档吗") == "畅享套餐128元档"


def test_she_never_binds_a_plan_or_a_shop() -> None:
    said = "目前有两个：一是5G智享套餐79元，二是全家享套餐99元。"
    assert last_entity("想换套餐", said, "她是联通的") is None


def test_options_listed_over_sentences_of_one_turn_are_compared() -> None:
    said = "目前有两款：一是畅联199元套餐，含100GB流量；二是畅联129元套餐，含50GB流量。"
    assert last_entity("我想换个套餐", said, "贵的那个送宽带吗") == "畅联199元套餐"
    assert last_entity("我想换个套餐", said, "便宜的那个送宽带吗") == "畅联129元套餐"
