"""The anchors a turn's references write (`schemas.memory.CorefAnchor`).

`entity_anchor` for a name said, `anaphor_anchor` for a reference: with its referent, the guess made
explicit (`antecedent_span` in `context_window`, the sentence where the referent was last named, and
`antecedent_turn_id`); without one, the reference with no entity and confidence 0. Offsets of the
mention itself (`mention_span`) are in the turn's text. `under_question_rule` marks the anchors of a
问/咨询/确认 question for review and clears the questioner's referent rather than guess it.

Pure functions over typed records.
"""

from __future__ import annotations

from schemas.memory import CorefAnchor
from state.core.language import Sentence
from state.coref.anaphora import Anaphor
from state.coref.names import Named
from state.coref.window import Mention


def entity_anchor(named: Named, sentence: Sentence, turn_id: str) -> CorefAnchor:
    return CorefAnchor(
        mention=named.surface,
        core_referent=named.surface,
        resolved_entity=named.entity,
        entity_type=named.types[0] if len(named.types) == 1 else None,
        antecedent_span=named.span,
        antecedent_turn_id=turn_id,
        context_window=sentence.text,
        confidence=named.confidence,
        kind="entity",
        mention_span=(sentence.start + named.span[0], sentence.start + named.span[1]),
    )


def anaphor_anchor(anaphor: Anaphor, sentence: Sentence, chosen: Mention | None, confidence: float) -> CorefAnchor:
    span = (sentence.start + anaphor.span[0], sentence.start + anaphor.span[1])
    if chosen is None:
        return CorefAnchor(
            mention=anaphor.text,
            core_referent=anaphor.head,
            entity_type=anaphor.type,
            confidence=0.0,
            kind=anaphor.kind,
            mention_span=span,
        )
    return CorefAnchor(
        mention=anaphor.text,
        core_referent=anaphor.head or chosen.surface,
        resolved_entity=chosen.entity,
        entity_type=chosen.types[0] if len(chosen.types) == 1 else anaphor.type,
        antecedent_span=chosen.span,
        antecedent_turn_id=chosen.turn_id,
        context_window=chosen.sentence,
        confidence=round(confidence, 3),
        kind=anaphor.kind,
        mention_span=span,
    )


def under_question_rule(anchor: CorefAnchor, sentence: Sentence, clause: tuple[int, int]) -> CorefAnchor:
    """问/咨询/确认 questions: review the anchors; the questioner's referent (the subject: a person before
    the verb, or what precedes the verb in its clause) is not guessed. The one asked (ask him, 问问他)
    is the verb's object: kept, for review."""
    start = anchor.mention_span[0] - sentence.start if anchor.mention_span else 0
    subject = clause[0] <= start < clause[1]
    if anchor.kind != "entity" and ((anchor.entity_type == "person" and start < clause[1]) or subject):
        return anchor.model_copy(update={"resolved_entity": None, "confidence": 0.0, "needs_human_review": True})
    return anchor.model_copy(update={"needs_human_review": True})
