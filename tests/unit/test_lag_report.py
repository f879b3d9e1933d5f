"""`recallflow lag` never prints a negative lag: a broker that under-reports its log end gives
an unknown lag, said so in words."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

import flows.cli.ops as ops
from flows.cli import app
from sinks.kafka.lag import partition_lag


def test_partition_lag_is_unknown_when_the_end_is_below_the_position() -> None:
    assert partition_lag(10, 7) == 3
    assert partition_lag(7, 7) == 0
    assert partition_lag(1, 309) is None


def test_lag_command_prints_unknown_instead_of_a_negative_number(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ops, "consumer_lag", lambda *_: {0: 4, 1: None, 2: 0})
    result = CliRunner().invoke(app, ["lag"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    assert re.search(r"-\d", result.output) is None
    assert "unknown *" in result.output
    assert "≥ 4 *" in result.output
    assert "cannot be known" in result.output


def test_lag_command_sums_when_every_partition_is_known(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ops, "consumer_lag", lambda *_: {0: 4, 1: 3})
    result = CliRunner().invoke(app, ["lag"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    assert re.search(r"total\s*│\s*7\s*│", result.output), result.output
    assert "unknown" not in result.output
