"""JSONL file sink for typed records (dead letters, recall results, archived tasks ...).

Appends one `model_dump_json()` line per record and flushes each batch; workers of one
process share a lock so lines never interleave.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Generic, TypeVar

from bytewax.outputs import DynamicSink, StatelessSinkPartition
from pydantic import BaseModel

R = TypeVar("R", bound=BaseModel)
_LOCK = threading.Lock()


class _JsonlPartition(StatelessSinkPartition[R], Generic[R]):
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("a", encoding="utf-8")

    def write_batch(self, items: list[R]) -> None:
        lines = "".join(item.model_dump_json() + "\n" for item in items)
        with _LOCK:
            self._file.write(lines)
            self._file.flush()

    def close(self) -> None:
        self._file.close()


class JsonlSink(DynamicSink[R], Generic[R]):
    def __init__(self, path: Path) -> None:
        self._path = Path(path)

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _JsonlPartition[R]:
        return _JsonlPartition(self._path)
