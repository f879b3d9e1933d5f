"""A bounded, thread-safe LRU of passage vectors shared by the operators of one process.

The tagger's head embeds each segment as its memory unit will be stored; the store embedding
later asks for the same text. Wrapping the store embedder once (flows/tagging_stage.py) makes the
second request a cache hit, so a single-segment unit costs one model call, not two. Vectors are
identical to the wrapped embedder's (same call, same text); `query` is never cached.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from state.embedding import Embedder, Matrix


class CachedEmbedder:
    """`passage` through an LRU of `max_entries` texts; everything else is the wrapped embedder.

    >>> from sinks.embedders import load_embedder
    >>> cached = CachedEmbedder(load_embedder("static"), max_entries=2)
    >>> a = cached.passage(["你好"]); b = cached.passage(["你好"])
    >>> bool((a == b).all()), cached.hits
    (True, 1)
    """

    def __init__(self, inner: Embedder, *, max_entries: int = 4096) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self._max = max_entries
        self._rows: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def passage(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            found = {t: self._rows[t] for t in texts if t in self._rows}
            for t in found:
                self._rows.move_to_end(t)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            fresh = self.inner.passage(missing)
            with self._lock:
                for t, row in zip(missing, fresh, strict=True):
                    self._rows[t] = row
                    found[t] = row
                while len(self._rows) > self._max:
                    self._rows.popitem(last=False)
        with self._lock:
            self.hits += len(texts) - len(missing)
            self.misses += len(missing)
        return np.vstack([found[t] for t in texts]).astype(np.float32)

    def query(self, texts: Sequence[str]) -> Matrix:
        return self.inner.query(texts)
