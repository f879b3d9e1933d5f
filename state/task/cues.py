"""Cue lexicon of the task state machine: continuation, back-reference, small talk, fallback
speech acts, commitment strength and topics (data in `state/task/resources/task_cues.yaml`).

Pure lookups over a parsed `Cues`; the file is hot-reloaded by the caller (`state.core.hotfile`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_ASCII = re.compile(r"^[\x00-\x7f]+$")


@dataclass(frozen=True, slots=True)
class CueSet:
    """A list of cues compiled once: CJK cues as substrings, ASCII cues on word boundaries."""

    cues: tuple[str, ...]
    pattern: re.Pattern[str] | None

    @classmethod
    def of(cls, cues: Any) -> CueSet:
        items = tuple(sorted({str(c).lower() for c in (cues or ()) if str(c).strip()}, key=len, reverse=True))
        if not items:
            return cls((), None)
        parts = [
            rf"(?<![a-z']){re.escape(c)}(?![a-z])" if _ASCII.match(c) and c[0].isalpha() else re.escape(c)
            for c in items
        ]
        return cls(items, re.compile("|".join(parts)))

    def find(self, text: str) -> str | None:
        """The first cue found in `text` (lower-cased), or None.

        >>> CueSet.of(["顺便", "also"]).find("顺便帮我取消")
        '顺便'
        >>> CueSet.of(["also"]).find("Also, cancel it") , CueSet.of(["also"]).find("falsely")
        ('also', None)
        """
        if self.pattern is None:
            return None
        m = self.pattern.search(text.lower())
        return m.group(0) if m else None

    def covers(self, text: str) -> bool:
        """Whether the text is nothing but these cues and punctuation ("好的谢谢！")."""
        if self.pattern is None:
            return False
        rest = self.pattern.sub("", text.lower())
        return not re.sub(r"[\W_]+", "", rest)


@dataclass(frozen=True, slots=True)
class SpeechAct:
    label: str
    confidence: float
    cues: CueSet


@dataclass(frozen=True)
class Cues:
    continuation: CueSet
    back_reference: CueSet
    smalltalk: CueSet
    switch: CueSet
    stay: CueSet
    speech_acts: tuple[SpeechAct, ...]
    commitment_strength: tuple[tuple[float, CueSet], ...]
    commitment_topics: dict[str, CueSet]
    clarification_question: dict[str, str]

    def speech_act(self, text: str) -> tuple[str, float]:
        """Fallback intent label and confidence from cues ("neutral", 0.5 when nothing matches)."""
        for act in self.speech_acts:
            if act.cues.find(text):
                return act.label, act.confidence
        return "neutral", 0.5

    def strength(self, text: str) -> float:
        return max((s for s, cues in self.commitment_strength if cues.find(text)), default=0.0)

    def topic(self, text: str) -> str | None:
        """The commitment topic a text talks about (first listed topic whose cue is present)."""
        for topic, cues in self.commitment_topics.items():
            if cues.find(text):
                return topic
        return None

    def question(self, lang: str, current: str, candidate: str) -> str:
        template = self.clarification_question.get(lang) or self.clarification_question.get(
            "zh", "{current} / {candidate}?"
        )
        return template.format(current=current, candidate=candidate)


def parse_cues(raw: Any) -> Cues:
    """Parse the cue document (missing sections are empty)."""
    if not isinstance(raw, dict):
        raise ValueError("task cues: the document must be a mapping")
    acts = tuple(
        SpeechAct(str(a["label"]), float(a["confidence"]), CueSet.of(a.get("cues")))
        for a in raw.get("speech_acts") or ()
    )
    strength = tuple((float(s["strength"]), CueSet.of(s.get("cues"))) for s in raw.get("commitment_strength") or ())
    topics = {str(k): CueSet.of(v) for k, v in (raw.get("commitment_topics") or {}).items()}
    return Cues(
        continuation=CueSet.of(raw.get("continuation")),
        back_reference=CueSet.of(raw.get("back_reference")),
        smalltalk=CueSet.of(raw.get("smalltalk")),
        switch=CueSet.of(raw.get("switch")),
        stay=CueSet.of(raw.get("stay")),
        speech_acts=acts,
        commitment_strength=strength,
        commitment_topics=topics,
        clarification_question={str(k): str(v) for k, v in (raw.get("clarification_question") or {}).items()},
    )
