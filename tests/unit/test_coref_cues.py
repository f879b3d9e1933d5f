"""References told apart by a word said beside their antecedent (state.coref.cues), through the resolver."""

from __future__ import annotations

from tests.coref_support import last_entity


def test_the_word_said_before_a_listed_identifier_picks_it() -> None:
    said = "I have a home policy HO-5528810 and an auto policy AU-3390127 with you."
    assert last_entity(said, "What happens to the home one?") == "HO-5528810"
    assert last_entity(said, "What happens to the auto one?") == "AU-3390127"


def test_a_chinese_word_before_the_pointer_picks_what_it_was_said_with() -> None:
    said = "有两个快递一直没到，SF1122334455和中通的78812345690"
    assert last_entity(said, "中通那个咋在杭州卡了三天了") == "78812345690"


def test_a_predicate_binds_the_name_that_opens_its_clause_not_a_place_after_it() -> None:
    said = "My flight UA 882 to Tokyo was cancelled an hour ago."
    assert last_entity(said, "Will the cancelled flight be refunded?") == "UA 882"
