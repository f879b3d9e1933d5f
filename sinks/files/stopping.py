"""Stop any partitioned Bytewax source on request: the clean end of a live run (Ctrl-C, SIGTERM).

Once the shared `stop` event is set, every partition reports end of input at its next call, so
the dataflow drains what is in flight, closes its windows and sinks, and returns normally
instead of dying inside an operator. Snapshots and resume are the inner source's own.
"""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Generic, TypeVar

from bytewax.inputs import FixedPartitionedSource, StatefulSourcePartition

X = TypeVar("X")
S = TypeVar("S")


class _StoppablePartition(StatefulSourcePartition[X, S], Generic[X, S]):
    def __init__(self, inner: StatefulSourcePartition[X, S], stop: threading.Event) -> None:
        self._inner, self._stop = inner, stop

    def next_batch(self) -> list[X]:
        if self._stop.is_set():
            raise StopIteration
        return list(self._inner.next_batch())

    def next_awake(self) -> datetime | None:
        return None if self._stop.is_set() else self._inner.next_awake()

    def snapshot(self) -> S:
        return self._inner.snapshot()

    def close(self) -> None:
        self._inner.close()


class StoppableSource(FixedPartitionedSource[X, S], Generic[X, S]):
    """`inner` until `stop` is set, then end of input on every partition."""

    def __init__(self, inner: FixedPartitionedSource[X, S], stop: threading.Event) -> None:
        self._inner, self._stop = inner, stop

    def list_parts(self) -> list[str]:
        return self._inner.list_parts()

    def build_part(self, step_id: str, for_part: str, resume_state: S | None) -> _StoppablePartition[X, S]:
        return _StoppablePartition(self._inner.build_part(step_id, for_part, resume_state), self._stop)
