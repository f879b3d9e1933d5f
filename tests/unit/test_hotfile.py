"""The one hot-reload implementation: signature, interval, last good version, logging, threads."""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from schemas.errors import ConfigurationError, LexiconError, ResourceFileError
from state.core.datafiles import data_loader, read_data, text_loader
from state.core.hotfile import HotFile
from state.task.table import parse_table

TABLE = """
stages: {a: {label: A}, b: {label: B}}
actions:
  go: {starts: a, cues: [go]}
  stop: {starts: b, cues: [stop]}
transitions:
  a: {stop: %s}
"""


class Clock:
    """An injected monotonic clock."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _write(path: Path, text: str, bump_s: int = 0) -> None:
    """Write `text` and move the mtime `bump_s` seconds on (coarse file-system clocks)."""
    path.write_text(text, encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + bump_s * 1_000_000_000))


def _words(*paths: Path) -> list[str]:
    return [w for p in paths for w in p.read_text(encoding="utf-8").split()]


def _reload_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [json.loads(r.getMessage()) for r in caplog.records if r.name == "state.core.hotfile"]


def test_a_change_to_any_of_several_files_reloads_the_value(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    _write(a, "x")
    _write(b, "y")
    hot = HotFile([a, b], _words, check_every_s=0, monotonic=Clock())
    assert hot.get() == ["x", "y"]
    assert hot.paths == (a, b)
    _write(b, "y z", bump_s=5)
    assert hot.get() == ["x", "y", "z"]
    assert hot.reloads == 1
    assert hot.get() == ["x", "y", "z"]  # unchanged files: no re-load
    assert hot.reloads == 1


def test_same_mtime_but_new_size_is_a_change(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    _write(path, "x")
    mtime = path.stat().st_mtime_ns
    hot = HotFile(path, _words, check_every_s=0)
    path.write_text("x y", encoding="utf-8")
    os.utime(path, ns=(mtime, mtime))
    assert hot() == ["x", "y"]


def test_files_are_checked_only_after_the_interval(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    _write(path, TABLE % "new_task")
    clock = Clock()
    table = HotFile(path, data_loader(parse_table), check_every_s=5.0, monotonic=clock)
    assert table.get().resolve("a", "stop").mode == "new_task"
    _write(path, TABLE % "stay", bump_s=10)
    clock.now = 1.0
    assert table.get().resolve("a", "stop").mode == "new_task"  # not checked yet
    clock.now = 6.0
    assert table.get().resolve("a", "stop").mode == "stay"
    assert table.reloads == 1


def test_a_broken_edit_keeps_the_last_good_value_and_is_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "t.yaml"
    _write(path, TABLE % "stay")
    table = HotFile(path, data_loader(parse_table), check_every_s=0, monotonic=Clock())
    _write(path, "stages: [unclosed", bump_s=10)
    with caplog.at_level(logging.INFO, logger="state.core.hotfile"):
        for _ in range(3):
            assert table.get().resolve("a", "stop").mode == "stay"
    [line] = _reload_lines(caplog)
    assert line["op"] == "hotfile.reload"
    assert line["path"] == str(path)
    assert line["kept"] == "previous"
    assert "cannot parse data file" in line["reason"]
    assert table.reloads == 0
    caplog.clear()
    _write(path, TABLE % "teleport", bump_s=20)  # parses, but names an unknown mode: still broken
    with caplog.at_level(logging.INFO, logger="state.core.hotfile"):
        assert table.get().resolve("a", "stop").mode == "stay"
    assert [line["kept"] for line in _reload_lines(caplog)] == ["previous"]
    caplog.clear()
    _write(path, TABLE % "new_task", bump_s=30)  # fixed: picked up, logged as a reload
    with caplog.at_level(logging.INFO, logger="state.core.hotfile"):
        assert table.get().resolve("a", "stop").mode == "new_task"
    assert _reload_lines(caplog) == [{"op": "hotfile.reload", "path": str(path), "reloads": 1}]


def test_a_file_missing_later_keeps_the_value_logs_once_and_returns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    _write(a, "x")
    _write(b, "y")
    hot = HotFile([a, b], _words, check_every_s=0)
    b.unlink()
    with caplog.at_level(logging.INFO, logger="state.core.hotfile"):
        assert hot.get() == ["x", "y"]
        assert hot.get() == ["x", "y"]
    [line] = _reload_lines(caplog)
    assert line["path"] == str(b)
    assert "missing" in line["reason"]
    _write(b, "w")
    assert hot.get() == ["x", "w"]
    assert hot.reloads == 1


def test_a_missing_file_at_start_fails_with_the_loaders_error(tmp_path: Path) -> None:
    with pytest.raises(ResourceFileError, match="cannot read data file"):
        HotFile(tmp_path / "absent.yaml", data_loader(parse_table))
    with pytest.raises(LexiconError, match=r"absent\.txt"):
        HotFile([tmp_path / "absent.txt"], text_loader(lambda texts: texts, error=LexiconError))
    assert issubclass(ResourceFileError, ConfigurationError)


def test_a_missing_file_the_loader_does_not_read_still_fails_at_start(tmp_path: Path) -> None:
    with pytest.raises(ResourceFileError, match="missing"):
        HotFile(tmp_path / "absent.txt", lambda path: "not read")


def test_a_broken_file_at_start_fails(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [", encoding="utf-8")
    with pytest.raises(ResourceFileError, match="cannot parse"):
        HotFile(bad, data_loader(parse_table))


def test_data_shape_mistakes_of_a_parser_become_resource_file_errors(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("a: 1", encoding="utf-8")

    def parse(raw: Any) -> int:
        return int(raw["missing"])

    with pytest.raises(ResourceFileError, match="invalid data file"):
        HotFile(path, data_loader(parse))


def test_an_os_error_inside_the_loader_is_a_resource_file_error(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_text("a", encoding="utf-8")

    def load(p: Path) -> str:
        return (p.parent / "other.txt").read_text(encoding="utf-8")

    with pytest.raises(ResourceFileError, match="cannot read data file"):
        HotFile(path, load)


def test_json_files_are_read_too(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"k": [1, 2]}), encoding="utf-8")
    assert read_data(path) == {"k": [1, 2]}
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ResourceFileError, match="cannot parse"):
        read_data(path)


def test_threads_share_one_handle_and_each_edit_loads_once(tmp_path: Path) -> None:
    path = tmp_path / "n.txt"
    _write(path, "0")
    loads = []

    def load(p: Path) -> int:
        loads.append(1)
        return int(p.read_text(encoding="utf-8"))

    hot = HotFile(path, load, check_every_s=0)
    seen: list[int] = []
    start = threading.Barrier(8)

    def reader() -> None:
        start.wait()
        seen.extend(hot.get() for _ in range(200))

    _write(path, "1", bump_s=5)
    threads = [threading.Thread(target=reader) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(seen) == {1}
    assert hot.reloads == 1
    assert len(loads) == 2  # the start and the one edit, whatever the number of readers
