"""Read commands: `state` (a session's task state), `recall` (an explained recall), `serve` (HTTP API
and inspector).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from flows.cli.app import app, console
from flows.runtime import (
    close_stores,
    embedder_for,
    recall_service_for,
    recent_actions_for,
)
from flows.settings import Settings
from flows.state_view import archived_tasks, as_json, find_state, render
from schemas.errors import StateMirrorError
from schemas.events import as_utc
from schemas.recall import ContextTurn, Cue, RecallRequest, RecallResult


@app.command()
def state(
    session: Annotated[str, typer.Option("--session", help="session id")],
    source: Annotated[str, typer.Option(help="auto | redis | file")] = "auto",
    as_json_out: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Print the current task state of a session (Redis mirror or the replay's state log)."""
    if source not in ("auto", "redis", "file"):
        raise typer.BadParameter(f"--source is auto, redis or file, not {source!r}")
    settings = Settings()
    try:
        current, where = find_state(settings, session, source)
    except StateMirrorError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(code=2) from exc
    archived = archived_tasks(settings.task.archived_path, session)
    if as_json_out:
        print(as_json(current, archived))
    else:
        render(console, current, archived, where)


def parse_time(text: str, option: str) -> datetime:
    """An ISO 8601 time from the command line (UTC when it has no offset), or a clear usage error.

    >>> parse_time("2026-11-30T09:00:00+08:00", "--at").isoformat()
    '2026-11-30T01:00:00+00:00'
    """
    try:
        return as_utc(datetime.fromisoformat(text.strip()))
    except (ValueError, OverflowError) as exc:
        msg = f"{text!r} is not an ISO 8601 time; e.g. 2026-11-30T09:00:00+08:00 (no offset: UTC)"
        raise typer.BadParameter(msg, param_hint=option) from exc


def _context(items: list[str], at: datetime) -> tuple[ContextTurn, ...]:
    """`role:text` items (role customer|agent|third_party; default customer), oldest first."""
    turns = []
    for i, item in enumerate(items[-3:]):
        role, sep, text = item.partition(":")
        if not sep or role not in ("customer", "agent", "third_party"):
            role, text = "customer", item
        turns.append(ContextTurn(event_id=f"cli-context-{i}", ts=at, text=text, speaker_role=role))  # type: ignore[arg-type]
    return tuple(turns)


WIDE = 120  # from this many columns on, the cues are one table; below, one block per cue


def _components(c: Cue) -> str:
    comp = c.components
    return (
        f"emotion {comp.emotion_match:.2f}  time {comp.time_proximity:.2f}  severity {comp.severity:.2f}  "
        f"gap {comp.resolution_gap:.2f}  commit {comp.commitment_strength:.2f}  "
        f"semantic {comp.semantic:.2f}  lexical {comp.lexical:.2f}  "
        f"person {comp.person:.0f}  entity {comp.entity:.0f}"
    )


def _in_context(c: Cue) -> str:
    """The cue's whole turn (when the unit is a part of it) and the turn it answered, as extra lines."""
    turn = f"\n(turn: {c.turn_text})" if c.turn_text and c.turn_text != c.text else ""
    after = f"\n(after: {c.context_prev})" if c.context_prev else ""
    return turn + after


def print_result(result: RecallResult, debug: bool, out: Console) -> None:
    """The cues with their components and explanations; word-wrapped to the terminal, never cut."""
    title = f"recall [{result.question_class}]: {result.query_text}"
    if out.width >= WIDE:
        table = Table(title=Text(title), show_lines=True)
        for col in ("cue", "tier", "score", "css", "components", "text", "why"):
            table.add_column(col, overflow="fold")
        for c in result.cues:
            flag = " (fallback)" if c.is_fallback else ""
            row = (c.cue_id, c.tier, f"{c.score:.3f}", f"{c.components.css:.3f}", _components(c))
            table.add_row(*row, Text(c.text + flag + _in_context(c)), Text(c.explanation))
        out.print(table)
    else:
        out.print(Text(title, style="bold"))
        for rank, c in enumerate(result.cues, start=1):
            flag = "  (fallback)" if c.is_fallback else ""
            head = f"#{rank} {c.cue_id}  tier {c.tier}  score {c.score:.3f}  css {c.components.css:.3f}{flag}"
            block = Table(title=Text(head), title_justify="left", show_header=False, box=None, padding=(0, 1))
            block.add_column("what", style="dim", no_wrap=True)
            block.add_column("value", overflow="fold", ratio=1)
            block.add_row("text", Text(c.text))
            if c.turn_text and c.turn_text != c.text:
                block.add_row("turn", Text(c.turn_text))
            if c.context_prev:
                block.add_row("after", Text(c.context_prev))
            block.add_row("why", Text(c.explanation))
            block.add_row("score", _components(c))
            out.print(block)
    if not result.cues and not result.weak_cues:
        out.print("no memory passed the filters for this user at this time")
    elif not result.cues:
        out.print(Text(result.explanation.splitlines()[0]))
        for c in result.weak_cues:
            out.print(Text(f"weak {c.cue_id}  score {c.score:.3f}  {c.text}{_in_context(c)}"))
    for d in result.validity_decisions:
        if d.decision != "kept":
            out.print(f"validity: {d.decision} {d.memory_id[:8]} {d.detail}", markup=False)
    for e in result.evidence_chain:
        out.print(f"evidence: {e.winner} beats {e.loser} ({(e.memory_id or '')[:8]}): {e.detail}", markup=False)
    if debug:
        out.print(result.debug_marker, markup=False)


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
    when = parse_time(at, "--at") if at else datetime.now(tz=UTC)
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
        print_result(result, debug, console)
    close_stores()


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
