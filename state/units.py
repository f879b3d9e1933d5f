"""Memory unit assembly: a normalised turn → the MemoryUnits that land in the store.

Foundation rule: one unit per turn carrying every annotation known so far; the write-time
filters (coref, terms, tagging, entropy windows) refine the cut and the annotations.
"""

from __future__ import annotations

from schemas.memory import MemoryUnit, memory_id
from state.terms import SentenceNote
from state.turn import Turn


def turn_entropy(notes: tuple[SentenceNote, ...]) -> float:
    """Until the entropy stage cuts units: the sentences' fixed entropies where every sentence has one
    (a turn of short term sentences: 0.1), else the neutral 0.5; raised to the authority floor.

    >>> turn_entropy((SentenceNote(("TCP",), (), 0.1),)), turn_entropy((SentenceNote((), ("老板",), None, 0.5, True),))
    (0.1, 0.5)
    """
    fixed = [n.fixed_entropy for n in notes]
    value = max(f for f in fixed if f is not None) if notes and None not in fixed else 0.5
    return max([value, *(n.entropy_floor for n in notes)])


def units_from_turn(turn: Turn) -> tuple[MemoryUnit, ...]:
    """One MemoryUnit per turn, with deterministic id, the turn's normalised times, coreference
    anchors, terms and priority flag."""
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
        coref=turn.coref,
        terms=turn.terms,
        priority_flag=turn.priority_flag,
        entropy=turn_entropy(turn.sentence_notes),
    )
    return (unit,)
