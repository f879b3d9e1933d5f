"""原来那个, 现在这个, the original one, the plan I have now: the customer's own one, said before the options."""

from __future__ import annotations

from tests.coref_support import last_entity


def test_the_original_one_of_a_kind_is_the_first_said_not_the_last() -> None:
    own = "我现在用的是畅享38元套餐，流量不够。"
    offered = "可以换成5G智享88元套餐或者5G尊享158元套餐。"
    assert last_entity(own, offered, "那原来那个套餐会自动退订吗？") == "畅享38元套餐"
    assert last_entity(own, offered, "那个套餐会自动退订吗？") != "畅享38元套餐"


def test_the_english_original_or_current_one_is_the_first_said() -> None:
    own = "My flight UA 881 to Denver was cancelled."
    offered = "I can move you to UA 883 at 2 pm or UA 885 at 6 pm."
    assert last_entity(own, offered, "Will the original flight be refunded?") == "UA 881"


def test_an_english_thing_said_as_original_is_no_pick_among_things() -> None:
    bought = "My order had a Kestrel X2 speaker and a Lumo 5 lamp."
    assert last_entity(bought, "A replacement for the speaker is on its way.", "Do I need the original box?") is None
