"""Memory unit assembly: a normalised turn → the MemoryUnits that land in the store.

Foundation rule: one unit per turn carrying every annotation known so far; the write-time
filters (coref, terms, tagging, entropy windows) refine the cut and the annotations.
"""

from __future__ import annotations

from schemas.memory import MemoryUnit, memory_id
from state.turn import Turn


def units_from_turn(turn: Turn) -> tuple[MemoryUnit, ...]:
    """One MemoryUnit per turn, with deterministic id and the turn's normalised times."""
    ev = turn.event
    unit = MemoryUnit(
        memory_id=memory_id(ev.tenant_id, ev.session_id, ev.event_id, 0),
        unit_index=0,
        tenant_id=ev.tenant_id,
        session_id=ev.session_id,
        user_id=ev.user_id,
        task_id=turn.task_id,
        turn_id=ev.turn_key,
        event_id=ev.event_id,
        ts=ev.ts,
        text=turn.text,
        source_text=ev.text,
        speaker=ev.speaker,
        speaker_role=ev.speaker_role,
        modality=ev.modality,
        lang=ev.lang or turn.lang,
        times=turn.times,
    )
    return (unit,)
