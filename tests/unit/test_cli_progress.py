"""What `run` and `replay` show: the stoppable source, the live line, the lag probe, the summary."""

from __future__ import annotations

import threading
from pathlib import Path

from rich.console import Console

from flows.cli.progress import LagProbe, RunLine, Tally, summary_table
from flows.settings import Settings
from schemas.errors import BrokerError
from schemas.raw import RawRecord
from sinks.files.jsonl_source import JsonlSource
from sinks.files.stopping import StoppableSource


def test_a_stopped_source_ends_every_partition(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text("".join(f'{{"n": {i}}}\n' for i in range(10)), encoding="utf-8")
    stop = threading.Event()
    source = StoppableSource(JsonlSource(path, batch_size=3), stop)
    (part,) = [source.build_part("input", p, None) for p in source.list_parts()]
    first = part.next_batch()
    assert [isinstance(r, RawRecord) for r in first] == [True] * 3
    stop.set()
    try:
        part.next_batch()
    except StopIteration:
        pass
    else:
        raise AssertionError("a stopped partition must end")
    assert part.next_awake() is None
    assert part.snapshot() == source.build_part("input", "0", part.snapshot()).snapshot()


def test_the_run_line_shows_events_rate_dead_letters_and_lag() -> None:
    clock = iter([0.0, 10.0, 10.0, 10.0])
    tally = Tally(clock=lambda: next(clock))
    tally.events, tally.sessions = 25, {"a", "b"}
    tally.dead["validation"] = 3
    stopping = threading.Event()
    console = Console(width=200, record=True)
    console.print(RunLine(tally, lambda: "12", stopping))
    text = console.export_text()
    assert "25 events (2.5/s)" in text
    assert "2 sessions" in text
    assert "3 dead letters" in text
    assert "lag 12" in text
    assert "Ctrl-C stops cleanly" in text
    stopping.set()
    console.print(RunLine(tally, lambda: "12", stopping))
    assert "stopping" in console.export_text()


def test_the_lag_probe_never_shows_a_negative_or_failed_lag() -> None:
    assert LagProbe(lambda: {0: 3, 1: 4}).sample() == "7"
    assert LagProbe(lambda: {0: -308, 1: 4}).sample() == "?"
    assert LagProbe(lambda: {0: None, 1: 4}).sample() == "?"  # unknown: the broker under-reports its end

    def broken() -> dict[int, int]:
        raise BrokerError("metadata request failed")

    assert LagProbe(broken).sample() == "? (BrokerError)"


def test_the_summary_says_when_it_was_stopped(tmp_path: Path) -> None:
    tally = Tally()
    tally.events = 4
    tally.dead["malformed"] = 1
    settings = Settings(deadletter={"path": tmp_path / "dl.jsonl"}, metrics={"enabled": False})
    console = Console(width=160, record=True)
    console.print(
        summary_table("run on t", tally, settings, lines_read=None, stored=9, with_recall=False, stopped=True)
    )
    text = console.export_text()
    assert "run on t (stopped early)" in text
    assert "malformed: 1" in text
    lines_read = next(line for line in text.splitlines() if "lines read" in line)
    assert lines_read.split()[-2] == "5"
