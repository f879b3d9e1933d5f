"""The session-closed signal that follows turns through the tagging and entropy stages.

Normalise drops control events, so `flows/build.py` turns each `SessionEnd` into a
`SessionClosed` and merges it into the turn stream: the tagging stage forwards it, the entropy
stage releases its held turn on it, and both discard their per-session state.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from schemas.events import InputEvent, SessionEnd


@dataclass(frozen=True, slots=True)
class SessionClosed:
    session_id: str
    ts: datetime


def closed_of(event: InputEvent) -> SessionClosed | None:
    """A SessionClosed for a SessionEnd event, None for anything else."""
    return SessionClosed(event.session_id, event.ts) if isinstance(event, SessionEnd) else None
