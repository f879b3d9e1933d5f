"""`recallflow state --session ID`: the current task state of a session, and its archived tasks.

Where the state is read (`find_state`): `--source redis` the Redis mirror
(`task_state:{session_id}`), `--source file` the state log a replay writes
(`task.state_log_path`); `auto` reads Redis first unless Redis is switched off
(`REDIS__ENABLED=false`) — `run` mirrors there by default — then the state log, and says
where it looked. Archived tasks come from `task.archived_path`.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from flows.settings import Settings
from schemas.errors import StateMirrorError
from schemas.session import ArchivedTask, SessionState
from sinks.redis.state_mirror import RedisStateMirror


def find_state(settings: Settings, session_id: str, source: str) -> tuple[SessionState | None, str]:
    """The session's state and where it was found (or every place looked, when not found).

    Raises StateMirrorError when Redis is the only source asked for and does not answer.
    """
    use_redis = source == "redis" or (source == "auto" and settings.redis.enabled is not False)
    use_file = source == "file" or source == "auto"
    looked: list[str] = []
    if use_redis:
        mirror = RedisStateMirror(settings.redis.url, settings.redis.state_ttl_s, settings.redis.timeout_s)
        where = f"redis {settings.redis.url}"
        try:
            found = mirror.read(session_id)
        except StateMirrorError as exc:
            if not use_file:
                raise
            looked.append(f"{where} (not answering: {exc})")
        else:
            if found is not None:
                return found, where
            looked.append(where)
    if use_file:
        log = settings.task.state_log_path
        found = last_state(log, session_id) if log is not None else None
        if found is not None:
            return found, str(log)
        looked.append(str(log) if log is not None else "no state log (task.state_log_path unset)")
    return None, " and ".join(looked)


def last_state(log: Path, session_id: str) -> SessionState | None:
    """The last state of a session in a JSONL state log (None when absent)."""
    if not log.exists():
        return None
    found: str | None = None
    with log.open(encoding="utf-8") as fh:
        for line in fh:
            if f'"session_id":"{session_id}"' in line:
                found = line
    return SessionState.model_validate_json(found) if found else None


def archived_tasks(path: Path, session_id: str) -> list[ArchivedTask]:
    if not path.exists():
        return []
    out: dict[str, ArchivedTask] = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if f'"session_id":"{session_id}"' in line:
                rec = ArchivedTask.model_validate_json(line)
                out[rec.task_id] = rec  # at-least-once: the same task may be written twice
    return sorted(out.values(), key=lambda r: r.archived_at)


def render(console: Console, state: SessionState | None, archived: list[ArchivedTask], source: str) -> None:
    if state is None:
        console.print(f"no task state for this session in {source}")
    else:
        table = Table(title=f"task state of {state.session_id} ({source})", show_header=False)
        table.add_column("field")
        table.add_column("value", overflow="fold")
        anchor = state.anchor
        rows = [
            ("task_id", state.task_id or "- (no open task)"),
            ("current_stage", state.current_stage),
            ("intent_chain", " → ".join(state.intent_chain) or "-"),
            (
                "critical_entities",
                "\n".join(
                    f"{e.kind}: {e.value}"
                    + (f"  ← {e.mention!r}" if e.mention else "")
                    + ("" if e.bound else " (unbound)")
                    for e in state.critical_entities
                )
                or "-",
            ),
            ("commitments", "\n".join(f"{c.topic}: {c.text}" for c in state.commitments) or "-"),
            ("goal", state.goal_text or "-"),
            (
                "last anchoring",
                f"{anchor.decision}"
                + (f" (cos {anchor.similarity:.3f})" if anchor and anchor.similarity is not None else "")
                + (f" — {anchor.reason}" if anchor and anchor.reason else "")
                if anchor
                else "-",
            ),
            (
                "clarification",
                state.pending_clarification.clarification_question if state.pending_clarification else "-",
            ),
            (
                "last event",
                f"{state.last_event_id} at {state.last_event_ts.isoformat() if state.last_event_ts else '-'}",
            ),
            ("timeout_at", state.timeout_at.isoformat() if state.timeout_at else "-"),
            ("previous tasks", ", ".join(f"{p.task_id} ({p.stage}, {p.reason})" for p in state.previous_tasks) or "-"),
        ]
        for k, v in rows:
            table.add_row(k, v)
        console.print(table)
    if archived:
        arch = Table(title="archived tasks")
        for col in ("task_id", "reason", "archived_at", "stage", "intent chain", "entities"):
            arch.add_column(col, overflow="fold")
        for rec in archived:
            fs = rec.final_state
            arch.add_row(
                rec.task_id,
                rec.reason,
                rec.archived_at.isoformat(),
                fs.current_stage,
                " → ".join(fs.intent_chain),
                ", ".join(e.value for e in fs.critical_entities if e.strength == "strong"),
            )
        console.print(arch)


def as_json(state: SessionState | None, archived: list[ArchivedTask]) -> str:
    return json.dumps(
        {
            "state": state.model_dump(mode="json", exclude={"goal_vector", "candidate_goal_vector"}) if state else None,
            "archived": [
                a.model_dump(mode="json", exclude={"final_state": {"goal_vector", "candidate_goal_vector"}})
                for a in archived
            ],
        },
        ensure_ascii=False,
    )
