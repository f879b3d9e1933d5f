"""The previous turn of a session, attached to each memory unit as its context.

Input: a session's memory units in order. Output: each unit with `context_prev` set to the
session's previous turn as "speaker: text" (None for the first turn). State: `TurnContext`,
the current and the previous turn of one session (two short strings). The operator
(operators/context.py) keys it by session and drops it after an idle period.

A unit keeps its whole turn (`source_text`) and the turn before it so that recall can score and
show it in context: the agent's "已预约6月14日上午9点。" answers the customer's "那改成下周六上午"
just before it, and a cue without that turn is half a memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from schemas.memory import MemoryUnit


@dataclass(frozen=True, slots=True)
class TurnContext:
    event_id: str
    turn: str
    previous: str | None


def turn_line(unit: MemoryUnit) -> str:
    """A turn as one line, "speaker: text"."""
    return f"{unit.speaker}: {unit.source_text}" if unit.speaker else unit.source_text


def with_context(state: TurnContext | None, unit: MemoryUnit) -> tuple[TurnContext, MemoryUnit]:
    """The unit with the session's previous turn attached; units of one turn share it.

    >>> from datetime import UTC, datetime
    >>> def u(e, s, t): return MemoryUnit(memory_id=e, unit_index=0, tenant_id="t", session_id="s", turn_id=e,
    ...     event_id=e, ts=datetime(2025, 6, 1, tzinfo=UTC), text=t, source_text=t, speaker=s)
    >>> state, a = with_context(None, u("1", "客户", "那改成下周六上午"))
    >>> state, b = with_context(state, u("2", "客服", "已预约6月14日上午9点。"))
    >>> a.context_prev, b.context_prev
    (None, '客户: 那改成下周六上午')
    """
    if state is not None and state.event_id == unit.event_id:
        return state, unit.model_copy(update={"context_prev": state.previous})
    previous = state.turn if state is not None else None
    return TurnContext(unit.event_id, turn_line(unit), previous), unit.model_copy(update={"context_prev": previous})
