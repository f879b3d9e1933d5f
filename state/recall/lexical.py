"""Lexical relevance for recall: a bilingual tokeniser and BM25 over one candidate pool.

Input: the query text and the texts of the candidates recall already fetched. Output: one
BM25 score per candidate (numpy). State: none (a bounded token cache keyed by text).

Why our own BM25 and not `bm25s` / `rank-bm25`: recall scores an ad-hoc pool of ≤ a few
hundred candidates per question (the store already filtered them by tenant, user,
validity and class), so there is no corpus index to build; what matters is one vectorised
pass over the pool and a tokeniser that handles Chinese. `rank-bm25` loops in Python per
document; `bm25s` is built around a persistent sparse index and whitespace/regex
tokenisation with no CJK handling. The formula is twenty lines; the tokeniser is the part
that matters: English words are stemmed with Snowball (PyStemmer, C), Chinese runs become
character unigrams and bigrams (the usual choice for Chinese BM25 without a segmenter).
IDF is computed over the pool, with the BM25+ floor so a term present everywhere still
counts a little rather than going negative.
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
    index = {t: j for j, t in enumerate(terms)}
    tf = np.zeros((n, len(terms)))
    lengths = np.empty(n)
    for i, doc in enumerate(docs):
        lengths[i] = len(doc)
        for tok in doc:
            j = index.get(tok)
            if j is not None:
                tf[i, j] += 1.0
    df = np.count_nonzero(tf, axis=0)
    idf = np.log1p((n - df + 0.5) / (df + 0.5))
    avg = float(lengths.mean()) or 1.0
    norm = params.k1 * (1.0 - params.b + params.b * lengths / avg)
    present = tf > 0
    part = np.where(present, tf * (params.k1 + 1.0) / (tf + norm[:, None]) + params.delta, 0.0)
    return np.asarray(part @ idf, dtype=np.float64)


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
    scores = bm25_scores(terms, docs, params)
    df = _df(terms, docs)
    idf = np.log1p((n - df + 0.5) / (df + 0.5))
    ideal = float(idf.sum()) * (1.0 + params.delta)
    return np.minimum(1.0, scores / ideal) if ideal > 0 else np.zeros(n)


def _df(terms: Sequence[str], docs: Sequence[Sequence[str]]) -> FloatArray:
    index = {t: j for j, t in enumerate(terms)}
    df = np.zeros(len(terms))
    for doc in docs:
        for j in {index[tok] for tok in doc if tok in index}:
            df[j] += 1.0
    return df


def token_set(texts: Iterable[str], stopwords: frozenset[str] = frozenset()) -> set[str]:
    """All tokens of several texts (used to find which query words name a person)."""
    out: set[str] = set()
    for text in texts:
        out.update(tokenize(text, stopwords))
    return out
