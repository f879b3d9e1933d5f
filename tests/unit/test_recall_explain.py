"""Which unit of a picked turn a cue shows."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from state.recall.explain import shown_units


def _pool(turn: list[int], relevance: list[float], eligible: list[bool] | None = None) -> tuple[object, object]:
    batch = SimpleNamespace(turn=np.array(turn))
    scores = SimpleNamespace(
        relevance=np.array(relevance), eligible=np.array(eligible if eligible is not None else [True] * len(turn))
    )
    return batch, scores


def test_a_turn_shows_its_unit_nearest_the_question_in_the_turns_place() -> None:
    # turn 0 ranks by its label-heavy fragment (index 1); its sentence about the question is index 0
    batch, scores = _pool([0, 0, 1, 1], [0.7, 0.1, 0.3, 0.5])
    assert shown_units([1, 3], batch, scores) == [0, 3]  # type: ignore[arg-type]


def test_an_ineligible_unit_is_never_shown_in_place_of_the_pick() -> None:
    batch, scores = _pool([0, 0], [0.9, 0.2], [False, True])
    assert shown_units([1], batch, scores) == [1]  # type: ignore[arg-type]


def test_fallback_or_verified_picks_are_shown_as_picked() -> None:
    batch, scores = _pool([0, 0], [0.9, 0.2])
    assert shown_units([1], batch, scores, keep=frozenset({1})) == [1]  # type: ignore[arg-type]


def test_without_turn_codes_every_unit_is_its_own_turn() -> None:
    batch = SimpleNamespace(turn=None)
    scores = SimpleNamespace(relevance=np.array([0.1, 0.9]), eligible=np.array([True, True]))
    assert shown_units([0], batch, scores) == [0]  # type: ignore[arg-type]
