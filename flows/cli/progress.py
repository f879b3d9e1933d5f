"""What `replay` and `run` show while the flow runs and when it ends.

    Tally / TallySink   count events, sessions, dead letters, dropped duplicates and archived tasks
                        as the flow emits them
    RunLine             the live line of `run`: events, events/s, dead letters, consumer lag
    summary_table       the table both commands print at exit (also after Ctrl-C)
    stop_on_signal      Ctrl-C / SIGTERM set a stop event (the sources then end cleanly); a second
                        Ctrl-C exits at once

State: the tally (shared by the sinks of every worker thread, under one lock).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Generic, TypeVar

from bytewax.outputs import DynamicSink, StatelessSinkPartition
from confluent_kafka import KafkaException
from rich.console import Console
from rich.progress import Progress, TaskID
from rich.table import Table
from rich.text import Text

from flows.settings import Settings
from schemas.deadletter import DeadLetter, DuplicateDelivery
from schemas.errors import SinkError
from schemas.events import ConversationEvent, ResolutionUpdate, SessionEnd, UserCorrection
from schemas.session import ArchivedTask

T = TypeVar("T")
_EVENT_TYPES = (ConversationEvent, ResolutionUpdate, SessionEnd, UserCorrection)
INTERRUPTED_EXIT = 130  # the shell's code for "ended by SIGINT"


class Tally:
    """Counts what the flow emitted, for the progress display and the summary table."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.lock = threading.Lock()
        self.events = 0
        self.sessions: set[str] = set()
        self.dead: Counter[str] = Counter()
        self.duplicates = 0
        self.archived = 0
        self.started = clock()
        self._clock = clock

    def elapsed(self) -> float:
        return max(self._clock() - self.started, 1e-9)

    def dead_total(self) -> int:
        return sum(self.dead.values())


class _TallyPartition(StatelessSinkPartition[T], Generic[T]):
    def __init__(self, tally: Tally, progress: Progress | None, task: TaskID | None) -> None:
        self._tally, self._progress, self._task = tally, progress, task

    def write_batch(self, items: list[T]) -> None:
        lines = 0
        with self._tally.lock:
            for item in items:
                if isinstance(item, DeadLetter):
                    self._tally.dead[item.error_type] += 1
                    lines += 1
                elif isinstance(item, DuplicateDelivery):
                    self._tally.duplicates += 1
                    lines += 1
                elif isinstance(item, ArchivedTask):
                    self._tally.archived += 1
                elif isinstance(item, _EVENT_TYPES):
                    # Control events too (session end, resolution, correction): every line adds up.
                    self._tally.events += 1
                    self._tally.sessions.add(item.session_id)
                    lines += 1
        if self._progress is not None and self._task is not None and lines:
            self._progress.update(self._task, advance=lines)


class TallySink(DynamicSink[T], Generic[T]):
    """Counts events, dead letters, duplicates and archived tasks; one per output, all on one tally."""

    def __init__(self, tally: Tally, progress: Progress | None = None, task: TaskID | None = None) -> None:
        self._args = (tally, progress, task)

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _TallyPartition[T]:
        return _TallyPartition(*self._args)


@dataclass
class RunLine:
    """The live status line of `run`, re-rendered by rich on every refresh."""

    tally: Tally
    lag: Callable[[], str]
    stopping: threading.Event

    def __rich__(self) -> Text:
        t = self.tally
        with t.lock:
            events, dead, sessions = t.events, t.dead_total(), len(t.sessions)
        rate = events / t.elapsed()
        state = "stopping: draining the flow…" if self.stopping.is_set() else "Ctrl-C stops cleanly"
        return Text(
            f"run  {events} events ({rate:.1f}/s)  {sessions} sessions  {dead} dead letters  "
            f"lag {self.lag()}  ·  {state}",
            no_wrap=True,
            overflow="ellipsis",
        )


class LagProbe:
    """The consumer group's total lag, read in a background thread every `every_s` seconds.

    `read` returns per-partition lag; an unknown one (None or negative: a broker that
    under-reports its log end) or a failed read shows as "?" rather than a wrong number.
    """

    def __init__(self, read: Callable[[], dict[int, int | None]], every_s: float = 5.0) -> None:
        self._read, self._every = read, every_s
        self._text = "…"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="recallflow-lag", daemon=True)

    def __call__(self) -> str:
        return self._text

    def start(self) -> LagProbe:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._text = self.sample()
            self._stop.wait(self._every)

    def sample(self) -> str:
        try:
            per_part = self._read()
        except (SinkError, KafkaException) as exc:  # a display value only: never stop the run over it
            return f"? ({type(exc).__name__})"
        known = [v for v in per_part.values() if v is not None and v >= 0]
        if len(known) < len(per_part):
            return "?"
        return str(sum(known))


@contextmanager
def stop_on_signal(stop: threading.Event, console: Console) -> Iterator[None]:
    """While inside: Ctrl-C or SIGTERM sets `stop` once; a second Ctrl-C exits immediately."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        if stop.is_set() and signum == signal.SIGINT:
            console.print("[red]second Ctrl-C: exiting without the summary[/red]")
            os._exit(INTERRUPTED_EXIT)
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def summary_table(
    title: str,
    tally: Tally,
    settings: Settings,
    *,
    lines_read: int | None,
    stored: int,
    with_recall: bool,
    stopped: bool = False,
) -> Table:
    """The table `replay` and `run` print at exit."""
    table = Table(title=title + (" (stopped early)" if stopped else ""))
    table.add_column("what")
    table.add_column("value", justify="right")
    elapsed = tally.elapsed()
    counted = tally.events + tally.dead_total() + tally.duplicates  # every record has one fate
    read = lines_read if lines_read is not None and not stopped else counted
    table.add_row("lines read", str(read))
    table.add_row("events processed", str(tally.events))
    table.add_row("duplicates dropped", str(tally.duplicates))
    table.add_row("sessions", str(len(tally.sessions)))
    table.add_row("dead letters", ", ".join(f"{k}: {v}" for k, v in sorted(tally.dead.items())) or "0")
    table.add_row("dead-letter file", str(settings.deadletter.path))
    table.add_row("archived tasks", f"{tally.archived} ({settings.task.archived_path})")
    if with_recall:
        table.add_row("recall results", str(settings.deadletter.path.parent / "recall.jsonl"))
    if settings.metrics.enabled:
        table.add_row("metrics windows", str(settings.metrics.path))
    table.add_row(f"memories in store ({settings.store.backend})", str(stored))
    table.add_row("elapsed", f"{elapsed:.2f} s ({tally.events / elapsed:.1f} events/s)")
    return table
