"""Ingest commands: `replay` (a file or a topic through the flow), `run` (the live Kafka flow),
`produce` (a JSONL file to the input topic).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Annotated, Generic, TypeVar

import typer
from bytewax.outputs import DynamicSink, StatelessSinkPartition
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from flows.build import build_flow
from flows.cli.app import app, console
from flows.cli.ops import kafka_client_config
from flows.io import InputSpec, KafkaReplayInput, paced_file_input
from flows.runtime import (
    anchor_embedder_for,
    close_stores,
    embedder_for,
    execute,
    open_store,
    outputs_for,
    recall_service_for,
    recent_actions_for,
    replay_settings,
    state_mirror_for,
)
from flows.settings import Settings
from schemas.deadletter import DeadLetter
from schemas.events import as_utc
from schemas.session import ArchivedTask, SessionState
from sinks.kafka.source import Start
from sinks.store.base import StoreFilter

T = TypeVar("T")


class _Tally:
    """Counts what the flow emitted, for the progress bar and the summary table."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events = 0
        self.sessions: set[str] = set()
        self.seen: set[tuple[str, str]] = set()
        self.dead: Counter[str] = Counter()
        self.archived = 0


class _TallyPartition(StatelessSinkPartition[T], Generic[T]):
    def __init__(self, tally: _Tally, progress: Progress | None, task: TaskID | None) -> None:
        self._tally, self._progress, self._task = tally, progress, task

    def write_batch(self, items: list[T]) -> None:
        lines = 0
        with self._tally.lock:
            for item in items:
                if isinstance(item, DeadLetter):
                    self._tally.dead[item.error_type] += 1
                    lines += 1
                elif isinstance(item, ArchivedTask):
                    self._tally.archived += 1
                elif isinstance(item, SessionState) and item.last_event_id is not None:
                    # Archiving and timers re-emit a session's state: count each event once.
                    key = (item.session_id, item.last_event_id)
                    if key in self._tally.seen:
                        continue
                    self._tally.seen.add(key)
                    self._tally.events += 1
                    self._tally.sessions.add(item.session_id)
                    lines += 1
        if self._progress is not None and self._task is not None and lines:
            self._progress.update(self._task, advance=lines)


class _TallySink(DynamicSink[T], Generic[T]):
    """Counts dead letters, archived tasks and session states; one per output, all on one tally."""

    def __init__(self, tally: _Tally, progress: Progress | None = None, task: TaskID | None = None) -> None:
        self._args = (tally, progress, task)

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _TallyPartition[T]:
        return _TallyPartition(*self._args)


def _count_lines(path: Path) -> int:
    with path.open("rb") as fh:
        return sum(1 for line in fh if line.strip())


@app.command()
def replay(
    file: Annotated[
        Path | None, typer.Argument(exists=True, dir_okay=False, help="JSONL archive of events (or --topic)")
    ] = None,
    topic: Annotated[str | None, typer.Option(help="replay this Kafka topic instead of a file")] = None,
    offset: Annotated[int | None, typer.Option(min=0, help="topic: start at this offset in every partition")] = None,
    since: Annotated[
        datetime | None,
        typer.Option(help="topic: start at the first record at or after this time (ISO 8601, UTC if naive)"),
    ] = None,
    rate: Annotated[float | None, typer.Option(min=0.001, help="records per second (default: full speed)")] = None,
    workers: Annotated[int, typer.Option("--workers", "-w", min=1)] = 1,
    show: Annotated[int, typer.Option(help="print this many stored memory units at the end")] = 0,
) -> None:
    """Replay an archive or a topic through the flow in event time (embedded defaults: no servers needed).

    The flow is the live one and every id is deterministic, so a backfill can be repeated.
    """
    settings = replay_settings(Settings())
    if (file is None) == (topic is None):
        raise typer.BadParameter("give either a JSONL FILE or --topic")
    if file is not None and (offset is not None or since is not None):
        raise typer.BadParameter("--offset/--since apply to --topic only")
    if offset is not None and since is not None:
        raise typer.BadParameter("--offset and --since exclude each other")
    rate = rate if rate is not None else settings.replay.rate
    embedder = embedder_for(settings)
    mirror = state_mirror_for(settings, "replay")
    recent = recent_actions_for(settings, "replay")
    outputs = outputs_for(settings, "replay", mirror, embedder, recent)
    recall = recall_service_for(settings, embedder, recent=recent) if settings.recall.enabled else None
    tally = _Tally()
    if file is not None:
        source: InputSpec = paced_file_input(file, rate, settings.replay.batch_size)
        total: int | None = _count_lines(file)
        name = file.name
    else:
        start: Start = offset if offset is not None else (as_utc(since) if since is not None else "beginning")
        source = KafkaReplayInput(kafka_client_config(settings), topic or "", start=start, tail=False, rate=rate)
        total, name = None, f"topic {topic}"
    started = time.perf_counter()
    with Progress(TextColumn("replay"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console) as bar:
        task = bar.add_task("replay", total=total)
        outputs.deadletters.append(_TallySink(tally, bar, task))
        outputs.states.append(_TallySink(tally, bar, task))
        outputs.archived.append(_TallySink(tally, bar, task))
        flow = build_flow(
            settings,
            source,
            outputs,
            embedder=embedder,
            anchor_embedder=anchor_embedder_for(settings, embedder),
            recall=recall,
        )
        execute(flow, settings, workers=workers)
    elapsed = time.perf_counter() - started
    store = open_store(settings)
    table = Table(title=f"replay of {name}")
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("lines read", str(total) if total is not None else str(tally.events + sum(tally.dead.values())))
    table.add_row("events processed", str(tally.events))
    table.add_row("sessions", str(len(tally.sessions)))
    table.add_row("dead letters", ", ".join(f"{k}: {v}" for k, v in sorted(tally.dead.items())) or "0")
    table.add_row("dead-letter file", str(settings.deadletter.path))
    table.add_row("archived tasks", f"{tally.archived} ({settings.task.archived_path})")
    if recall is not None:
        table.add_row("recall results", str(settings.deadletter.path.parent / "recall.jsonl"))
    if settings.metrics.enabled:
        table.add_row("metrics windows", str(settings.metrics.path))
    table.add_row(f"memories in store ({settings.store.backend})", str(store.count()))
    table.add_row("elapsed", f"{elapsed:.2f} s ({tally.events / elapsed:.1f} events/s)")
    console.print(table)
    if show:
        _print_units(store.scroll(StoreFilter(), limit=show))
    close_stores()


def _print_units(hits: list) -> None:  # type: ignore[type-arg]
    table = Table(title="stored memory units", show_lines=True)
    for col in ("session", "ts", "text", "times (original → normalised, UTC)"):
        table.add_column(col, overflow="fold")
    for hit in sorted(hits, key=lambda h: (h.payload["session_id"], h.payload["ts"])):
        p = hit.payload
        times = "\n".join(_time_line(t) for t in p["times"])
        table.add_row(p["session_id"], p["ts"], p["text"], times or "-")
    console.print(table)


def _time_line(t: dict) -> str:  # type: ignore[type-arg]
    """One stored time expression: a deadline by its limit, anything else by its interval and kind."""
    if t.get("kind") == "deadline" and t.get("deadline"):
        return f"{t['original_form']} → deadline {t['deadline']} ({t['granularity']})"
    return f"{t['original_form']} → {t['start']} .. {t['end']} ({t.get('kind', 'point')}, {t['granularity']})"


@app.command()
def run(
    workers: Annotated[int, typer.Option("--workers", "-w", min=1, help="worker threads per process")] = 1,
    process_id: Annotated[int | None, typer.Option("--process-id", "-i", min=0, help="this process's index")] = None,
    addresses: Annotated[
        list[str] | None, typer.Option("--addresses", "-a", help="host:port of every process, in index order")
    ] = None,
    until_end: Annotated[bool, typer.Option("--until-end", help="stop at the end of the input topic")] = False,
    rate: Annotated[float | None, typer.Option(min=0.001, help="consume at most this many records per second")] = None,
) -> None:
    """Consume the input topic and write every output (store, Redis, topics, metrics) until stopped.

    Recovery (RECALLFLOW_RECOVERY__ENABLED=true) snapshots state every
    RECALLFLOW_RECOVERY__SNAPSHOT_INTERVAL_S and resumes from the last snapshot after a kill.
    """
    settings = Settings()
    embedder = embedder_for(settings)
    recent = recent_actions_for(settings, "run")
    outputs = outputs_for(settings, "run", state_mirror_for(settings, "run"), embedder, recent)
    recall = recall_service_for(settings, embedder, recent=recent) if settings.recall.enabled else None
    source = KafkaReplayInput(
        kafka_client_config(settings),
        settings.kafka.input_topic,
        start="committed",  # no snapshot yet: where the group left off (earliest for a new group)
        tail=not until_end,
        group_id=settings.kafka.group_id,  # read position committed for `recallflow lag`
        rate=rate,
    )
    flow = build_flow(
        settings,
        source,
        outputs,
        embedder=embedder,
        anchor_embedder=anchor_embedder_for(settings, embedder),
        recall=recall,
    )
    execute(flow, settings, workers=workers, process_id=process_id, addresses=addresses or None)


@app.command()
def produce(file: Annotated[Path, typer.Argument(exists=True, dir_okay=False)]) -> None:
    """Send a JSONL file to the input topic, keyed by session id."""
    from sinks.kafka.admin import KafkaConnection, produce_jsonl

    settings = Settings()
    cfg = settings.kafka
    conn = KafkaConnection(
        bootstrap_servers=cfg.bootstrap_servers,
        security_protocol=cfg.security_protocol,
        sasl_mechanism=cfg.sasl_mechanism,
        sasl_username=cfg.sasl_username,
        sasl_password=cfg.sasl_password.get_secret_value() if cfg.sasl_password else None,
        ssl_ca_location=cfg.ssl_ca_location,
    )
    report = produce_jsonl(conn, cfg.input_topic, file)
    console.print(report)
