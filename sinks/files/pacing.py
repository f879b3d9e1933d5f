"""Rate-limit any partitioned Bytewax source: replay at a set number of records per second.

The rate is shared evenly among the source's partitions. Pacing uses `next_awake` (Bytewax
does not call `next_batch` before that time), so a paced source never blocks its worker.
Snapshots and resume are the inner source's own; the pace restarts from the resume point.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Generic, TypeVar

from bytewax.inputs import FixedPartitionedSource, StatefulSourcePartition

from schemas.errors import ConfigurationError

X = TypeVar("X")
S = TypeVar("S")


def _utc_now() -> datetime:
    return datetime.now(tz=UTC)


class _PacedPartition(StatefulSourcePartition[X, S], Generic[X, S]):
    def __init__(self, inner: StatefulSourcePartition[X, S], rate: float, now: Callable[[], datetime]) -> None:
        self._inner, self._rate, self._now = inner, rate, now
        self._next_at: datetime | None = None

    def next_batch(self) -> list[X]:
        batch = list(self._inner.next_batch())
        if batch:
            base = max(self._now(), self._next_at) if self._next_at is not None else self._now()
            self._next_at = base + timedelta(seconds=len(batch) / self._rate)
        return batch

    def next_awake(self) -> datetime | None:
        return self._next_at

    def snapshot(self) -> S:
        return self._inner.snapshot()

    def close(self) -> None:
        self._inner.close()


class PacedSource(FixedPartitionedSource[X, S], Generic[X, S]):
    """`inner` at no more than `rate` records per second in total.

    >>> PacedSource(None, 0)  # type: ignore[arg-type]
    Traceback (most recent call last):
    ...
    schemas.errors.ConfigurationError: replay rate must be > 0 records/s, got 0
    """

    def __init__(
        self, inner: FixedPartitionedSource[X, S], rate: float, now: Callable[[], datetime] = _utc_now
    ) -> None:
        if rate <= 0:
            raise ConfigurationError(f"replay rate must be > 0 records/s, got {rate}")
        self._inner, self._rate, self._now = inner, rate, now
        self._parts: int | None = None

    def list_parts(self) -> list[str]:
        parts = self._inner.list_parts()
        self._parts = max(1, len(parts))
        return parts

    def build_part(self, step_id: str, for_part: str, resume_state: S | None) -> _PacedPartition[X, S]:
        parts = self._parts if self._parts is not None else max(1, len(self._inner.list_parts()))
        inner = self._inner.build_part(step_id, for_part, resume_state)
        return _PacedPartition(inner, self._rate / parts, self._now)
