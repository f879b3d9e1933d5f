"""References told apart by a word said beside their antecedent (state.coref.cues), through the resolver."""

from __future__ import annotations

from datetime import UTC, datetime

from evals.coref_crosswoz import chosen_entity
from state.core.language import split_sentences
from state.coref.lexicon import load_coref_lexicon
from state.coref.resolver import CorefConfig, CorefState, CorefTurn, resolve_turn

LEX = load_coref_lexicon().get()
TS = datetime(2026, 1, 1, tzinfo=UTC)


def _last(*turns: str) -> str | None:
    state: CorefState | None = None
    anchors: tuple = ()
    for i, text in enumerate(turns):
        state, anchors = resolve_turn(state, CorefTurn(f"t{i}", TS, split_sentences(text)), CorefConfig(), LEX)
    return chosen_entity(anchors)


def test_the_word_said_before_a_listed_identifier_picks_it() -> None:
    said = "I have a home policy HO-5528810 and an auto policy AU-3390127 with you."
    assert _last(said, "What happens to the home one?") == "HO-5528810"
    assert _last(said, "What happens to the auto one?") == "AU-3390127"


def test_a_chinese_word_before_the_pointer_picks_what_it_was_said_with() -> None:
    said = "有两个快递一直没到，SF1122334455和中通的78812345690"
    assert _last(said, "中通那个咋在杭州卡了三天了") == "78812345690"


def test_a_predicate_binds_the_name_that_opens_its_clause_not_a_place_after_it() -> None:
    said = "My flight UA 882 to Tokyo was cancelled an hour ago."
    assert _last(said, "Will the cancelled flight be refunded?") == "UA 882"
