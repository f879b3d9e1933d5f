"""Embedder adapters: configuration mistakes fail at start with a ConfigurationError."""

from __future__ import annotations

import sys
import types

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
