"""Gender agreement of personal pronouns (state.coref.agreement), through the resolver."""

from __future__ import annotations

from state.coref.agreement import pronoun_gender, title_gender
from tests.coref_support import last_entity


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
    assert last_entity(*said, "When is she next available?") == "Dr. Patel"
    assert last_entity(*said, "Does he take Aetna?") == "Dr. Okafor"
