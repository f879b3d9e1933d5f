"""A store handle for the HTTP API that opens lazily and lets go when idle.

Input: a factory that opens the configured backend. Output: a `MemoryStore` whose every call
runs on the currently open handle. State: the open handle, the time of the last call and the
number of calls in flight; discarded by `release_if_idle()` (run by a timer thread) after
`idle_release_s` without a call, and by `close()` at shutdown.

Why: the embedded backends lock their directory. qdrant-edge takes an exclusive lock on its
write-ahead log (a second process gets `Can't init WAL: WouldBlock`), and qdrant-client's local
mode locks its folder too, so `recallflow serve` and `recallflow replay` cannot hold the same
embedded store at once. The lease opens the store on the first request after a replay has
finished, answers 503 (`StoreUnavailableError`) while a replay holds it, and closes it again
after an idle spell so the next replay can open it. A store server (`qdrant_server`) has no
such lock: pass `idle_release_s=None` and the handle is kept.

Calls are serialised by one lock: the inspector's load is small, and the embedded engine is
not documented as safe for concurrent use from several threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime

from schemas.errors import ConfigurationError, StoreError, StoreUnavailableError
from sinks.store.base import Hit, MemoryStore, StoredPoint, StoreFilter, TimelineSource, Vector
from state.recall.timeline import Timeline


class LeasedStore:
    """`MemoryStore` over a handle opened on demand and released when idle."""

    name = "leased"

    def __init__(
        self,
        opener: Callable[[], MemoryStore],
        *,
        dim: int,
        idle_release_s: float | None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._opener = opener
        self._dim = dim
        self._idle_release_s = idle_release_s
        self._monotonic = monotonic
        self._lock = threading.RLock()
        self._store: MemoryStore | None = None
        self._last_used = monotonic()
        self.opens = 0
        self.last_error: str | None = None

    @property
    def is_open(self) -> bool:
        return self._store is not None

    @property
    def backend(self) -> str:
        return self._store.name if self._store is not None else "closed"

    def _acquire(self) -> MemoryStore:
        if self._store is not None:
            return self._store
        try:
            store = self._opener()
            store.ensure_collection(self._dim)
        except ConfigurationError:
            raise  # wrong dimension or backend: not transient, fix the settings
        except StoreError as exc:
            self.last_error = str(exc)
            msg = f"the store cannot be opened now (is a replay writing it?): {exc}"
            raise StoreUnavailableError(msg) from exc
        self._store = store
        self.opens += 1
        self.last_error = None
        return store

    def ping(self) -> None:
        """Open the store if needed (readiness); raises StoreUnavailableError when it cannot."""
        with self._lock:
            self._acquire()
            self._last_used = self._monotonic()

    def release_if_idle(self) -> bool:
        """Close the handle when idle for `idle_release_s`; True when it was closed."""
        if self._idle_release_s is None:
            return False
        with self._lock:
            if self._store is None or self._monotonic() - self._last_used < self._idle_release_s:
                return False
            store, self._store = self._store, None
            store.close()
            return True

    def _run(self, fn: Callable[[MemoryStore], object]) -> object:
        with self._lock:
            try:
                return fn(self._acquire())
            finally:
                self._last_used = self._monotonic()

    # -- MemoryStore ---------------------------------------------------------------------

    def ensure_collection(self, dim: int) -> None:
        if dim != self._dim:
            msg = f"the API's store lease was opened for {self._dim}-dim vectors, not {dim}"
            raise ConfigurationError(msg)
        self.ping()

    def upsert(self, points: Sequence[StoredPoint]) -> None:
        self._run(lambda s: s.upsert(points))

    def search(self, vector: Vector, flt: StoreFilter, limit: int, *, with_vectors: bool = False) -> list[Hit]:
        out = self._run(lambda s: s.search(vector, flt, limit, with_vectors=with_vectors))
        return out  # type: ignore[return-value]

    def retrieve(self, ids: Sequence[str], *, with_vectors: bool = False) -> list[Hit]:
        return self._run(lambda s: s.retrieve(ids, with_vectors=with_vectors))  # type: ignore[return-value]

    def scroll(self, flt: StoreFilter, limit: int = 10_000) -> list[Hit]:
        return self._run(lambda s: s.scroll(flt, limit))  # type: ignore[return-value]

    def count(self, flt: StoreFilter | None = None) -> int:
        return self._run(lambda s: s.count(flt))  # type: ignore[return-value]

    def delete(self, ids: Sequence[str]) -> None:
        self._run(lambda s: s.delete(ids))

    def timeline(
        self, scope: Mapping[str, str], at: datetime, skip: Collection[str], limit: int, stopwords: frozenset[str]
    ) -> Timeline | None:
        """The open handle's timeline index (dropped with the handle), or None when its backend keeps none."""

        def view(s: MemoryStore) -> Timeline | None:
            return s.timeline(scope, at, skip, limit, stopwords) if isinstance(s, TimelineSource) else None

        return self._run(view)  # type: ignore[return-value]

    def close(self) -> None:
        with self._lock:
            store, self._store = self._store, None
        if store is not None:
            store.close()


class IdleReleaser:
    """A daemon thread calling `lease.release_if_idle()` every `period_s` until stopped."""

    def __init__(self, lease: LeasedStore, period_s: float = 1.0) -> None:
        self._lease = lease
        self._period_s = period_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="store-idle-release", daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(self._period_s):
            self._lease.release_if_idle()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
