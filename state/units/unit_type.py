"""A memory unit's type from the rules and the trained unit-type head together
(docs/unit-types-and-role-emotion.md#the-trained-head). Pure functions over one turn.

The rules (`state.tagging.kinds`) type each segment and name the cue that decided it. Where such a
cue fired on the segment that gives the unit its type (a complaint family, a repeated contact, a
resolution, a reported promise, a refusal, a clarification, an action asked as a question, a
done-status, an agent's offer, who asked for something, a courtesy), the rules win. Otherwise —
the type came only from the intent label, or nothing fired and the unit is a plain statement — the
head's type replaces the rules' when the head gives it at least `min_margin` more probability than
it gives the rules' type; its choice is named among the unit's segment cues (`unit_type_head`).
The margin is high on purpose: on text the rules read through the intent label alone they are
still right more often than the head, so the head only overrules them where it is sure and they
are not (left one own set out at a time, 0.5 scored the same within a turn or two and typed more
of the demo's plain remarks).

The head reads the unit's own passage vector and the speaker's role (`sinks.models.unit_type_model`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
import numpy.typing as npt

from state.normalise.segments import SegmentTags
from state.normalise.turn import Turn
from state.tagging.kinds import COMPLAINT_FAMILY, KIND_RANK, unit_kind
from state.units.assemble import head_texts, unit_spans

HEAD_CUE = "unit_type_head"
# Cue names of `state.tagging.kinds.segment_kind` that decide a type on the segment's own words.
DECISIVE_CUES = frozenset(
    {
        "repeat_contact",
        "repeat",
        "clarification",
        "resolution",
        "third_party_promise",
        "refusal",
        "request_question",
        "status_done",
        "agent_commitment",
        "problem_gone",
        "yes_no_question",
        "info_question",
        "lookup",
        "generic",
        "forecast",
        "agent_future",
        "customer_promise",
        "bare_please",
        "attribution",
    }
)
# Types an agent's unit never takes from the head: an agent does not complain, and an agent's
# resolution is the closed-issue wording the rules read ("问题已解决", "the ticket is closed").
AGENT_NEVER = frozenset({"complaint", "repeat_complaint", "resolution_confirmation"})
_COMPLAINTS = frozenset({"complaint", "repeat_complaint"})
# A clarification is a form of words ("您是说…吗", "do you mean"), which the rules read; the head,
# reading meaning, takes every question about what was said for one.
HEAD_NEVER = frozenset({"clarification"})


class TypeReader(Protocol):
    """A trained unit-type head: per unit text and speaker role, probabilities over `classes`."""

    classes: tuple[str, ...]

    def predict(self, texts: Sequence[str], roles: Sequence[str]) -> npt.NDArray[np.float64]: ...


@dataclass(frozen=True, slots=True)
class TypeBlend:
    min_margin: float = 0.7  # head's p(its type) − head's p(rules' type) needed to overrule undecided rules
    rules_smalltalk: bool = True  # a courtesy the rules recognised stays smalltalk
    # A customer's problem report the rules found no cue for: the head's complaint and repeat
    # complaint probabilities together, against the rules' type, need only this margin.
    complaint_margin: float = 0.5
    # A resolution the head reads on the customer's side settles the open issues at recall time, so a
    # wrong one hides a problem: the margin it needs (None: `min_margin`, like any other type).
    resolution_margin: float | None = None


def rules_decided(tags: Sequence[SegmentTags], kind: str, blend: TypeBlend = TypeBlend()) -> bool:
    """Whether a segment of this unit holds `kind` on a decisive cue of its own words.

    >>> from state.normalise.segments import SegmentTags
    >>> seg = lambda kind, cues: SegmentTags((0,) * 6, "neutral", 0, 0.5, 0, 0.5, kind=kind, cues=cues)
    >>> rules_decided([seg("complaint", ("complaint_damage",))], "complaint")
    True
    >>> rules_decided([seg("question", ("wh_question",))], "question")
    False
    """
    for t in tags:
        if t.kind != kind:
            continue
        if kind == "smalltalk" and blend.rules_smalltalk:
            return True
        if any(c in DECISIVE_CUES or c.startswith(COMPLAINT_FAMILY + "_") for c in t.cues):
            return True
    return False


def blend_kind(
    rule_kind: str,
    decided: bool,
    probs: Sequence[float],
    classes: Sequence[str],
    blend: TypeBlend,
    role: str | None = None,
) -> str:
    """The unit's type: the rules' where they decided, else the head's when sure enough. For an
    agent the head's best type is taken among the types an agent can hold (`AGENT_NEVER`).

    >>> blend_kind("statement", False, [0.9, 0.1], ["complaint", "statement"], TypeBlend())
    'complaint'
    >>> blend_kind("statement", False, [0.6, 0.4], ["complaint", "statement"], TypeBlend())
    'statement'
    >>> blend_kind("refusal", True, [0.7, 0.3], ["complaint", "refusal"], TypeBlend())
    'refusal'
    >>> blend_kind("statement", False, [0.9, 0.1], ["complaint", "statement"], TypeBlend(), "agent")
    'statement'
    """
    if decided:
        return rule_kind
    allowed = [
        i
        for i, c in enumerate(classes)
        if c in KIND_RANK and c not in HEAD_NEVER and not (role == "agent" and c in AGENT_NEVER)
    ]
    if not allowed:
        return rule_kind
    best = max(allowed, key=lambda i: float(probs[i]))
    rule_p = float(probs[list(classes).index(rule_kind)]) if rule_kind in classes else 0.0
    if role != "agent" and classes[best] in _COMPLAINTS and rule_kind not in _COMPLAINTS:
        reported = sum(float(probs[i]) for i, c in enumerate(classes) if c in _COMPLAINTS)
        return classes[best] if reported - rule_p >= blend.complaint_margin else rule_kind
    margin = blend.min_margin
    if classes[best] == "resolution_confirmation" and blend.resolution_margin is not None:
        margin = blend.resolution_margin
    if float(probs[best]) - rule_p < margin:
        return rule_kind
    return classes[best]


def type_units(turn: Turn, head: TypeReader | None, blend: TypeBlend = TypeBlend()) -> Turn:
    """Fill `turn.unit_kinds`: each unit's type from the rules and the head. No head, or an
    untagged turn: unchanged (the segments' types decide at assembly)."""
    spans = unit_spans(turn)
    if head is None or not turn.tags or not spans:
        return turn
    texts = head_texts(turn)
    role = turn.event.speaker_role
    probs = head.predict(texts, [role] * len(texts))
    kinds = []
    tags = list(turn.tags)
    for i, span in enumerate(spans):
        unit_tags = turn.tags[span.first : span.last + 1]
        rule = unit_kind([t.kind for t in unit_tags])
        kind = blend_kind(rule, rules_decided(unit_tags, rule, blend), probs[i], head.classes, blend, role)
        kinds.append(kind)
        if kind != rule:
            for j in range(span.first, span.last + 1):
                if HEAD_CUE not in tags[j].cues:
                    tags[j] = replace(tags[j], cues=(*tags[j].cues, HEAD_CUE))
    return replace(turn, unit_kinds=tuple(kinds), tags=tuple(tags))
