"""Intent and emotion tagging, role-aware (docs/design.md#tagging): pure functions over one turn.

Two heads per clause segment: intent over 6 classes with probabilities, and the emotion load
(stress, certainty, urgency, cooperation) in 0–1. The default scorer is the lexicon
(`state/tagging/resources/tagging.yaml`) plus rules; a trained `IntentHead` (small heads on frozen
sentence embeddings, or a fine-tuned transformer, see `sinks/models/tagger_model.py`) is blended into the
intent per segment when `head_weight` > 0, and into the emotion load per memory unit, after the
entropy cut, where it reads the unit's own stored vector (`state/units.blend_unit_emotion`).
Post rules, in order: hedge downgrade (commitment + hedge adverb +
negotiable object → request, confidence 0.3, certainty down), commitment strength, ASR pauses ≥ 1 s
lower certainty, agent apology inversion (stress > 0.5 → 1 − stress), role-weighted pressure.
The speaker's running stress (emotional inertia) is carried in later, on each unit's final
lexicon + head stress (`state/units/emotion.py`), not here. Stress cues read negation and
intensity adverbs just before them; English stress also reads VADER's valence.

State: `TagState` per session (the previous turn's main intent and speaker, the dialogue
context the intent head reads). Discarded with the session
(see operators/tagging.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from state.normalise.segments import Segment, SegmentTags, segment_sentences, unit_text
from state.normalise.turn import Turn
from state.tagging.lexicon import CLASSES, EMOTIONS, CueScope, TagLexicon

_CJK = re.compile(r"[\u3400-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")
_APOS = re.compile(r"\s*\\?\s*['’‘`]\s*(?=(?:ll|s|t|re|ve|d|m)\b)", re.IGNORECASE)
_SPACE_PUNCT = re.compile(r"\s+([,.!?;:，。！？；：])")
_SPACES = re.compile(r"\s+")
NEUTRAL = CLASSES.index("neutral")
LAST_WEIGHT = 0.85  # a turn's intent: this much from its last segment that says more than neutral
COMMITMENT = CLASSES.index("commitment")
REQUEST = CLASSES.index("request")
Vector = npt.NDArray[np.float64]


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


def cue_text(text: str) -> str:
    """The form cues match against: lower case, straight quotes, no space before punctuation.

    >>> cue_text("I ’ ll be there , sir .")
    "i'll be there, sir."
    """
    text = _APOS.sub("'", text.replace("’", "'").replace("‘", "'"))
    text = _SPACE_PUNCT.sub(r"\1", text)
    return _SPACES.sub(" ", text).strip().lower()


def _langs(text: str) -> tuple[str, ...]:
    langs = ["any"]
    if _CJK.search(text):
        langs.append("zh")
    if _LATIN.search(text):
        langs.append("en")
    return tuple(langs)


def softmax(logits: Vector) -> Vector:
    z = logits - logits.max()
    e = np.exp(z)
    return np.asarray(e / e.sum(), dtype=np.float64)


def rule_logits(text: str, lex: TagLexicon, prev_intent: str | None) -> tuple[Vector, tuple[str, ...]]:
    """Lexicon intent logits for one segment, plus the names of the cues that fired."""
    langs = _langs(text)
    logits = np.array(lex.bias, dtype=np.float64)
    fired: list[str] = []
    grouped: dict[str, list[tuple[float, ...]]] = {}
    for cue in lex.intent_cues:
        if cue.lang in langs and cue.regex.search(text):
            fired.append(cue.name)
            if cue.group is None:
                logits += cue.weights
            else:
                grouped.setdefault(cue.group, []).append(cue.weights)
    for members in grouped.values():
        w = np.array(members, dtype=np.float64)
        pos = np.clip(w, 0.0, None)
        # Overlapping evidence (a "?" and a "吗" and a "什么"): the strongest counts, the rest a quarter.
        logits += pos.max(axis=0) + 0.25 * (pos.sum(axis=0) - pos.max(axis=0)) + np.clip(w, None, 0.0).sum(axis=0)
    if prev_intent is not None and prev_intent in lex.context:
        logits += lex.context[prev_intent]
        fired.append(f"after_{prev_intent}")
    return logits, tuple(fired)


def rule_emotion(text: str, lex: TagLexicon) -> tuple[tuple[float, float, float, float], tuple[str, ...]]:
    """The lexicon's emotion load for one segment, plus what beyond plain cues moved it.

    Named in the second value (explainability): `stress_negated` / `stress_intensified` when a
    cue sat in the scope of a negation or an intensity adverb, `stress_valence_neg` /
    `stress_valence_pos` when the English valence library (VADER) raised or lowered stress.

    >>> from state.tagging.lexicon import load_lexicon
    >>> (stress, *_), why = rule_emotion("我不开心", load_lexicon())
    >>> stress > rule_emotion("我开心", load_lexicon())[0][0], why
    (True, ('stress_negated',))
    """
    langs = _langs(text)
    out = []
    why: list[str] = []
    for name, dim in zip(EMOTIONS, lex.emotions, strict=True):
        value = dim.base
        scoped = {"negated": False, "intensified": False}
        for cue in dim.cues:
            if cue.lang not in langs:
                continue
            first: dict[str, int] = {}
            for m in cue.regex.finditer(text):
                first.setdefault(m.group(0), m.start())
            # Repeated evidence counts, with diminishing returns: 1, 1.5, 2 × the weight.
            for k, start in enumerate(sorted(first.values())[:3]):
                weight, how = _scoped(text, start, cue.lang, cue.weights[0], dim.scope)
                value += weight * (1.0 if k == 0 else 0.5)
                if how is not None:
                    scoped[how] = True
        why.extend(f"{name}_{how}" for how, hit in scoped.items() if hit)
        if (dim.valence_neg or dim.valence_pos) and "en" in langs:
            compound = english_valence(text)
            shift = dim.valence_neg * max(0.0, -compound) - dim.valence_pos * max(0.0, compound)
            value += shift
            if abs(shift) >= _VALENCE_NOTE:
                why.append(f"{name}_valence_{'neg' if shift > 0 else 'pos'}")
        out.append(min(1.0, max(0.0, value)))
    return (out[0], out[1], out[2], out[3]), tuple(why)


_VALENCE_NOTE = 0.02  # a valence shift this large is named among the cues
_SCOPE_CHARS = 24  # how far back negation and intensity patterns read


def _scoped(text: str, start: int, lang: str, weight: float, scope: CueScope) -> tuple[float, str | None]:
    """A cue match's weight after the words just before it: negated, intensified, or as it is."""
    before = text[max(0, start - _SCOPE_CHARS) : start]
    negation = scope.negation.get(lang)
    if negation is not None and negation.search(before):
        factor, how = (scope.negated_relief if weight < 0 else scope.negated_raise), "negated"
    else:
        intensity = scope.intensity.get(lang)
        if intensity is None or not intensity.search(before):
            return weight, None
        factor, how = scope.intensified, "intensified"
    return weight * factor, (how if factor != 1.0 else None)


@lru_cache(maxsize=1)
def _vader() -> Any:
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return SentimentIntensityAnalyzer()


def english_valence(text: str) -> float:
    """VADER compound valence in −1…1 (a lexicon with rules for negation, boosters, caps, "!").

    >>> english_valence("this is terrible") < 0 < english_valence("this is great")
    True
    """
    return float(_vader().polarity_scores(text)["compound"])


def _has_any(text: str, words: tuple[str, ...]) -> bool:
    return any(w in text for w in words)


def hedged(text: str, lex: TagLexicon) -> bool:
    """Hedge adverb and negotiable object in the same segment (either language).

    >>> from state.tagging.lexicon import load_lexicon
    >>> hedged("这个价格我们尽力争取", load_lexicon()), hedged("价格已确认", load_lexicon())
    (True, False)
    """
    h = lex.hedge
    for lang in _langs(text):
        if lang != "any" and _has_any(text, h.adverbs.get(lang, ())) and _has_any(text, h.objects.get(lang, ())):
            return True
    return False


def commitment_strength(text: str, lex: TagLexicon) -> float:
    """The first matching tier of the strength table (try 0.3 before promise 1.0 before will 0.7)."""
    langs = _langs(text)
    for rule in lex.strength_rules:
        if rule.lang in langs and rule.regex.search(text):
            return rule.strength
    return 0.0


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
    certainty = max(0.0, certainty - pause_drop)
    inverted = False
    apology_cue = lex.apology.get("zh" if _CJK.search(norm) else "en")
    apology = role == "agent" and apology_cue is not None and apology_cue.search(norm) is not None
    if apology and stress > lex.apology_threshold:
        stress = 1.0 - stress  # an agent's apology releases pressure
        inverted = True
        fired = (*fired, "apology_inversion")
    pressure = lex.role_weights.get(role, 1.0) * stress
    kind = segment_kind(norm, label, role, stress, lex)
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
        hedged=is_hedged,
        apology=apology,
        apology_inverted=inverted,
        kind=kind,
        topic=segment_topic(norm, lex),
        cues=fired,
    )


_KIND_OF_LABEL = {
    "request": "action_request",
    "commitment": "commitment",
    "question": "question",
    "clarify": "clarification",
    "refuse": "refusal",
}


def _cue(lex: TagLexicon, kind: str, text: str) -> bool:
    by_lang = lex.unit_cues.get(kind, {})
    return any(p.search(text) for lang, p in by_lang.items() if lang in _langs(text))


def segment_kind(text: str, label: str, role: str, stress: float, lex: TagLexicon) -> str:
    """The unit type of a segment: smalltalk and complaints first, then the intent, then status.

    >>> from state.tagging.lexicon import load_lexicon
    >>> lex = load_lexicon()
    >>> segment_kind("谢谢", "neutral", "customer", 0.0, lex)
    'smalltalk'
    >>> segment_kind("测试账号权限我们已开通", "neutral", "agent", 0.1, lex)
    'status_update'
    """
    stripped = text.strip(" ，,。.!！~～")
    if label == "neutral" and _cue(lex, "smalltalk", stripped):
        return "smalltalk"
    if role != "agent" and label in ("neutral", "question", "refuse") and _cue(lex, "complaint", text):
        return "complaint"
    if label in _KIND_OF_LABEL:
        return _KIND_OF_LABEL[label]
    if _cue(lex, "status_update", stripped):
        return "status_update"
    if role != "agent" and stress >= 0.7:
        return "complaint"
    return "statement"


def segment_topic(text: str, lex: TagLexicon) -> str | None:
    """The recall question class a segment is about (order, logistics, after_sales …), if any."""
    for topic, pattern in lex.topics:
        if pattern.search(text):
            return topic
    return None


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
    """Tag the segments of one turn; the dialogue context applies to the first segment."""
    head_out: tuple[Vector, Vector] | None = None
    if head is not None and segments and config.head_weight > 0:
        texts = [unit_text(t) for t in segments]
        head_out = head.predict(texts, [context_text] * len(segments))
    return tuple(
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
