"""Ingest commands: `replay` (a file or a topic through the flow), `run` (the live Kafka flow),
`produce` (a JSONL file to the input topic).
"""

from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from flows.build import build_flow
from flows.cli.app import app, console
from flows.cli.ops import kafka_client_config, kafka_connection
from flows.cli.progress import INTERRUPTED_EXIT, LagProbe, RunLine, Tally, TallySink, stop_on_signal, summary_table
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
from schemas.events import as_utc
from sinks.kafka.admin import ProduceReport, consumer_lag
from sinks.kafka.source import Start, list_partitions
from sinks.store.base import StoreFilter


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
    open_store(settings)  # a store held by a running `serve`: say so before the flow starts
    embedder = embedder_for(settings)
    mirror = state_mirror_for(settings, "replay")
    recent = recent_actions_for(settings, "replay")
    outputs = outputs_for(settings, "replay", mirror, embedder, recent)
    recall = recall_service_for(settings, embedder, recent=recent) if settings.recall.enabled else None
    stop = threading.Event()
    if file is not None:
        source: InputSpec = paced_file_input(file, rate, settings.replay.batch_size, stop=stop)
        total: int | None = _count_lines(file)
        name = file.name
    else:
        start: Start = offset if offset is not None else (as_utc(since) if since is not None else "beginning")
        list_partitions(kafka_client_config(settings), topic or "")  # a missing topic or broker: say so now
        source = KafkaReplayInput(
            kafka_client_config(settings), topic or "", start=start, tail=False, rate=rate, stop=stop
        )
        total, name = None, f"topic {topic}"
    tally = Tally()
    columns = (TextColumn("replay"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console) as bar, stop_on_signal(stop, console):
        task = bar.add_task("replay", total=total)
        for sinks in (outputs.deadletters, outputs.events, outputs.archived, outputs.duplicates):
            sinks.append(TallySink(tally, bar, task))
        flow = build_flow(
            settings,
            source,
            outputs,
            embedder=embedder,
            anchor_embedder=anchor_embedder_for(settings, embedder),
            recall=recall,
        )
        execute(flow, settings, workers=workers)
    store = open_store(settings)
    table = summary_table(
        f"replay of {name}",
        tally,
        settings,
        lines_read=total,
        stored=store.count(),
        with_recall=recall is not None,
        stopped=stop.is_set(),
    )
    console.print(table)
    if show:
        _print_units(store.scroll(StoreFilter(), limit=show))
    close_stores()
    if stop.is_set():
        raise typer.Exit(INTERRUPTED_EXIT)


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
    if not until_end:  # a stopped live run is not the end of its conversations: keep tasks open
        settings = settings.model_copy(update={"task": settings.task.model_copy(update={"archive_on_eof": False})})
    open_store(settings)  # a store held by a running `serve`: say so before the flow starts
    embedder = embedder_for(settings)
    recent = recent_actions_for(settings, "run")
    outputs = outputs_for(settings, "run", state_mirror_for(settings, "run"), embedder, recent)
    recall = recall_service_for(settings, embedder, recent=recent) if settings.recall.enabled else None
    stop = threading.Event()
    list_partitions(kafka_client_config(settings), settings.kafka.input_topic)  # missing topic or broker: say so now
    source = KafkaReplayInput(
        kafka_client_config(settings),
        settings.kafka.input_topic,
        start="committed",  # no snapshot yet: where the group left off (earliest for a new group)
        tail=not until_end,
        group_id=settings.kafka.group_id,  # read position committed for `recallflow lag`
        rate=rate,
        stop=stop,
    )
    tally = Tally()
    for sinks in (outputs.deadletters, outputs.events, outputs.archived, outputs.duplicates):
        sinks.append(TallySink(tally))
    flow = build_flow(
        settings,
        source,
        outputs,
        embedder=embedder,
        anchor_embedder=anchor_embedder_for(settings, embedder),
        recall=recall,
    )
    conn = kafka_connection(settings)
    lag = LagProbe(lambda: consumer_lag(conn, settings.kafka.group_id, settings.kafka.input_topic)).start()
    try:
        with Live(RunLine(tally, lag, stop), console=console, refresh_per_second=2), stop_on_signal(stop, console):
            execute(flow, settings, workers=workers, process_id=process_id, addresses=addresses or None)
    finally:
        lag.stop()
    title = f"run on {settings.kafka.input_topic} ({settings.kafka.bootstrap_servers})"
    stored = open_store(settings).count()
    console.print(summary_table(title, tally, settings, lines_read=None, stored=stored, with_recall=recall is not None))
    close_stores()
    if stop.is_set():
        console.print("stopped: the next `recallflow run` continues from the committed offsets")
        raise typer.Exit(INTERRUPTED_EXIT)


@app.command()
def produce(file: Annotated[Path, typer.Argument(exists=True, dir_okay=False)]) -> None:
    """Send a JSONL file to the input topic, keyed by session id."""
    from sinks.kafka.admin import produce_jsonl

    settings = Settings()
    report = produce_jsonl(kafka_connection(settings), settings.kafka.input_topic, file)
    console.print(produce_sentence(report, file.name), highlight=False)
    if report.rejected:  # every other line was sent; say which were not, and fail
        for reason in report.rejected:
            console.print(f"[red]{reason}[/red]", highlight=False)
        raise typer.Exit(1)


def produce_sentence(report: ProduceReport, name: str) -> str:
    """`produce`'s one-line summary.

    >>> produce_sentence(ProduceReport(topic="t", sent=3, unkeyed=0, blank=2), "a.jsonl")
    'sent 3 records from a.jsonl to topic t (2 blank lines skipped)'
    >>> produce_sentence(ProduceReport(topic="t", sent=1, unkeyed=1, blank=0), "a.jsonl")
    'sent 1 record from a.jsonl to topic t (1 without a session id: the flow will dead-letter it)'
    """
    notes = []
    if report.unkeyed:
        notes.append(
            f"{report.unkeyed} without a session id: the flow will dead-letter "
            + ("it" if report.unkeyed == 1 else "them")
        )
    if report.blank:
        notes.append(f"{report.blank} blank line{'s' if report.blank != 1 else ''} skipped")
    if report.rejected:
        notes.append(f"{len(report.rejected)} refused, not sent")
    tail = f" ({'; '.join(notes)})" if notes else ""
    return f"sent {report.sent} record{'s' if report.sent != 1 else ''} from {name} to topic {report.topic}{tail}"
