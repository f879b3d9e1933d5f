"""Keyed JSONL file sink: one line per record key, so repeating a run never repeats a record.

A record whose key is already in the file replaces that line (the latest run wins); a record
identical to the line there is skipped. New keys are appended as they come (a crash loses
nothing written so far); replaced lines are rewritten into the file once, atomically, when
the last partition writing to it closes. Workers of one process share one writer per path.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Hashable
from pathlib import Path
from typing import Generic, TypeVar

from bytewax.outputs import DynamicSink, StatelessSinkPartition
from pydantic import BaseModel

R = TypeVar("R", bound=BaseModel)
_LOCK = threading.Lock()
_OPEN: dict[Path, _KeyedFile] = {}


def line_key(line: str, key_fields: tuple[str, ...]) -> Hashable:
    """The key of one JSON line: its `key_fields` values (a line that is not a JSON object is its own key).

    >>> line_key('{"a": 1, "b": "x", "c": 2}', ("a", "b"))
    (1, 'x')
    """
    try:
        doc = json.loads(line)
    except ValueError:
        return ("<unreadable>", line)
    if not isinstance(doc, dict):
        return ("<unreadable>", line)
    return tuple(_hashable(doc.get(f)) for f in key_fields)


def _hashable(value: object) -> Hashable:
    return value if isinstance(value, str | int | float | bool | None) else json.dumps(value, sort_keys=True)


class _KeyedFile:
    """The lines of one file by key; appends new keys, rewrites replaced ones at the last close."""

    def __init__(self, path: Path, key_fields: tuple[str, ...]) -> None:
        self.path = path
        self.users = 0
        self.dirty = False
        self.lines: dict[Hashable, str] = {}
        path.parent.mkdir(parents=True, exist_ok=True)
        torn = False
        if path.exists():
            with path.open(encoding="utf-8", errors="replace") as fh:
                for raw in fh:
                    if not raw.endswith("\n"):
                        torn = True  # the last write of a killed run: dropped (the run writes it again)
                        break
                    line = raw.rstrip("\n")
                    if line.strip():
                        key = line_key(line, key_fields)
                        self.dirty |= key in self.lines  # a file written before keying
                        self.lines[key] = line
        if torn:
            self._rewrite()
        self.file = path.open("a", encoding="utf-8")

    def write(self, keyed: list[tuple[Hashable, str]]) -> None:
        fresh = []
        for key, line in keyed:
            old = self.lines.get(key)
            if old == line:
                continue
            self.lines[key] = line
            if old is None:
                fresh.append(line + "\n")
            else:
                self.dirty = True
        if fresh:
            self.file.write("".join(fresh))
            self.file.flush()

    def close(self) -> None:
        self.file.close()
        if self.dirty:
            self._rewrite()

    def _rewrite(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text("".join(line + "\n" for line in self.lines.values()), encoding="utf-8")
        os.replace(tmp, self.path)
        self.dirty = False


class _KeyedPartition(StatelessSinkPartition[R], Generic[R]):
    def __init__(self, shared: _KeyedFile, key_fields: tuple[str, ...]) -> None:
        self._shared = shared
        self._key_fields = key_fields

    def write_batch(self, items: list[R]) -> None:
        lines = [item.model_dump_json() for item in items]
        keyed = [(line_key(line, self._key_fields), line) for line in lines]
        with _LOCK:
            self._shared.write(keyed)

    def close(self) -> None:
        with _LOCK:
            self._shared.users -= 1
            if self._shared.users == 0:
                _OPEN.pop(self._shared.path, None)
                self._shared.close()


class KeyedJsonlSink(DynamicSink[R], Generic[R]):
    """JSONL file with one line per record key: the values of `key_fields` in the record's JSON
    (a field a record lacks counts as null)."""

    def __init__(self, path: Path, key_fields: tuple[str, ...]) -> None:
        self._path = Path(path).absolute()
        self._key_fields = key_fields

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _KeyedPartition[R]:
        with _LOCK:
            shared = _OPEN.get(self._path)
            if shared is None:
                shared = _OPEN[self._path] = _KeyedFile(self._path, self._key_fields)
            shared.users += 1
        return _KeyedPartition(shared, self._key_fields)
