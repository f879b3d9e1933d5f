"""JSONL archive source for replay: one raw record per line, resumable by byte offset.

Lines are read as bytes, so invalid UTF-8 reaches the parse step (and the dead-letter
stream) instead of crashing the reader. Blank lines are skipped. One partition per file.
"""

from __future__ import annotations

from pathlib import Path

from bytewax.inputs import FixedPartitionedSource, StatefulSourcePartition

from schemas.raw import RawRecord

# Resume state: (byte offset of the next line, its 1-based line number).
Position = tuple[int, int]


class _FilePartition(StatefulSourcePartition[RawRecord, Position]):
    def __init__(self, path: Path, resume: Position | None, batch_size: int) -> None:
        self._path = path
        self._file = path.open("rb")
        offset, line_no = resume or (0, 1)
        self._file.seek(offset)
        self._line_no = line_no
        self._batch_size = batch_size

    def next_batch(self) -> list[RawRecord]:
        batch: list[RawRecord] = []
        while len(batch) < self._batch_size:
            line = self._file.readline()
            if not line:
                if not batch:
                    raise StopIteration
                break
            number = self._line_no
            self._line_no += 1
            payload = line.rstrip(b"\r\n")
            if payload.strip():
                batch.append(RawRecord(source=f"{self._path.name}:{number}", payload=payload))
        return batch

    def snapshot(self) -> Position:
        return (self._file.tell(), self._line_no)

    def close(self) -> None:
        self._file.close()


class JsonlSource(FixedPartitionedSource[RawRecord, Position]):
    """Replay a JSONL archive in file order (its event time order for one session)."""

    def __init__(self, path: Path, batch_size: int = 64) -> None:
        self._path = Path(path)
        self._batch_size = batch_size

    def list_parts(self) -> list[str]:
        return [self._path.name]

    def build_part(self, step_id: str, for_part: str, resume_state: Position | None) -> _FilePartition:
        return _FilePartition(self._path, resume_state, self._batch_size)
