"""Honest turn-level baselines for recall evaluations: dense, BM25 and their RRF fusion.

Every evaluation that reports a RecallFlow figure reports these three beside it, from the
same run and over the same turns, so an advantage is measured against a retriever a
practitioner would actually build in an afternoon:

* dense: the embedder over each turn as ``"speaker: text"`` (for e5 models the engine adds
  the ``passage: `` / ``query: `` prefixes), cosine to the question;
* BM25: the same ``"speaker: text"`` strings with the recall tokeniser (stemmed English,
  Chinese unigrams + bigrams), IDF over the user's turns, absolute scores;
* RRF: reciprocal-rank fusion of the two lists (k = 60, the usual constant).

Each baseline sees one user's turns said before the question and nothing else: the same
isolation RecallFlow gets.

>>> rrf([["a", "b", "c"], ["c", "a"]], 3)
['a', 'c', 'b']
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from state.core.embedding import Embedder
from state.recall.lexical import bm25_scores, tokenize

RRF_K = 60
BASELINES = ("dense", "bm25", "rrf")


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn as the baselines see it."""

    turn_id: str
    user: str
    ts: float
    speaker: str
    text: str

    @property
    def passage(self) -> str:
        return f"{self.speaker}: {self.text}" if self.speaker else self.text


def rrf(lists: Sequence[Sequence[str]], k: int, constant: int = RRF_K) -> list[str]:
    """Reciprocal-rank fusion: sum of 1 / (constant + rank) over the lists; ties keep first-seen order."""
    score: dict[str, float] = defaultdict(float)
    for ranked in lists:
        for rank, item in enumerate(ranked):
            score[item] += 1.0 / (constant + rank + 1)
    return sorted(score, key=lambda item: -score[item])[:k]


class TurnBaselines:
    """Dense, BM25 and RRF rankings of one user's earlier turns for a question."""

    def __init__(self, turns: Sequence[Turn], embedder: Embedder, stopwords: frozenset[str] = frozenset()) -> None:
        self._turns = list(turns)
        self._stop = stopwords
        self._vectors: npt.NDArray[np.float32] = embedder.passage([t.passage for t in self._turns])
        self._tokens = [tokenize(t.passage, stopwords) for t in self._turns]
        self._by_user: dict[str, list[int]] = defaultdict(list)
        for i, t in enumerate(self._turns):
            self._by_user[t.user].append(i)

    def _pool(self, user: str, before: float) -> list[int]:
        return [i for i in self._by_user.get(user, ()) if self._turns[i].ts <= before]

    def rank(
        self, question: str, qvec: npt.NDArray[np.float32], user: str, before: float, k: int
    ) -> dict[str, list[str]]:
        """Turn ids, best first, for each baseline (dense, bm25, rrf); at most k each."""
        pool = self._pool(user, before)
        if not pool:
            return {name: [] for name in BASELINES}
        ids = [self._turns[i].turn_id for i in pool]
        cos = self._vectors[pool] @ qvec
        dense = [ids[j] for j in np.argsort(-cos, kind="stable")]
        bm = bm25_scores(tokenize(question, self._stop), [self._tokens[i] for i in pool])
        matched = np.flatnonzero(bm > 0)
        bm25 = [ids[j] for j in matched[np.argsort(-bm[matched], kind="stable")]]
        deep = max(k, 100)
        return {"dense": dense[:k], "bm25": bm25[:k], "rrf": rrf([dense[:deep], bm25[:deep]], k)}
