"""The user's timeline at the question time: what recall reads of all of a user's memories.

Recall needs three things from every memory of the user that is valid and said by the question
time (docs/recall.md): the speakers (which names in a question are people), the BM25 share of
each memory for the question's words (the lexical tier, IDF over the timeline), and the status
of every open issue and promise (`state.recall.resolution`). `Timeline` is that view; two
implementations give the same answers:

* `ScannedTimeline`: over the memories themselves, read from the store for this question; it
  tokenises and passes over all of them (the reference, and the path for a store without an
  index);
* `state.recall.timeline_index.IndexedTimeline`: over the store's per-user index, kept up to
  date as memories are written, so a question reads only the memories sharing its words and the
  few that take part in resolution.

Input: memory ids and payloads (JSON dicts as the store holds them). Output: speakers, lexical
shares, issue views. State: none. Pure.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from state.recall.lexical import bm25_share, tokenize
from state.recall.resolution import IssueView, ResolutionLexicon, issue_views


@dataclass(frozen=True, slots=True)
class LexicalShares:
    """BM25 shares of the timeline's memories for one question.

    `positive`: the memories sharing a word with the question, and their share (> 0); `members`:
    every memory of the timeline (the others share nothing: 0); `size`: how many there are.
    """

    positive: Mapping[str, float]
    members: Container[str]
    size: int

    def get(self, mid: str) -> float | None:
        """The memory's share, or None when it is not in the timeline."""
        if mid not in self.members:
            return None
        return self.positive.get(mid, 0.0)

    def best(self, limit: int, exclude: Container[str] = ()) -> list[str]:
        """The `limit` best memories sharing a word, best first (ties: by id, the store's order)."""
        found = sorted((m for m in self.positive if m not in exclude), key=lambda m: (-self.positive[m], m))
        return found[:limit]


class Timeline(Protocol):
    """The user's memories valid and said by the question time, as recall reads them."""

    def __len__(self) -> int: ...

    def speakers(self) -> set[str]:
        """The speakers of the timeline, lower-cased ("" for a memory without one)."""
        ...

    def lexical(self, query_tokens: Sequence[str]) -> LexicalShares:
        """BM25 share of every memory for the query's tokens, IDF over the timeline."""
        ...

    def issues(self, now: datetime, lexicon: ResolutionLexicon) -> dict[str, IssueView]:
        """What the timeline says about its open issues and promises at `now` (every memory said
        by then takes part, valid or not)."""
        ...


def question_shares(text: str, timeline: Timeline, names: Sequence[str], stopwords: frozenset[str]) -> LexicalShares:
    """BM25 share of every memory in the user's timeline for the question's `text` (IDF over them);
    people named in the question are not words to match (they come back as the `person` component)."""
    name_tokens = set(tokenize(" ".join(names), stopwords))
    return timeline.lexical([t for t in tokenize(text, stopwords) if t not in name_tokens])


class ScannedTimeline:
    """A timeline over its memories themselves: each question tokenises and passes over all of them.

    >>> t = ScannedTimeline([("m1", {"text": "Melanie painted a sunrise", "speaker": "Mel"}), ("m2", {"text": "run"})])
    >>> sorted(t.speakers()), t.lexical(tokenize("sunrise")).best(5)
    (['', 'mel'], ['m1'])
    """

    def __init__(
        self,
        memories: Sequence[tuple[str, Mapping[str, Any]]],
        stopwords: frozenset[str] = frozenset(),
        history: Sequence[tuple[str, Mapping[str, Any]]] | None = None,
    ):
        """`history`: every memory said by the question time, valid or not (default: `memories`);
        the resolution pass reads it, since a confirmation whose validity ended still settled
        what it answered."""
        self._ids = [m for m, _ in memories]
        self._payloads = [p for _, p in memories]
        self._stopwords = stopwords
        said = memories if history is None else history
        self._said_ids = [m for m, _ in said]
        self._said_payloads = [p for _, p in said]

    def __len__(self) -> int:
        return len(self._ids)

    def speakers(self) -> set[str]:
        return {str(p.get("speaker") or "").lower() for p in self._payloads}

    def lexical(self, query_tokens: Sequence[str]) -> LexicalShares:
        docs = [tokenize(str(p.get("text", "")), self._stopwords) for p in self._payloads]
        shares = bm25_share(query_tokens, docs)
        positive = {m: float(v) for m, v in zip(self._ids, shares, strict=True) if v > 0}
        return LexicalShares(positive, frozenset(self._ids), len(self._ids))

    def issues(self, now: datetime, lexicon: ResolutionLexicon) -> dict[str, IssueView]:
        return issue_views(self._said_ids, self._said_payloads, now, lexicon, self._stopwords)
