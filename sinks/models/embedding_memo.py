"""A bounded memo in front of an embedder: the same text in the same mode is embedded once.

Why: in the flow a customer turn is embedded as a *query* twice — by goal anchoring (the
task state machine) and by the recall trigger (its question, which is the turn's text when it
names no person) — and the embedder is the write path's floor (docs/design.md#performance-budget). The vectors are
identical (same model, same mode, same text), so the second call is served from here.

Input: `passage(texts)` / `query(texts)` as the `Embedder` protocol. Output: the same rows
the wrapped embedder gives. State: an LRU of (mode, text) → row, at most `size` entries,
shared by the workers of a process (a lock guards it); texts missing from it are embedded in
one call to the wrapped embedder, in order. Never discarded except by LRU eviction.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence

import numpy as np

from state.core.embedding import Embedder, Matrix, embed_modes


class MemoEmbedder:
    """`Embedder` that remembers the last `size` (mode, text) rows.

    >>> class Counting:
    ...     name, dim, calls = "c", 2, 0
    ...     def passage(self, texts): return self.query(texts)
    ...     def query(self, texts):
    ...         self.calls += len(texts)
    ...         return np.array([[float(len(t)), 1.0] for t in texts], dtype=np.float32)
    >>> inner = Counting()
    >>> memo = MemoEmbedder(inner, size=8)
    >>> memo.query(["ab", "abc"]).tolist(), memo.query(["abc", "ab", "x"])[:, 0].tolist(), inner.calls
    ([[2.0, 1.0], [3.0, 1.0]], [3.0, 2.0, 1.0], 3)
    >>> memo.stats()
    (2, 3)
    """

    def __init__(self, inner: Embedder, size: int = 4096) -> None:
        self._inner = inner
        self._size = size
        self._rows: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0
        self.name = inner.name
        self.dim = inner.dim

    @property
    def inner(self) -> Embedder:
        return self._inner

    def stats(self) -> tuple[int, int]:
        """(hits, misses) in texts since start."""
        return self._hits, self._misses

    def passage(self, texts: Sequence[str]) -> Matrix:
        return self._embed("passage", texts)

    def query(self, texts: Sequence[str]) -> Matrix:
        return self._embed("query", texts)

    def embed_modes(self, by_mode: Mapping[str, Sequence[str]]) -> dict[str, Matrix]:
        """Several modes at once: the texts missing from the memo go to the model in one round.

        >>> class Modes:
        ...     name, dim, rounds = "m", 1, []
        ...     def embed_modes(self, by_mode):
        ...         self.rounds.append({m: list(t) for m, t in by_mode.items()})
        ...         return {m: np.full((len(t), 1), float(m == "query"), dtype=np.float32) for m, t in by_mode.items()}
        >>> memo = MemoEmbedder(Modes())
        >>> out = memo.embed_modes({"passage": ["a", "b"], "query": ["a"]})
        >>> out["query"].tolist(), memo.embed_modes({"passage": ["a"], "query": ["c"]})["passage"].tolist()
        ([[1.0]], [[0.0]])
        >>> memo.inner.rounds, memo.stats()
        ([{'passage': ['a', 'b'], 'query': ['a']}, {'query': ['c']}], (1, 4))
        """
        wanted = {mode: list(texts) for mode, texts in by_mode.items() if texts}
        with self._lock:
            known = {mode: {t: self._rows.get((mode, t)) for t in texts} for mode, texts in wanted.items()}
        missing = {mode: [t for t, row in rows.items() if row is None] for mode, rows in known.items()}
        fresh = embed_modes(self._inner, {m: t for m, t in missing.items() if t})
        with self._lock:
            for mode, matrix in fresh.items():
                rows = dict(zip(missing[mode], matrix, strict=True))
                known[mode].update(rows)
                self._remember(mode, rows)
            n_missing = sum(len(t) for t in missing.values())
            self._misses += n_missing
            self._hits += sum(len(t) for t in wanted.values()) - n_missing
        out: dict[str, Matrix] = {}
        for mode, texts in wanted.items():
            found = [known[mode][t] for t in texts]
            out[mode] = np.stack([r for r in found if r is not None]).astype(np.float32, copy=False)
        return out

    def _remember(self, mode: str, rows: dict[str, np.ndarray]) -> None:
        """Store fresh rows (the lock held) and evict the oldest past `size`."""
        for text, row in rows.items():
            self._rows[(mode, text)] = row
            self._rows.move_to_end((mode, text))
        while len(self._rows) > self._size:
            self._rows.popitem(last=False)

    def _embed(self, mode: str, texts: Sequence[str]) -> Matrix:
        rows: list[np.ndarray | None] = []
        with self._lock:
            for text in texts:
                row = self._rows.get((mode, text))
                if row is not None:
                    self._rows.move_to_end((mode, text))
                rows.append(row)
        missing = list(dict.fromkeys(t for t, r in zip(texts, rows, strict=True) if r is None))
        fresh: dict[str, np.ndarray] = {}
        if missing:
            matrix = self._inner.passage(missing) if mode == "passage" else self._inner.query(missing)
            fresh = {text: matrix[i] for i, text in enumerate(missing)}
        with self._lock:
            self._misses += len(missing)
            self._hits += len(texts) - len(missing)
            self._remember(mode, fresh)
        out = [r if r is not None else fresh[t] for t, r in zip(texts, rows, strict=True)]
        if not out:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack(out).astype(np.float32, copy=False)


def remembers(embedder: Embedder) -> bool:
    """Whether a memo sits in front of the model (directly, or under wrappers exposing `inner`): then
    embedding a batch ahead of single requests saves model calls instead of doubling them.

    >>> class Model:
    ...     name, dim = "m", 1
    >>> remembers(MemoEmbedder(Model())), remembers(Model())  # type: ignore[arg-type]
    (True, False)
    """
    seen: object = embedder
    while seen is not None:
        if isinstance(seen, MemoEmbedder):
            return True
        seen = getattr(seen, "inner", None)
    return False
