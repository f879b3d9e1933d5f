"""Shared by the coreference tests: the shipped lexicon and a dialogue run through the resolver."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from evals.coref_crosswoz import chosen_entity
from schemas.memory import CorefAnchor
from state.core.language import split_sentences
from state.coref.lexicon import CorefLexicon, load_coref_lexicon
from state.coref.resolver import CorefConfig, CorefState, CorefTurn, resolve_turn

TS = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
LEX: CorefLexicon = load_coref_lexicon().get()


def last_anchors(*texts: str) -> tuple[CorefAnchor, ...]:
    """The anchors of the last turn after every turn of the dialogue went through the resolver."""
    state: CorefState | None = None
    anchors: tuple[CorefAnchor, ...] = ()
    for n, text in enumerate(texts):
        turn = CorefTurn(f"t{n}", TS + timedelta(seconds=n), split_sentences(text))
        state, anchors = resolve_turn(state, turn, CorefConfig(), LEX)
    return anchors


def last_entity(*texts: str) -> str | None:
    """The entity the last turn's anchors resolve to (as the coreference evaluations score it)."""
    return chosen_entity(last_anchors(*texts))
