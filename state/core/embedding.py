"""The embedder protocol operators depend on (implementations live in sinks/models/embedders.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Maps texts to L2-normalised float32 rows; `passage` for stored text, `query` for questions."""

    name: str
    dim: int

    def passage(self, texts: Sequence[str]) -> Matrix: ...

    def query(self, texts: Sequence[str]) -> Matrix: ...


def embed_modes(embedder: Embedder, by_mode: Mapping[str, Sequence[str]]) -> dict[str, Matrix]:
    """Each mode's texts ("passage" / "query") embedded: in one round over the model's threads when
    the embedder offers `embed_modes` (a turn's store vector and its question then embed side by
    side instead of one after the other), else one call per mode.

    >>> class Echo:
    ...     name, dim = "e", 1
    ...     def passage(self, texts): return np.ones((len(texts), 1), dtype=np.float32)
    ...     def query(self, texts): return np.zeros((len(texts), 1), dtype=np.float32)
    >>> {m: v.ravel().tolist() for m, v in embed_modes(Echo(), {"passage": ["a"], "query": ["b", "c"]}).items()}
    {'passage': [1.0], 'query': [0.0, 0.0]}
    """
    batched = getattr(embedder, "embed_modes", None)
    if callable(batched):
        out: dict[str, Matrix] = batched(by_mode)
        return out
    return {
        mode: (embedder.query if mode == "query" else embedder.passage)(list(texts))
        for mode, texts in by_mode.items()
        if texts
    }


def normalise_rows(matrix: npt.NDArray[np.floating]) -> Matrix:
    """L2-normalise each row; zero rows stay zero.

    >>> normalise_rows(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """
    arr = np.asarray(matrix, dtype=np.float32)
    # numpy's stubs type `norm(..., keepdims=True)` as Any; for float32 rows it is float32.
    norms: npt.NDArray[np.float32] = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (arr / norms).astype(np.float32)
