"""Hot reload of data files: picked up on edit, a broken edit keeps the last good version."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from schemas.errors import ResourceFileError
from state.hotreload import Reloading, read_data
from state.task_table import parse_table

TABLE = """
stages: {a: {label: A}, b: {label: B}}
actions:
  go: {starts: a, cues: [go]}
  stop: {starts: b, cues: [stop]}
transitions:
  a: {stop: %s}
"""


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _write(path: Path, text: str, bump: int) -> None:
    path.write_text(text, encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + bump * 1_000_000_000))


def test_edit_is_picked_up_after_the_interval(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    _write(path, TABLE % "new_task", 0)
    clock = Clock()
    table = Reloading(path, parse_table, interval_s=5.0, monotonic=clock)
    assert table.get().resolve("a", "stop").mode == "new_task"
    _write(path, TABLE % "stay", 10)
    clock.now = 1.0
    assert table.get().resolve("a", "stop").mode == "new_task"  # not checked yet
    clock.now = 6.0
    assert table.get().resolve("a", "stop").mode == "stay"
    assert table.reloads == 1


def test_broken_edit_keeps_the_last_good_version(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "t.yaml"
    _write(path, TABLE % "stay", 0)
    clock = Clock()
    table = Reloading(path, parse_table, interval_s=0.0, monotonic=clock)
    _write(path, TABLE % "teleport", 10)
    clock.now = 1.0
    assert table.get().resolve("a", "stop").mode == "stay"
    assert "resource.reload" in caplog.text
    _write(path, "stages: [unclosed", 20)
    clock.now = 2.0
    assert table.get().resolve("a", "stop").mode == "stay"
    path.unlink()
    clock.now = 3.0
    assert table.get().resolve("a", "stop").mode == "stay"


def test_bad_file_fails_at_start(tmp_path: Path) -> None:
    with pytest.raises(ResourceFileError, match="missing"):
        Reloading(tmp_path / "absent.yaml", parse_table)
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [", encoding="utf-8")
    with pytest.raises(ResourceFileError, match="cannot parse"):
        Reloading(bad, parse_table)


def test_parser_value_errors_become_resource_file_errors(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("a: 1", encoding="utf-8")

    def parse(raw: Any) -> int:
        return int(raw["missing"])

    with pytest.raises(ResourceFileError, match="invalid data file"):
        Reloading(path, parse)


def test_json_files_are_read_too(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"k": [1, 2]}), encoding="utf-8")
    assert read_data(path) == {"k": [1, 2]}
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ResourceFileError, match="cannot parse"):
        read_data(path)
