"""The unit type of a clause segment (smalltalk, complaint, request, commitment, status update …)
and the recall topic it is about, from the segment's intent label, role, stress and the unit cues
of the lexicon."""

from __future__ import annotations

from state.tagging.lexicon import TagLexicon
from state.tagging.rules import cue_langs

_KIND_OF_LABEL = {
    "request": "action_request",
    "commitment": "commitment",
    "question": "question",
    "clarify": "clarification",
    "refuse": "refusal",
}


def _cue(lex: TagLexicon, kind: str, text: str) -> bool:
    by_lang = lex.unit_cues.get(kind, {})
    return any(p.search(text) for lang, p in by_lang.items() if lang in cue_langs(text))


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
