"""Keyed JSONL output files: one line per key across runs, a torn last line of a killed run dropped."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from sinks.files.keyed_jsonl import KeyedJsonlSink


class Rec(BaseModel):
    k: str
    v: int


def _run(path: Path, *batches: list[Rec]) -> None:
    sink: KeyedJsonlSink[Rec] = KeyedJsonlSink(path, ("k",))
    a, b = sink.build("s", 0, 2), sink.build("s", 1, 2)  # two workers share one writer
    for i, batch in enumerate(batches):
        (a if i % 2 == 0 else b).write_batch(batch)
    a.close()
    b.close()


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_repeated_run_keeps_one_line_per_key_and_the_latest_wins(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    _run(path, [Rec(k="a", v=1), Rec(k="b", v=1)], [Rec(k="c", v=1)])
    _run(path, [Rec(k="a", v=1), Rec(k="b", v=2)], [Rec(k="c", v=1), Rec(k="d", v=1)])
    assert _lines(path) == [{"k": "a", "v": 1}, {"k": "b", "v": 2}, {"k": "c", "v": 1}, {"k": "d", "v": 1}]


def test_a_torn_last_line_and_old_duplicates_are_cleaned(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text('{"k": "a", "v": 1}\n{"k": "a", "v": 1}\nnot json\n{"k": "b", "v"')
    _run(path, [Rec(k="b", v=3)])
    assert path.read_text().splitlines() == ['{"k": "a", "v": 1}', "not json", '{"k":"b","v":3}']
