"""The abstain decision: offer the picked cues, or none when nothing stored is relevant enough.

Input: the ranked pool (`CandidateBatch`, `PoolScores`), the number of cues and the embedder's
relevance floor, the recall tables and the floor model. Output: the cues to offer, or none and the
picks as weak cues (`offer_split`), or the decision laid open (`FloorCase`,
read by `evals.floor_training`). State: none; the caller reads the
hot-reloaded tables and floor model once per question.

The floor judges exactly what would be offered: the fused ranking's first k with plain retrieval as
a floor (`keep_retrieved`). What it reads of each pick is the similarity part scaled by how many of
the specific things the question names the cue holds (its coverage, siblings included), the
grounded part whole (docs/recall.md). `recall_floor.yaml` can hand the verdict to a learned model
(`state.recall.floor_model`). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from state.recall.config import RecallTables
from state.recall.explain import shown_text
from state.recall.floor_model import FloorModel, floor_features, floor_inputs
from state.recall.scoring import CandidateBatch, PoolScores, keep_retrieved, replies, top_indices
from state.recall.siblings import siblings
from state.recall.specifics import Coverage, coverage, specific_terms

# A question in Han script: its cosine scale and the learned floor's `cjk` feature read it.
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


@dataclass(frozen=True, slots=True)
class FloorCase:
    """One recall's abstain decision laid open (evaluation: `evals.floor_training`): the learned floor's
    features, the rule floor's verdict, and the memories offered when recall answers."""

    features: np.ndarray
    rule_answers: bool
    offered: tuple[str, ...]  # memory ids


def offered_coverage(
    question: str, batch: CandidateBatch, scores: PoolScores, picked: Sequence[int], tables: RecallTables
) -> Coverage:
    """How many of the specific things the question names the memories about to be offered hold."""
    rw = tables.relevance
    texts = [shown_text(batch.payloads[i]) for i in picked]  # the cue as offered: unit, turn, turn before
    names = frozenset(s.lower() for s in (*batch.speakers, *scores.people) if s)
    terms = specific_terms(question, tables.general_terms)
    covered = coverage(terms, texts, rw.unmatched_floor, rw.identifier_mismatch, names)
    lacking = [t for t in terms if t.text in covered.missing]
    found = siblings(question, lacking, texts, tables.kin, tables.stopwords)
    if not found:
        return covered
    # the memories hold another value of what the question names: they are about a sibling matter
    return replace(covered, factor=min(covered.factor, rw.sibling_mismatch), siblings=found)


def floor_relevance(scores: PoolScores, i: int, covered: Coverage) -> float:
    """What the abstain floor reads: the similarity part scaled by the coverage, the grounded part whole;
    the user's own matter a question refers back to whole when it names nothing the memories lack."""
    owned = 0.0 if covered.missing or covered.siblings else float(scores.owned[i])
    # A sibling says the memories are about another matter: when they were said, or that the question
    # points at a matter, no longer vouches for them; only the identifier the question names does.
    grounded = scores.entity[i] if covered.siblings else scores.grounded[i]
    return max(float(scores.absolute[i]) * covered.factor, float(grounded), owned)


def judge(
    question: str, batch: CandidateBatch, scores: PoolScores, max_cues: int, tables: RecallTables
) -> tuple[list[int], Coverage]:
    """The picks the floor judges and their coverage: the fused ranking's first k with plain retrieval as
    a floor (`keep_retrieved`), exactly the cues offered when recall answers."""
    picked = top_indices(scores, max_cues, turn=batch.turn)
    answered = replies(batch, tables.relevance.neighbour_max_gap_s)
    picked = keep_retrieved(picked, scores, batch.semantic, batch.turn, max_cues, answered)
    covered = offered_coverage(question, batch, scores, picked, tables)  # the floor judges what would be offered
    return picked, covered


def floor_case(
    question: str,
    batch: CandidateBatch,
    scores: PoolScores,
    floor: float,
    picked: Sequence[int],
    covered: Coverage,
    offered: Sequence[int],
) -> FloorCase:
    """The abstain decision laid open: the learned floor's features (state/recall/floor_model.py) and
    the rule floor's verdict on the picks the floor judges (`covered`: their coverage), and the cues
    `offered` when recall answers."""
    relevance = [floor_relevance(scores, i, covered) for i in picked]
    inputs = floor_inputs(scores, picked, relevance, floor, covered, HAN.search(question) is not None)
    rule_answers = bool(picked) and max(inputs.floor_relevance) >= floor
    ids = tuple(batch.ids[i] for i in offered)
    return FloorCase(floor_features(inputs), rule_answers, ids)


def answers(
    question: str,
    batch: CandidateBatch,
    scores: PoolScores,
    floor: float,
    picked: Sequence[int],
    covered: Coverage,
    model: FloorModel,
    best: float,
) -> bool:
    """Whether recall offers cues: the rule floor's verdict on `best` (the most it read of the picks),
    or the learned floor's decision when `recall_floor.yaml` says `use: learned` (its features are
    read only then). Nothing picked: no."""
    if not picked:
        return False
    if model.learned:
        return model.answers(floor_case(question, batch, scores, floor, picked, covered, ()).features)
    return best >= floor


def best_floor_relevance(scores: PoolScores, picked: Sequence[int], covered: Coverage) -> float:
    """The most the rule floor reads of any pick (0 when nothing is picked)."""
    return max((floor_relevance(scores, i, covered) for i in picked), default=0.0)


@dataclass(frozen=True, slots=True)
class Offer:
    """What recall offers: the cues, or none and the picks as weak cues (abstained); `best` is the
    most the rule floor read of the picks, `floor` the floor it was held against, `learned` whether
    the learned floor made the decision."""

    cues: list[int]
    weak: list[int]
    best: float
    floor: float
    learned: bool = False

    def explain(self) -> str:
        """One line on the decision when recall abstained (empty when it offers cues)."""
        if self.cues:
            return ""
        if not self.weak:
            return "no cue: nothing stored for this user matches the question"
        why = "the learned floor abstained" if self.learned else "under the floor"
        return (
            f"no cue: the best relevance {self.best:.2f}, {why} {self.floor:.2f}; "
            f"{len(self.weak)} weak cue(s) shown, not used for the answer"
        )


def offer_split(
    question: str,
    batch: CandidateBatch,
    scores: PoolScores,
    *,
    max_cues: int,
    floor: float,
    tables: RecallTables,
    model: FloorModel,
) -> Offer:
    """The cues to offer, or none when nothing among the picks is relevant enough (abstain) and the
    picks that hold any relevance at all as weak cues."""
    picked, covered = judge(question, batch, scores, max_cues, tables)
    best = best_floor_relevance(scores, picked, covered)
    if answers(question, batch, scores, floor, picked, covered, model, best):
        return Offer(list(picked), [], best, floor, model.learned)
    # nothing stored is relevant enough: abstain rather than offer the least bad as a cue
    return Offer([], [i for i in picked if scores.final[i] > 0], best, floor, model.learned)
