"""Input-format commands: `schema` (the input event as JSON Schema) and `convert` (a chat export in
JSONL or CSV with other field names → input events). docs/input-format.md describes every field.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from pydantic import TypeAdapter

from flows.cli.app import app, err_console
from flows.settings import Settings
from schemas.deadletter import DeadLetter
from schemas.errors import InputError, MalformedEventError
from schemas.events import ConversationEvent, InputEvent
from state.ingress.convert import FieldMap, convert_row, parse_pairs
from state.ingress.parse import IngressLimits

Format = Literal["auto", "jsonl", "csv"]


def input_schema(kind: str) -> dict[str, Any]:
    """JSON Schema of every input record (`all`) or of a conversation turn (`turn`)."""
    schema = ConversationEvent.model_json_schema() if kind == "turn" else TypeAdapter(InputEvent).json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema.setdefault("title", "RecallFlow input event")
    return schema


@app.command("schema")
def schema_command(
    kind: Annotated[str, typer.Option(help="all: every input record kind; turn: a conversation turn")] = "all",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="file to write (default: stdout)")] = None,
) -> None:
    """Print the input event as JSON Schema (docs/input-format.md explains each field)."""
    if kind not in ("all", "turn"):
        raise typer.BadParameter("all or turn", param_hint="--kind")
    text = json.dumps(input_schema(kind), ensure_ascii=False, indent=2) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        err_console.print(f"JSON Schema ({kind}) written to {out}", highlight=False, markup=False)


def _rows(path: Path, fmt: Format) -> Iterator[tuple[int, bytes, dict[str, Any] | InputError]]:
    """(line, raw bytes, row) per record; a record that is not an object comes with its error."""
    kind = fmt if fmt != "auto" else ("csv" if path.suffix.lower() in (".csv", ".tsv") else "jsonl")
    if kind == "csv":
        dialect = "excel-tab" if path.suffix.lower() == ".tsv" else "excel"
        with path.open(encoding="utf-8-sig", newline="") as fh:
            reader = csv.DictReader(fh, dialect=dialect)
            for row in reader:
                buf = io.StringIO()
                csv.writer(buf, dialect=dialect).writerow(row.values())
                raw = buf.getvalue().encode()
                if None in row:
                    yield reader.line_num, raw, MalformedEventError("the row has more cells than the header")
                else:
                    yield reader.line_num, raw, dict(row)
        return
    with path.open("rb") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                yield number, line, MalformedEventError(f"not JSON: {exc}")
                continue
            if isinstance(value, dict):
                yield number, line, value
            else:
                yield number, line, MalformedEventError(f"expected a JSON object, got {type(value).__name__}")


@app.command()
def convert(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="chat export: JSONL or CSV")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="events JSONL to write (default: stdout)")] = None,
    mapping: Annotated[
        list[str] | None,
        typer.Option("--map", help="event_field=export_field, comma-separated or repeated (speaker=author,…)"),
    ] = None,
    roles: Annotated[
        list[str] | None,
        typer.Option("--role", help="speaker (or role) value=customer|agent|third_party, e.g. A=customer"),
    ] = None,
    tenant: Annotated[str | None, typer.Option("--tenant", help="tenant_id for rows without one")] = None,
    default_role: Annotated[str | None, typer.Option(help="role of a speaker no --role names")] = None,
    fmt: Annotated[str, typer.Option("--format", help="auto (by suffix), jsonl or csv")] = "auto",
    rejects: Annotated[
        Path | None, typer.Option(help="dead letters of rows that do not convert (default: OUT.rejects.jsonl)")
    ] = None,
) -> None:
    """Map a chat export (JSONL or CSV, other field names) onto input events, one JSON line each.

    Example, a dialogue set's layout: `recallflow convert dialogues.jsonl --role A=customer --role B=agent
    -o events.jsonl`; a CSV export: `recallflow convert chat.csv --map session_id=thread,speaker=author,
    text=message,ts=sent_at --role bot=agent --default-role customer -o events.jsonl`.
    """
    if fmt not in ("auto", "jsonl", "csv"):
        raise typer.BadParameter("auto, jsonl or csv", param_hint="--format")
    try:
        fmap = FieldMap(
            renames=parse_pairs(mapping or [], "--map"),
            roles=parse_pairs(roles or [], "--role"),
            tenant_id=tenant,
            default_role=default_role,
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    cfg = Settings().input
    limits = IngressLimits(cfg.max_record_bytes, cfg.max_text_chars, cfg.max_json_depth, cfg.min_year, cfg.max_year)
    letters: list[DeadLetter] = []
    lines: list[str] = []
    for line, raw, row in _rows(file, fmt):  # type: ignore[arg-type]  # checked above
        try:
            if isinstance(row, InputError):
                raise row
            event = convert_row(row, fmap, line, limits)
        except InputError as exc:
            letters.append(
                DeadLetter.from_raw(
                    step="convert",
                    key=None,
                    source=f"{file}:{line}",
                    error_type=exc.error_type,
                    message=str(exc),
                    raw=raw,
                    at=datetime.now(UTC),
                )
            )
            continue
        lines.append(event.model_dump_json(exclude_none=True, exclude_defaults=False) + "\n")
    if out is None:
        sys.stdout.write("".join(lines))
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(lines), encoding="utf-8")
    where = rejects or (out.with_name(out.name + ".rejects.jsonl") if out else Path(f"{file.name}.rejects.jsonl"))
    if letters:
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text("".join(d.model_dump_json() + "\n" for d in letters), encoding="utf-8")
    target = str(out) if out else "stdout"
    note = f"; {len(letters)} rejected → {where} (first: {letters[0].message[:120]})" if letters else ""
    err_console.print(f"converted {len(lines)} rows of {file.name} to {target}{note}", highlight=False, markup=False)
    if letters and not lines:
        raise typer.Exit(1)
