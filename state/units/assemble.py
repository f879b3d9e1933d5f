"""Memory unit assembly (docs/design.md#entropy): a tagged, entropy-cut turn → the MemoryUnits that land in the store.

One unit per `UnitSpan` of `Turn.unit_cut`: an atomic high-entropy (or priority) segment, or a run
of merged low-entropy segments (`merged_from` lists them). The unit text is the verbatim slice of
the turn from the first to the last segment; `source_text` is the whole utterance as received.
Annotations of a merged run: intent as for a turn (last segment that says more than neutral),
the most salient unit type, the lowest confidence, stress/urgency at their peak, certainty at its
lowest; with a trained head, its emotion read from the turn's stored vector is mixed in
(`blend_unit_emotion`, filled by operators/unit_emotion.py). Ids stay deterministic:
`memory_id(tenant, session, event, unit_index)`.

A turn that never went through tagging and the entropy cut (empty `unit_cut`) becomes one unit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from schemas.memory import EmotionLoad, IntentScores, MemoryUnit, Severity, memory_id, turn_embedding_text
from state.normalise.segments import SegmentTags, UnitSpan, unit_text
from state.normalise.turn import Turn
from state.tagging.kinds import unit_kind
from state.tagging.lexicon import CLASSES
from state.tagging.tagger import Vector, turn_intent
from state.terms.whitelist import SentenceNote
from state.units.promise import carry_deadlines

_OPEN_KINDS = ("complaint", "repeat_complaint", "action_request")  # pending until resolved


def _severity(kind: str, stress: float, urgency: float, priority: bool) -> Severity:
    """High: flagged, a complaint said again, or a stressed or urgent complaint or request; medium:
    any other complaint (a defect report included), or a stressed or urgent unit; else low."""
    if priority or kind == "repeat_complaint" or (kind in _OPEN_KINDS and max(stress, urgency) >= 0.7):
        return "high"
    if kind == "complaint" or stress >= 0.4 or urgency >= 0.5:
        return "medium"
    return "low"


def _whole_turn_cut(turn: Turn) -> tuple[UnitSpan, ...]:
    n = len(turn.segments)
    return (UnitSpan(0, n - 1, atomic=True),) if n else ()


def unit_spans(turn: Turn) -> tuple[UnitSpan, ...]:
    """The cut, or one unit over the whole turn when the entropy stage did not run."""
    return turn.unit_cut or _whole_turn_cut(turn)


def head_texts(turn: Turn) -> list[str]:
    """The text whose vector each unit's trained heads (emotion, unit type) read: the store's text
    of the unit's turn (`MemoryUnit.embedding_text`), so that one embedding of a turn serves its
    stored vector and every head of its units.
    """
    return [turn_embedding_text(turn.event.text)] * max(1, len(unit_spans(turn)))


def lexicon_emotion(tags: list[SegmentTags]) -> tuple[float, float, float, float]:
    """A unit's emotion from its segments: stress and urgency at their peak, certainty at its lowest."""
    if not tags:
        default = EmotionLoad()
        return default.stress, default.certainty, default.urgency, default.cooperation
    return (
        max(t.stress for t in tags),
        min(t.certainty for t in tags),
        max(t.urgency for t in tags),
        sum(t.cooperation for t in tags) / len(tags),
    )


def blend_unit_emotion(
    turn: Turn, head_emotion: Sequence[Sequence[float]] | Vector, weight: float, apology_threshold: float
) -> Turn:
    """Mix the head's emotion (one row per unit, read from the unit's own vector) into the lexicon's.

    The agent-apology rule applies to the head's stress too: above the threshold it becomes 1 − stress.
    """
    spans = unit_spans(turn)
    rows = []
    for index, head_row in enumerate(head_emotion):
        tags = list(turn.tags[spans[index].first : spans[index].last + 1]) if spans else []
        lex = lexicon_emotion(tags)
        head = [float(v) for v in head_row]
        if any(t.apology for t in tags) and head[0] > apology_threshold:
            head[0] = 1.0 - head[0]
        mixed = tuple(min(1.0, max(0.0, (1 - weight) * a + weight * b)) for a, b in zip(lex, head, strict=True))
        rows.append((mixed[0], mixed[1], mixed[2], mixed[3]))
    return replace(turn, unit_emotion=tuple(rows))


def turn_entropy(notes: tuple[SentenceNote, ...]) -> float:
    """A turn the entropy stage did not cut: the sentences' fixed entropies where every sentence has
    one (a turn of short term sentences: 0.1), else the neutral 0.5; raised to the authority floor.

    >>> turn_entropy((SentenceNote(("TCP",), (), 0.1),)), turn_entropy((SentenceNote((), ("老板",), None, 0.5, True),))
    (0.1, 0.5)
    """
    fixed = [n.fixed_entropy for n in notes]
    value = max(f for f in fixed if f is not None) if notes and None not in fixed else 0.5
    return max([value, *(n.entropy_floor for n in notes)])


def units_from_turn(turn: Turn) -> tuple[MemoryUnit, ...]:
    """The turn's memory units, in order, with deterministic ids and every MemoryUnit field filled."""
    cut = unit_spans(turn)
    if not cut:
        entropy = turn_entropy(turn.sentence_notes)
        return (_unit(turn, 0, turn.text, (), [], entropy, turn.priority_flag, 0, len(turn.text)),)
    units = []
    for index, span in enumerate(cut):
        segs = turn.segments[span.first : span.last + 1]
        tags = list(turn.tags[span.first : span.last + 1])
        start, end = segs[0].start, segs[-1].end
        text = unit_text(turn.text[start:end])
        merged = tuple(unit_text(s.text) for s in segs) if len(segs) > 1 else ()
        entropies = turn.segment_entropy[span.first : span.last + 1]
        entropy = (max(entropies) if span.atomic else sum(entropies) / len(entropies)) if entropies else 0.5
        units.append(_unit(turn, index, text, merged, tags, entropy, span.priority, start, end))
    return carry_deadlines(units)


def _unit(
    turn: Turn,
    index: int,
    text: str,
    merged: tuple[str, ...],
    tags: list[SegmentTags],
    entropy: float,
    priority: bool,
    start: int,
    end: int,
) -> MemoryUnit:
    ev = turn.event
    if tags:
        probs, label = turn_intent(tags)
        kind = turn.unit_kinds[index] if index < len(turn.unit_kinds) else unit_kind([t.kind for t in tags])
        load = turn.unit_emotion[index] if index < len(turn.unit_emotion) else lexicon_emotion(tags)
        stress, certainty, urgency, cooperation = load
        emotion = EmotionLoad(stress=stress, certainty=certainty, urgency=urgency, cooperation=cooperation)
        confidence = min(t.confidence for t in tags)
        hedged = [t.certainty for t in tags if t.hedged]
        if hedged:  # a hedge holds whatever the head's emotion says: the unit is no surer than its hedged part
            certainty = min(certainty, max(hedged))
            emotion = emotion.model_copy(update={"certainty": certainty})
        strength = max(t.commitment_strength for t in tags)
        topic = next((t.topic for t in tags if t.topic), None)
    else:
        probs, label, kind = tuple(1.0 if c == "neutral" else 0.0 for c in CLASSES), "neutral", "statement"
        emotion, confidence, strength, topic = EmotionLoad(), 0.75, 0.0, None
        stress = urgency = 0.0
    severity = _severity(kind, stress, urgency, priority)
    return MemoryUnit(
        memory_id=memory_id(ev.tenant_id, ev.session_id, ev.event_id, index),
        unit_index=index,
        tenant_id=ev.tenant_id,
        session_id=ev.session_id,
        user_id=ev.user_id,
        task_id=turn.task_id,
        turn_id=ev.turn_key,
        event_id=ev.event_id,
        ts=ev.ts,
        text=text,
        source_text=ev.text,
        speaker=ev.speaker,
        speaker_role=ev.speaker_role,
        modality=ev.modality,
        lang=ev.lang or turn.lang,
        coref=tuple(
            a for a in turn.coref if a.mention_span is None or (a.mention_span[0] < end and a.mention_span[1] > start)
        ),
        terms=tuple(t for t in turn.terms if t.casefold() in text.casefold()),
        priority_flag=priority,
        entropy=min(1.0, max(0.0, entropy)),
        unit_type=kind,  # type: ignore[arg-type]
        merged_from=merged,
        intent=IntentScores(**dict(zip(CLASSES, (min(1.0, max(0.0, p)) for p in probs), strict=True))),
        intent_label=label,  # type: ignore[arg-type]
        confidence_score=confidence,
        emotion=emotion,
        commitment_strength=strength,
        times=tuple(t for t in turn.times if t.span[0] < end and t.span[1] > start),
        topic=topic,
        severity=severity,
        # What an agent asks of the customer ("please reset your password") is not an open issue.
        resolution_status="pending" if kind in _OPEN_KINDS and ev.speaker_role != "agent" else "none",
    )
