"""Intent and emotion tagging, role-aware (docs/design.md#tagging): pure functions over one turn.

Two heads per clause segment: intent over 6 classes with probabilities, and the emotion load
(stress, certainty, urgency, cooperation) in 0–1. The default scorer is the lexicon
(`state/tagging/resources/tagging.yaml`) plus rules; a trained `IntentHead` (small heads on frozen
sentence embeddings, or a fine-tuned transformer, see `sinks/models/tagger_model.py`) is blended into the
intent per segment when `head_weight` > 0, and into the emotion load per memory unit, after the
entropy cut, where it reads the unit's own stored vector (`state/units.blend_unit_emotion`).
Post rules, in order: hedge downgrade (commitment + hedge adverb +
negotiable object → request, confidence 0.3, certainty down), commitment strength, the general
hedge rule (a hedge marker such as 应该/估计/吧 or maybe/I think, unless it is the politeness of a real
question or a polite request: confidence ≤ 0.45, certainty ≤ 0.35, a promise's strength 0.3; both hedge
rules in `state/tagging/hedges.py`), ASR pauses ≥ 1 s lower certainty, agent apology inversion
(stress > 0.5 → 1 − stress), role-weighted pressure.
The speaker's running stress (emotional inertia) is carried in later, on each unit's final
lexicon + head stress (`state/units/emotion.py`), not here. The lexicon scoring itself lives in
`state/tagging/rules.py`, the unit type of a segment in `state/tagging/kinds.py`.

State: `TagState` per session (the previous turn's main intent and speaker, the dialogue
context the intent head reads). Discarded with the session
(see operators/tagging.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from state.normalise.segments import Segment, SegmentTags, segment_sentences, unit_text
from state.normalise.turn import Turn
from state.tagging.hedges import commitment_strength, hedge_marker, hedged, politeness, promise_shape
from state.tagging.kinds import segment_kind, segment_topic, settle_turn_kinds
from state.tagging.lexicon import CLASSES, TagLexicon
from state.tagging.rules import (
    Vector,
    cue_text,
    rule_emotion,
    rule_logits,
    softmax,
)

__all__ = [
    "IntentHead",
    "TagConfig",
    "TagState",
    "Vector",
    "cue_text",
    "rule_logits",
    "tag_segment",
    "tag_texts",
    "tag_turn",
    "turn_intent",
]

_CJK = re.compile(r"[\u3400-\u9fff]")
NEUTRAL = CLASSES.index("neutral")
LAST_WEIGHT = 0.85  # a turn's intent: this much from its last segment that says more than neutral
COMMITMENT = CLASSES.index("commitment")
REQUEST = CLASSES.index("request")


class IntentHead(Protocol):
    """A trained dual head: per text, intent probabilities (CLASSES order) and emotion load (4 dims)."""

    name: str

    def predict(self, texts: Sequence[str], contexts: Sequence[str | None]) -> tuple[Vector, Vector]: ...


@dataclass(frozen=True, slots=True)
class TagConfig:
    clause_min_chars: int = 20
    head_weight: float = 0.0  # intent, log-linear blend per segment: 0 = lexicon only, 1 = head only
    context: bool = True  # read the other speaker's previous main intent


@dataclass(frozen=True, slots=True)
class TagState:
    """Per-session dialogue context: the last turn's main intent and who said it.

    Recovery snapshots of the three-field TagState (with running stress, since moved to
    `state.units.emotion.CarryState`) restore into this one: the third value is dropped.
    """

    prev_intent: str | None = None
    prev_speaker: str | None = None


def tag_segment(
    text: str,
    role: str,
    lex: TagLexicon,
    *,
    prev_intent: str | None = None,
    head: tuple[Vector, Vector] | None = None,
    config: TagConfig = TagConfig(),
    pause_drop: float = 0.0,
) -> SegmentTags:
    """Tag one clause segment spoken in `role`.

    >>> from state.tagging.lexicon import load_lexicon
    >>> t = tag_segment("这个价格我们尽力争取", "agent", load_lexicon())
    >>> t.label, t.confidence, t.commitment_strength
    ('request', 0.3, 0.3)
    """
    norm = cue_text(text)
    logits, fired = rule_logits(norm, lex, prev_intent)
    probs = softmax(logits)
    (stress, certainty, urgency, cooperation), emotion_why = rule_emotion(norm, lex)
    fired = (*fired, *emotion_why)
    if head is not None and config.head_weight > 0:
        # The head's intent, blended in log space; its emotion is blended per memory unit
        # (state/units.blend_unit_emotion), where its vector is the stored one.
        w = config.head_weight
        probs = softmax((1 - w) * np.log(probs + 1e-9) + w * np.log(np.asarray(head[0]) + 1e-9))
    label = CLASSES[int(probs.argmax())]
    confidence = 0.75
    strength = 0.0
    # A promise read weakly (commitment cues fired, commitment ≥ 0.2) counts for the hedge rule too.
    committed = label == "commitment" or (probs[COMMITMENT] >= 0.2 and _commitment_cue(fired, lex))
    is_hedged = committed and hedged(norm, lex)
    if is_hedged:
        # A hedged promise about a negotiable object is a request for room, not a promise.
        moved = probs[COMMITMENT] * 0.8
        probs = probs.copy()
        probs[COMMITMENT] -= moved
        probs[REQUEST] += moved
        probs = probs / probs.sum()
        label = "request"
        confidence = lex.hedge.confidence_score
        certainty = max(0.0, certainty - lex.hedge.certainty_drop)
        fired = (*fired, "hedge_rule")
    if label == "commitment" or is_hedged:
        strength = commitment_strength(norm, lex)
    # The general hedge rule: a marker makes a statement uncertain and a promise weak.
    marker = None if politeness(norm, label, lex) else hedge_marker(norm, lex)
    if marker is not None and not is_hedged:
        confidence = min(confidence, lex.hedge.marker_confidence)
        certainty = min(certainty, lex.hedge.marker_max_certainty)
        if label == "commitment" or promise_shape(norm, lex):
            strength = lex.hedge.marker_strength
        fired = (*fired, "hedge_marker")
    certainty = max(0.0, certainty - pause_drop)
    inverted = False
    apology_cue = lex.apology.get("zh" if _CJK.search(norm) else "en")
    apology = role == "agent" and apology_cue is not None and apology_cue.search(norm) is not None
    if apology and stress > lex.apology_threshold:
        stress = 1.0 - stress  # an agent's apology releases pressure
        inverted = True
        fired = (*fired, "apology_inversion")
    pressure = lex.role_weights.get(role, 1.0) * stress
    kind, kind_why = segment_kind(norm, label, role, stress, lex, own_promise=_commitment_cue(fired, lex))
    fired = (*fired, *kind_why)
    return SegmentTags(
        intent=tuple(float(p) for p in probs),
        label=label,
        stress=_unit(stress),
        certainty=_unit(certainty),
        urgency=_unit(urgency),
        cooperation=_unit(cooperation),
        confidence=confidence,
        commitment_strength=strength,
        pressure=pressure,
        hedged=is_hedged or marker is not None,
        apology=apology,
        apology_inverted=inverted,
        kind=kind,
        topic=segment_topic(norm, lex),
        cues=fired,
    )


def _commitment_cue(fired: tuple[str, ...], lex: TagLexicon) -> bool:
    names = set(fired)
    return any(c.name in names and c.weights[COMMITMENT] > 0 for c in lex.intent_cues)


def _unit(x: float) -> float:
    return float(min(1.0, max(0.0, x))) if math.isfinite(x) else 0.0


def pause_certainty_drop(turn: Turn, lex: TagLexicon) -> float:
    """Certainty lost to long ASR pauses inside the turn."""
    asr = turn.event.asr
    if asr is None:
        return 0.0
    long_pauses = sum(1 for p in asr.pauses if p.duration_ms >= lex.pause_min_ms)
    return min(lex.pause_max_drop, long_pauses * lex.pause_drop)


def turn_intent(tags: Sequence[SegmentTags]) -> tuple[tuple[float, ...], str]:
    """The turn's main intent: the last segment that says more than neutral, blended with the mean.

    A turn's speech act usually lands at its end ("Yes. Would you like a window seat?").
    """
    if not tags:
        probs = tuple(1.0 if c == "neutral" else 0.0 for c in CLASSES)
        return probs, "neutral"
    mat = np.array([t.intent for t in tags], dtype=np.float64)
    mean = mat.mean(axis=0)
    speaking = [i for i, row in enumerate(mat) if int(row.argmax()) != NEUTRAL]
    mixed = LAST_WEIGHT * mat[speaking[-1]] + (1 - LAST_WEIGHT) * mean if speaking else mean
    mixed = mixed / mixed.sum()
    return tuple(float(p) for p in mixed), CLASSES[int(mixed.argmax())]


HeadFn = Callable[[Sequence[str], Sequence[str | None]], tuple[Vector, Vector]]


def tag_texts(
    segments: Sequence[str],
    role: str,
    lex: TagLexicon,
    *,
    prev_intent: str | None,
    head: IntentHead | None = None,
    config: TagConfig = TagConfig(),
    pause_drop: float = 0.0,
    context_text: str | None = None,
) -> tuple[SegmentTags, ...]:
    """Tag the segments of one turn; the dialogue context applies to the first segment, and a
    repetition said anywhere in the turn makes its complaints repeat complaints."""
    head_out: tuple[Vector, Vector] | None = None
    if head is not None and segments and config.head_weight > 0:
        texts = [unit_text(t) for t in segments]
        head_out = head.predict(texts, [context_text] * len(segments))
    return settle_turn_kinds(
        [
            tag_segment(
                text,
                role,
                lex,
                prev_intent=prev_intent if i == 0 else None,
                head=None if head_out is None else (head_out[0][i], head_out[1][i]),
                config=config,
                pause_drop=pause_drop,
            )
            for i, text in enumerate(segments)
        ],
        segments,
    )


def tag_turn(
    state: TagState | None, turn: Turn, config: TagConfig, lex: TagLexicon, head: IntentHead | None = None
) -> tuple[TagState, Turn]:
    """Fold one turn into the session context and return the turn with its tags filled."""
    state = state or TagState()
    ev = turn.event
    segments: tuple[Segment, ...] = turn.segments or segment_sentences(
        turn.sentences, clause_min_chars=config.clause_min_chars, source=turn.text
    )
    speaker = ev.speaker or ev.speaker_role
    other_speaker = state.prev_speaker is not None and state.prev_speaker != speaker
    if not config.context:
        prev = None
    elif state.prev_intent is None:
        prev = "start"
    else:
        prev = state.prev_intent if other_speaker else None
    tags = tag_texts(
        [s.text for s in segments],
        ev.speaker_role,
        lex,
        prev_intent=prev,
        head=head,
        config=config,
        pause_drop=pause_certainty_drop(turn, lex),
    )
    probs, label = turn_intent(tags)
    new_turn = replace(turn, segments=segments, tags=tags, turn_intent=probs, turn_intent_label=label)
    return TagState(prev_intent=label, prev_speaker=speaker), new_turn
