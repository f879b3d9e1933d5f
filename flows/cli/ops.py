"""Operations commands of `recallflow`: topics, lag, recovery, metrics charts, transcription.

    recallflow topics create            create every topic of the flow (partitions from settings)
    recallflow topics list              topics and partition counts on the broker
    recallflow lag                      the flow's consumer lag on the input topic, per partition
    recallflow recovery init            lay out empty recovery partitions (python -m bytewax.recovery)
    recallflow metrics show RUN         the windows of a run as a table, alerts included
    recallflow metrics chart RUN -o P   the windows of a run as a PNG, one panel per decision point
    recallflow report RUN               the same chart (default PNG beside the run file)
    recallflow transcribe AUDIO         an audio file → ASR ConversationEvents (JSONL)

Settings are read once per command (env `RECALLFLOW_*`).
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from flows.cli.app import console, err_console
from flows.runtime import init_recovery, kafka_config, output_topics, recovery_partitions
from flows.settings import Settings
from schemas.events import as_utc
from sinks.kafka.admin import KafkaConnection, consumer_lag, create_topics

topics_app = typer.Typer(no_args_is_help=True, help="Kafka topics of the flow.")
recovery_app = typer.Typer(no_args_is_help=True, help="Bytewax recovery partitions.")
metrics_app = typer.Typer(no_args_is_help=True, help="Windowed metrics of a run.")


def kafka_connection(settings: Settings) -> KafkaConnection:
    cfg = settings.kafka
    return KafkaConnection(
        bootstrap_servers=cfg.bootstrap_servers,
        security_protocol=cfg.security_protocol,
        sasl_mechanism=cfg.sasl_mechanism,
        sasl_username=cfg.sasl_username,
        sasl_password=cfg.sasl_password.get_secret_value() if cfg.sasl_password else None,
        ssl_ca_location=cfg.ssl_ca_location,
        log_level=cfg.log_level,
    )


def kafka_client_config(settings: Settings) -> dict[str, str]:
    """Bootstrap servers plus the security settings, for consumers built by the flow."""
    return {"bootstrap.servers": settings.kafka.bootstrap_servers, **kafka_config(settings.kafka, consumer=False)}


@topics_app.command("create")
def topics_create(
    partitions: Annotated[int | None, typer.Option(min=1, help="default: RECALLFLOW_KAFKA__PARTITIONS")] = None,
    replication: Annotated[int, typer.Option(min=1)] = 1,
) -> None:
    """Create every topic the flow reads or writes; existing ones are left as they are."""
    settings = Settings()
    names = output_topics(settings)
    count = partitions or settings.kafka.partitions
    created = set(create_topics(kafka_connection(settings), names, partitions=count, replication=replication))
    table = Table(title=f"topics on {settings.kafka.bootstrap_servers}")
    for col in ("topic", "status"):
        table.add_column(col)
    for name in names:
        table.add_row(name, f"created ({count} partitions)" if name in created else "exists")
    console.print(table)


@topics_app.command("list")
def topics_list() -> None:
    """Topics on the broker with their partition counts."""
    from confluent_kafka.admin import AdminClient

    settings = Settings()
    config: dict[str, str | int | float | bool] = {**kafka_client_config(settings)}
    metadata = AdminClient(config).list_topics(timeout=15)
    table = Table(title=f"topics on {settings.kafka.bootstrap_servers}")
    table.add_column("topic")
    table.add_column("partitions", justify="right")
    for name in sorted(metadata.topics):
        table.add_row(name, str(len(metadata.topics[name].partitions)))
    console.print(table)


@recovery_app.command("init")
def recovery_init(
    partitions: Annotated[int | None, typer.Option(min=1, help="default: RECALLFLOW_RECOVERY__PARTITIONS")] = None,
    process_id: Annotated[
        int | None, typer.Option("--process-id", "-i", min=0, help="keep only this process's share")
    ] = None,
    processes: Annotated[int, typer.Option(min=1, help="processes in the cluster (with -i)")] = 1,
) -> None:
    """Create empty recovery partitions in RECALLFLOW_RECOVERY__DIR (wraps `python -m bytewax.recovery`)."""
    settings = Settings()
    made = init_recovery(
        settings.recovery.dir, partitions or settings.recovery.partitions, process_id=process_id, processes=processes
    )
    console.print(f"{len(made)} recovery partitions in {settings.recovery.dir}: {', '.join(p.name for p in made)}")


@recovery_app.command("status")
def recovery_status() -> None:
    """The recovery partitions present in RECALLFLOW_RECOVERY__DIR."""
    settings = Settings()
    parts = recovery_partitions(settings.recovery.dir)
    state = "on" if settings.recovery.enabled else "off (RECALLFLOW_RECOVERY__ENABLED=true turns it on)"
    console.print(f"recovery {state}; {len(parts)} partitions in {settings.recovery.dir}")
    for part in parts:
        console.print(f"  {part.name}  {part.stat().st_size} bytes")


def lag(
    group: Annotated[str | None, typer.Option(help="consumer group (default RECALLFLOW_KAFKA__GROUP_ID)")] = None,
    topic: Annotated[str | None, typer.Option(help="topic (default the input topic)")] = None,
) -> None:
    """The flow's consumer lag per partition (records not yet read by the running flow)."""
    settings = Settings()
    group_id = group or settings.kafka.group_id
    name = topic or settings.kafka.input_topic
    per_part = consumer_lag(kafka_connection(settings), group_id, name)
    table = Table(title=f"lag of group {group_id} on {name}")
    table.add_column("partition", justify="right")
    table.add_column("lag", justify="right")
    for part, value in sorted(per_part.items()):
        table.add_row(str(part), "unknown *" if value is None else str(value))
    known = [v for v in per_part.values() if v is not None]
    total = str(sum(known)) if len(known) == len(per_part) else f"≥ {sum(known)} *"
    table.add_row("total", total)
    console.print(table)
    if len(known) < len(per_part):
        console.print(
            "* the broker reports a log end below the group's committed offset, so the lag there "
            "cannot be known (Tansu does this after multi-record batches); it is not negative"
        )


@metrics_app.command("show")
def metrics_show(
    run: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="metrics JSONL of a run")],
    last: Annotated[int, typer.Option(min=1)] = 20,
) -> None:
    """The last windows of a run: events, dead letters, late events and alerts."""
    from sinks.metrics.chart import load_windows

    windows = load_windows(run)
    table = Table(title=f"{len(windows)} windows in {run}")
    for col in ("window start", "events", "units", "dead", "late", "alerts"):
        table.add_column(col)
    for w in windows[-last:]:
        c = w.counters
        table.add_row(
            w.window_start.isoformat(),
            str(c.get("events", 0)),
            str(c.get("memory_units", 0)),
            str(c.get("deadletters", 0)),
            str(c.get("late_events", 0)),
            "; ".join(w.alerts) or "-",
        )
    console.print(table)


@metrics_app.command("chart")
def metrics_chart(
    run: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="metrics JSONL of a run")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="PNG to write (default: RUN with .png)")] = None,
    title: Annotated[str | None, typer.Option(help="chart title")] = None,
) -> None:
    """Render the windows of a run as a PNG: one panel per decision point, health at a glance."""
    from sinks.metrics.chart import load_windows, render_chart

    target = out or run.with_suffix(".png")
    render_chart(load_windows(run), target, title=title or f"RecallFlow windowed metrics: {run.name}")
    console.print(f"chart written to {target}")


def report(
    run: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="metrics JSONL of a run")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="PNG to write (default: RUN with .png)")] = None,
) -> None:
    """The windows of a run as a chart (same as `metrics chart`)."""
    metrics_chart(run, out, None)


def transcribe(
    audio: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="audio file (wav, mp3, ...)")],
    session: Annotated[str, typer.Option("--session", help="session id of the events")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="JSONL to write (default: stdout)")] = None,
    speaker: Annotated[str, typer.Option(help="speaker name (no diarisation: one speaker per file)")] = "speaker",
    role: Annotated[str, typer.Option(help="customer | agent | third_party")] = "customer",
    language: Annotated[str | None, typer.Option(help="e.g. en, zh (default: detected)")] = None,
    start: Annotated[
        datetime | None, typer.Option(help="wall-clock time of the audio's start (ISO 8601; default: file mtime)")
    ] = None,
    tenant: Annotated[str, typer.Option("--tenant")] = "default",
    user: Annotated[str | None, typer.Option("--user")] = None,
) -> None:
    """Transcribe an audio file offline (faster-whisper, Whisper base) into ASR ConversationEvents."""
    from sinks.models.asr import WhisperTranscriber
    from state.ingress.asr import AsrLayout, segments_to_events

    if role not in ("customer", "agent", "third_party"):
        raise typer.BadParameter("role must be customer, agent or third_party")
    settings = Settings()
    started_at = as_utc(start) if start is not None else datetime.fromtimestamp(audio.stat().st_mtime, tz=UTC)
    transcriber = WhisperTranscriber.from_settings(settings.asr)
    transcript = transcriber.transcribe(audio, language=language)
    layout = AsrLayout(pause_ms=settings.asr.pause_ms, turn_gap_ms=settings.asr.turn_gap_ms)
    events = segments_to_events(
        transcript,
        layout,
        session_id=session,
        source=audio.name,
        started_at=started_at,
        speaker=speaker,
        speaker_role=role,  # type: ignore[arg-type]  # checked against the three roles above
        tenant_id=tenant,
        user_id=user,
    )
    if not events:
        seconds = transcript.duration_ms / 1000
        err_console.print(
            f"no speech found in {audio.name} ({seconds:.1f} s of audio, language {transcript.language}): "
            "nothing written; check the file, or pass --language",
            highlight=False,
            markup=False,
        )
        raise typer.Exit(1)
    lines = "".join(ev.model_dump_json(exclude_none=True) + "\n" for ev in events)
    if out is None:
        sys.stdout.write(lines)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(lines, encoding="utf-8")
        console.print(f"{len(events)} ASR events ({transcript.language}) written to {out}", highlight=False)


def register_stream_commands(app: typer.Typer) -> None:
    """Add the operations commands to the `recallflow` app."""
    app.add_typer(topics_app, name="topics")
    app.add_typer(recovery_app, name="recovery")
    app.add_typer(metrics_app, name="metrics")
    app.command("lag")(lag)
    app.command("report")(report)
    app.command("transcribe")(transcribe)


__all__ = ["kafka_client_config", "kafka_connection", "register_stream_commands"]
