"""English names widened to the noun phrase of the thing (state.coref.phrases)."""

from __future__ import annotations

import pytest

from state.coref.lexicon import load_coref_lexicon
from state.coref.mentions import extract_mentions

LEX = load_coref_lexicon().get()


@pytest.mark.parametrize(
    ("sentence", "name"),
    [
        ("I ordered a Lodge cast iron skillet and a set of knives.", "Lodge cast iron skillet"),
        ("My Honda CR-V is at your shop.", "Honda CR-V"),
        ("The Instant Pot Duo 7-in-1 I bought has a cracked lid.", "Instant Pot Duo 7-in-1"),
    ],
)
def test_a_name_grows_to_the_thing_said(sentence: str, name: str) -> None:
    assert name in [n.entity for n in extract_mentions(sentence, LEX)]


@pytest.mark.parametrize(
    ("sentence", "name"),
    [
        ("I updated the MyChart app yesterday.", "MyChart"),  # an app, a plan: what it is sold as
        ("I'm on the Unlimited Plus plan.", "Unlimited Plus"),
        ("Did the Garmin arrive?", "Garmin"),  # the verb of an inverted question
    ],
)
def test_a_name_does_not_take_what_it_is_sold_as_or_a_verb(sentence: str, name: str) -> None:
    assert name in [n.entity for n in extract_mentions(sentence, LEX)]
