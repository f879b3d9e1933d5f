"""The embedding memo: same rows as the model, one model call per (mode, text), bounded."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from sinks.models.embedders import load_embedder
from sinks.models.embedding_memo import MemoEmbedder
from state.core.embedding import Matrix

STATIC = load_embedder("static")


class Counting:
    def __init__(self) -> None:
        self.name, self.dim = STATIC.name, STATIC.dim
        self.texts: list[tuple[str, str]] = []

    def passage(self, texts: Sequence[str]) -> Matrix:
        self.texts += [("passage", t) for t in texts]
        return STATIC.passage(texts)

    def query(self, texts: Sequence[str]) -> Matrix:
        self.texts += [("query", t) for t in texts]
        return STATIC.query(texts)


@given(st.lists(st.sampled_from(["订单", "where is it", "退款", "ok", "订单 where"]), max_size=12))
def test_rows_equal_the_models_and_each_text_is_embedded_once(texts: list[str]) -> None:
    inner = Counting()
    memo = MemoEmbedder(inner, size=100)
    first, second = memo.query(texts), memo.query(texts)
    assert first.shape == (len(texts), STATIC.dim)
    if texts:
        np.testing.assert_allclose(first, STATIC.query(texts), rtol=1e-6)
    np.testing.assert_array_equal(first, second)
    assert sorted(inner.texts) == sorted({("query", t) for t in texts})


def test_passage_and_query_are_kept_apart() -> None:
    inner = Counting()
    memo = MemoEmbedder(inner)
    memo.passage(["订单"])
    memo.query(["订单"])
    assert inner.texts == [("passage", "订单"), ("query", "订单")]
    assert memo.name == STATIC.name
    assert memo.dim == STATIC.dim


def test_the_memo_is_bounded_least_recently_used_first() -> None:
    inner = Counting()
    memo = MemoEmbedder(inner, size=2)
    memo.query(["a", "b"])
    memo.query(["a"])  # a is now the most recent
    memo.query(["c"])  # evicts b
    memo.query(["a", "b"])
    assert [t for _, t in inner.texts] == ["a", "b", "c", "b"]
    assert memo.stats() == (2, 4)


def test_workers_sharing_the_memo_get_consistent_rows() -> None:
    inner = Counting()
    memo = MemoEmbedder(inner, size=64)
    texts = [f"turn {i % 16}" for i in range(200)]
    with ThreadPoolExecutor(4) as pool:
        rows = list(pool.map(lambda t: memo.query([t])[0], texts))
    for text, row in zip(texts, rows, strict=True):
        np.testing.assert_allclose(row, STATIC.query([text])[0], rtol=1e-6)
    assert len(set(inner.texts)) == 16


def test_an_empty_call_returns_an_empty_matrix() -> None:
    assert MemoEmbedder(Counting()).passage([]).shape == (0, STATIC.dim)
