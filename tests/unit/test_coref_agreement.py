"""Gender agreement of personal pronouns (state.coref.agreement), through the resolver."""

from __future__ import annotations

from datetime import UTC, datetime

from evals.coref_crosswoz import chosen_entity
from state.core.language import split_sentences
from state.coref.agreement import pronoun_gender, title_gender
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


def test_genders_of_pronouns_and_titles() -> None:
    assert (pronoun_gender("Him"), pronoun_gender("她"), pronoun_gender("他"), pronoun_gender("it")) == (
        "m",
        "f",
        None,
        None,
    )
    assert (title_gender("Ms. Alvarez"), title_gender("Mr. Chen"), title_gender("王女士"), title_gender("Dr. Kim")) == (
        "f",
        "m",
        "f",
        None,
    )


def test_a_pronoun_skips_a_person_of_the_other_gender_and_continues_its_own() -> None:
    said = (
        "I need to cancel my appointment with Dr. Patel on Thursday.",
        "Sure. Would you like to reschedule with her, or see Dr. Okafor, who has openings this week?",
    )
    assert _last(*said, "When is she next available?") == "Dr. Patel"
    assert _last(*said, "Does he take Aetna?") == "Dr. Okafor"
