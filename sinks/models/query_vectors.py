"""Memory vectors in e5's `query:` mode: one vector per text for storing, anchoring and asking.

e5 models embed stored text with a `passage:` prefix and questions with `query:`. Goal
anchoring compares turns with `query:` vectors (its thresholds are calibrated so) and recall
asks with `query:` vectors, so a customer turn stored with `passage:` is embedded twice. This
wrapper answers `passage` with the model's `query` rows: behind the memo, a turn's text is then
embedded once for all three. Switching an existing store to this mode needs its vectors rebuilt
(the two modes' vectors are not comparable with each other).

Input/Output: the `Embedder` protocol. State: none.
"""

from __future__ import annotations

from collections.abc import Sequence

from state.core.embedding import Embedder, Matrix


class QueryVectors:
    """`Embedder` whose `passage` is the wrapped embedder's `query`.

    >>> import numpy as np
    >>> class Two:
    ...     name, dim = "two", 1
    ...     def passage(self, texts): return np.zeros((len(texts), 1), dtype=np.float32)
    ...     def query(self, texts): return np.ones((len(texts), 1), dtype=np.float32)
    >>> QueryVectors(Two()).passage(["a"]).tolist(), QueryVectors(Two()).name
    ([[1.0]], 'two')
    """

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.name = inner.name
        self.dim = inner.dim

    @property
    def inner(self) -> Embedder:
        return self._inner

    def passage(self, texts: Sequence[str]) -> Matrix:
        return self._inner.query(texts)

    def query(self, texts: Sequence[str]) -> Matrix:
        return self._inner.query(texts)
