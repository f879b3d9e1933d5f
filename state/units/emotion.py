"""A memory unit's final emotion load (docs/design.md#tagging): the lexicon's and the head's
blended, then the speaker's running stress carried in, then the role rule. Pure functions over one
turn and one session's state.

Order, per unit: the lexicon's emotion (its segments, apologies already inverted) mixed with the
head's (an agent's apology inverts the head's stress too, `state.units.assemble.blend_unit_emotion`), then
the carry: stress = (1 − weight) × the unit's own + weight × the speaker's running stress. The carry
comes after the apology inversion and skips a unit the inversion fired on: an agent's apology
releases pressure, the pressure they carried included; carrying first would turn a more stressed
past into a *calmer* apology. After the turn the speaker's running stress becomes
memory × running + (1 − memory) × the peak of the turn's own (uncarried) unit stress.
Where the carry moved a unit's stress, its segments' cues name `stress_carry` (explainability).

Role rule, last: an agent's apology or empathy (理解您的心情, I understand how frustrating …) never
carries more stress than the customer's turn it answers (the peak final stress of the last
customer turn); the inversion above stays as the floor. Where it lowered a unit, its segments'
cues name `apology_capped`. Before any customer turn there is nothing to answer: no cap.

State: `CarryState` per session (the running stress of its most recent speakers, at most
`SPEAKERS_KEPT`, and the last customer turn's peak stress), discarded with the session by
operators/unit_emotion.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from datetime import datetime

from state.normalise.turn import Turn
from state.tagging.lexicon import TagLexicon
from state.tagging.tagger import IntentHead, Vector
from state.units.assemble import blend_unit_emotion, head_texts, lexicon_emotion, unit_spans

SPEAKERS_KEPT = 8  # running stress is kept for this many of a session's most recent speakers
CARRY_CUE = "stress_carry"
CAP_CUE = "apology_capped"
ANSWERING_ROLE = "agent"  # whose apologies answer, and are capped by, the last customer turn
_CARRY_NOTE = 0.02  # a carry that moves a unit's stress this much is named among its cues


@dataclass(frozen=True, slots=True)
class StressCarry:
    """How much of a speaker's running stress enters their next turn, and how long it lasts."""

    weight: float = 0.0  # 0 = off: each unit's own stress
    memory: float = 0.5  # share of the running stress that survives each of the speaker's turns

    @classmethod
    def of(cls, lex: TagLexicon) -> StressCarry:
        """The carry configured on the lexicon's stress dimension (`emotion.stress.carry`)."""
        dim = lex.emotions[0]
        return cls(dim.carry_weight, dim.carry_memory)


@dataclass(frozen=True, slots=True)
class CarryState:
    """Per session: each recent speaker's running stress (most recent last), and when the session
    ended (turns still in flight then carry as before; a later turn starts afresh)."""

    stress: tuple[tuple[str, float], ...] = ()
    ended_at: datetime | None = None
    customer_peak: float | None = None  # the last customer turn's peak final stress

    def __setstate__(self, state: Sequence[object]) -> None:
        # A snapshot taken before a field existed restores with that field's default.
        values = [*state, *(f.default for f in fields(self)[len(state) :])]
        for f, value in zip(fields(self), values, strict=False):
            object.__setattr__(self, f.name, value)


def end_session(state: CarryState | None, ts: datetime) -> CarryState:
    """A SessionEnd at `ts`: keep the running stress for turns still in flight, mark the end.

    Marked even without a state: the session's last turn may still be on its way (the entropy
    stage releases it on the same closing), and must not start a state that only the idle timer
    would drop.
    """
    return replace(state or CarryState(), ended_at=ts)


def unit_emotion_turn(
    state: CarryState | None,
    turn: Turn,
    lex: TagLexicon,
    *,
    head: IntentHead | None = None,
    head_weight: float = 0.0,
    carry: StressCarry | None = None,
) -> tuple[CarryState, Turn]:
    """Fill `turn.unit_emotion` (lexicon, head, carry) and fold the turn into the session's state.

    `carry` defaults to the lexicon's. An untagged turn passes through unchanged.

    >>> from datetime import UTC, datetime
    >>> from schemas.events import ConversationEvent
    >>> from state.tagging.lexicon import load_lexicon
    >>> from state.tagging.tagger import TagConfig, tag_turn
    >>> from state.normalise.turn import NormaliseConfig, normalise_turn
    >>> lex, ts = load_lexicon(), datetime(2026, 1, 1, tzinfo=UTC)
    >>> def turn(text, i):
    ...     ev = ConversationEvent(event_id=f"e{i}", session_id="s", ts=ts, text=text, speaker="A")
    ...     return tag_turn(None, normalise_turn(ev, NormaliseConfig()), TagConfig(), lex)[1]
    >>> state, _ = unit_emotion_turn(None, turn("你们太过分了！到底怎么回事！", 1), lex)
    >>> _, calm = unit_emotion_turn(state, turn("好的。", 2), lex)
    >>> _, alone = unit_emotion_turn(None, turn("好的。", 3), lex)
    >>> calm.unit_emotion[0][0] > alone.unit_emotion[0][0], "stress_carry" in calm.tags[0].cues
    (True, True)
    """
    if state is None or (state.ended_at is not None and turn.event.ts > state.ended_at):
        state = CarryState()
    if not turn.tags:
        return state, turn
    head_rows: Vector | None = None
    if head is not None and head_weight > 0:
        texts = head_texts(turn)
        head_rows = head.predict(texts, [None] * len(texts))[1]
        turn = blend_unit_emotion(turn, head_rows, head_weight, lex.apology_threshold)
    else:
        spans = unit_spans(turn)
        turn = replace(turn, unit_emotion=tuple(lexicon_emotion(list(turn.tags[u.first : u.last + 1])) for u in spans))
    state, turn = carry_stress(state, turn, carry or StressCarry.of(lex), head_rows, lex.apology_threshold)
    return cap_apology(state, turn)


def cap_apology(state: CarryState, turn: Turn) -> tuple[CarryState, Turn]:
    """The role rule: an agent's apology or empathy unit is capped at the stress of the customer
    turn it answers; a customer turn becomes the one the next apology answers."""
    role = turn.event.speaker_role
    spans = unit_spans(turn)
    if not spans or len(turn.unit_emotion) != len(spans):
        return state, turn
    if role == "customer":
        return replace(state, customer_peak=max(row[0] for row in turn.unit_emotion)), turn
    if role != ANSWERING_ROLE or state.customer_peak is None:
        return state, turn
    rows = list(turn.unit_emotion)
    tags = list(turn.tags)
    for i, span in enumerate(spans):
        if rows[i][0] <= state.customer_peak or not any(t.apology for t in turn.tags[span.first : span.last + 1]):
            continue
        rows[i] = (state.customer_peak, rows[i][1], rows[i][2], rows[i][3])
        for j in range(span.first, span.last + 1):
            if CAP_CUE not in tags[j].cues:
                tags[j] = replace(tags[j], cues=(*tags[j].cues, CAP_CUE))
    return state, replace(turn, unit_emotion=tuple(rows), tags=tuple(tags))


def carry_stress(
    state: CarryState,
    turn: Turn,
    carry: StressCarry,
    head_rows: Sequence[Sequence[float]] | Vector | None = None,
    apology_threshold: float = 0.5,
) -> tuple[CarryState, Turn]:
    """Carry the speaker's running stress into each unit of a turn whose `unit_emotion` is final.

    `head_rows` (the head's emotion per unit, if it was blended) tell where the apology rule
    inverted the head's stress: such a unit is not carried into.
    """
    spans = unit_spans(turn)
    if carry.weight <= 0 or not spans or len(turn.unit_emotion) != len(spans):
        return state, turn
    speaker = turn.event.speaker or turn.event.speaker_role
    before = dict(state.stress).get(speaker)
    rows = list(turn.unit_emotion)
    tags = list(turn.tags)
    for i, span in enumerate(spans):
        unit_tags = turn.tags[span.first : span.last + 1]
        head_inverted = (
            head_rows is not None and any(t.apology for t in unit_tags) and float(head_rows[i][0]) > apology_threshold
        )
        if before is None or head_inverted or any(t.apology_inverted for t in unit_tags):
            continue
        own = rows[i][0]
        mixed = min(1.0, max(0.0, (1 - carry.weight) * own + carry.weight * before))
        rows[i] = (mixed, rows[i][1], rows[i][2], rows[i][3])
        if abs(mixed - own) >= _CARRY_NOTE:
            for j in range(span.first, span.last + 1):
                if CARRY_CUE not in tags[j].cues:
                    tags[j] = replace(tags[j], cues=(*tags[j].cues, CARRY_CUE))
    now = max(row[0] for row in turn.unit_emotion)  # the turn's own peak, before the carry
    value = now if before is None else carry.memory * before + (1 - carry.memory) * now
    kept = tuple(item for item in state.stress if item[0] != speaker)[-(SPEAKERS_KEPT - 1) :]
    new_state = replace(state, stress=(*kept, (speaker, round(value, 4))))
    return new_state, replace(turn, unit_emotion=tuple(rows), tags=tuple(tags))
