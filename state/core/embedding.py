"""The embedder protocol operators depend on (implementations live in sinks/models/embedders.py)."""

from __future__ import annotations

from collections.abc import Sequence
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
