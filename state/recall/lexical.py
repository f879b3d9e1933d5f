"""Lexical relevance for recall: a bilingual tokeniser and BM25 (BM25+ with a share of the full match).

Input: the query tokens and either the docs of a pool (term counts made here) or the term counts
of some docs of a larger collection with that collection's statistics (`Bm25Stats`: what the
user's timeline index keeps, `state.recall.timeline_index`). Output: one score per doc (numpy).
State: none (a bounded token cache keyed by text).

Why our own BM25 and not `bm25s` / `rank-bm25`: the collection is one user's memories at the
question time (validity decides which count), so its statistics change with the question's time,
and the tokeniser must handle Chinese. `rank-bm25` loops in Python per document; `bm25s` is built
around a static sparse index and whitespace/regex tokenisation with no CJK handling. The formula
is twenty lines; the tokeniser is the part that matters: English words are stemmed with Snowball
(PyStemmer, C), Chinese runs become character unigrams and bigrams (the usual choice for Chinese
BM25 without a segmenter). IDF is computed over the collection, with the BM25+ floor so a term
present everywhere still counts a little rather than going negative.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt
import Stemmer

_LATIN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")

_STEMMER = Stemmer.Stemmer("english")

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Bm25Params:
    k1: float = 1.2
    b: float = 0.75
    delta: float = 0.5


def _cjk_grams(run: str, stop: frozenset[str]) -> list[str]:
    chars = [c for c in run]
    grams = [c for c in chars if c not in stop]
    grams.extend(run[i : i + 2] for i in range(len(run) - 1))
    return grams


def tokenize(text: str, stopwords: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """Lower-cased, stemmed English words and Chinese unigrams + bigrams, stopwords removed.

    >>> tokenize("Melanie painted a sunrise", frozenset({"a"}))
    ('melani', 'paint', 'sunris')
    >>> tokenize("客服态度")
    ('客', '服', '态', '度', '客服', '服态', '态度')
    """
    return _tokenize_cached(text, stopwords)


@lru_cache(maxsize=200_000)
def _tokenize_cached(text: str, stopwords: frozenset[str]) -> tuple[str, ...]:
    latin: list[str] = []
    out: list[str] = []
    for match in _TOKEN.finditer(text.lower()):
        tok = match.group(0)
        if _CJK_RUN.fullmatch(tok):
            out.extend(_cjk_grams(tok, stopwords))
            continue
        base = tok.split("'", 1)[0]
        if base and base not in stopwords:
            latin.append(base)
    if latin:
        out[:0] = _STEMMER.stemWords(latin)
    return tuple(out)


def bm25_scores(
    query_tokens: Sequence[str], docs: Sequence[Sequence[str]], params: Bm25Params = Bm25Params()
) -> FloatArray:
    """BM25+ score of each doc for the query, IDF over the pool; zeros when nothing matches.

    >>> s = bm25_scores(["paint"], [["paint", "sunris"], ["run"], []])
    >>> bool(s[0] > 0 and s[1] == 0 and s[2] == 0)
    True
    """
    n = len(docs)
    if n == 0:
        return np.zeros(0)
    terms = list(dict.fromkeys(query_tokens))
    if not terms:
        return np.zeros(n)
    tf, lengths = term_counts(terms, docs)
    df = np.count_nonzero(tf, axis=0)
    return bm25_rows(tf, lengths, Bm25Stats(n, float(lengths.mean()), df), params)


def term_counts(terms: Sequence[str], docs: Sequence[Sequence[str]]) -> tuple[FloatArray, FloatArray]:
    """How often each of `terms` (distinct) occurs in each doc, and each doc's length."""
    index = {t: j for j, t in enumerate(terms)}
    tf = np.zeros((len(docs), len(terms)))
    lengths = np.empty(len(docs))
    for i, doc in enumerate(docs):
        lengths[i] = len(doc)
        for tok in doc:
            j = index.get(tok)
            if j is not None:
                tf[i, j] += 1.0
    return tf, lengths


@dataclass(frozen=True, slots=True)
class Bm25Stats:
    """The collection side of BM25: how many docs, their mean length, each query term's doc frequency."""

    n: int
    mean_length: float
    df: npt.NDArray[np.float64] | npt.NDArray[np.int64]

    def idf(self) -> FloatArray:
        return np.asarray(np.log1p((self.n - self.df + 0.5) / (self.df + 0.5)), dtype=np.float64)


def bm25_rows(tf: FloatArray, lengths: FloatArray, stats: Bm25Stats, params: Bm25Params = Bm25Params()) -> FloatArray:
    """BM25+ of some docs of a collection (term counts `tf`, one row per doc), against `stats`.

    Rows without any query term score 0, so a caller may pass only the docs that hold one: the
    scores of those are the same as over the whole collection.
    """
    avg = stats.mean_length or 1.0
    norm = params.k1 * (1.0 - params.b + params.b * lengths / avg)
    present = tf > 0
    part = np.where(present, tf * (params.k1 + 1.0) / (tf + norm[:, None]) + params.delta, 0.0)
    # Term by term rather than `part @ idf`: a matrix product may round a row differently with
    # other rows beside it, and a doc must score the same in any subset of its collection.
    scores = np.zeros(len(tf))
    for j, w in enumerate(stats.idf()):
        scores += part[:, j] * w
    return scores


def bm25_share(
    query_tokens: Sequence[str], docs: Sequence[Sequence[str]], params: Bm25Params = Bm25Params()
) -> FloatArray:
    """BM25 as a share of the query's full match, in [0, 1]: an absolute score, not scaled by the pool.

    The reference is the score of a document of average length holding every query term once,
    so one shared common character is a small share whatever else the pool holds, and a pool of
    unrelated memories stays near zero instead of its best one being stretched to 1.

    >>> s = bm25_share(["paint", "sunris"], [["paint", "sunris"], ["paint"], ["run"]])
    >>> bool(s[0] > s[1] > s[2] == 0.0), bool(s.max() <= 1.0)
    (True, True)
    """
    n = len(docs)
    terms = list(dict.fromkeys(query_tokens))
    if n == 0 or not terms:
        return np.zeros(n)
    tf, lengths = term_counts(terms, docs)
    return bm25_share_rows(tf, lengths, Bm25Stats(n, float(lengths.mean()), np.count_nonzero(tf, axis=0)), params)


def bm25_share_rows(
    tf: FloatArray, lengths: FloatArray, stats: Bm25Stats, params: Bm25Params = Bm25Params()
) -> FloatArray:
    """`bm25_share` of some docs of a collection, against the collection's `stats` (see `bm25_rows`)."""
    ideal = float(stats.idf().sum()) * (1.0 + params.delta)
    if ideal <= 0:
        return np.zeros(len(tf))
    return np.minimum(1.0, bm25_rows(tf, lengths, stats, params) / ideal)


def token_set(texts: Iterable[str], stopwords: frozenset[str] = frozenset()) -> set[str]:
    """All tokens of several texts (used to find which query words name a person)."""
    out: set[str] = set()
    for text in texts:
        out.update(tokenize(text, stopwords))
    return out
