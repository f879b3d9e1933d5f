"""Clause-level segments: the units of tagging and of the entropy cut (docs/design.md#tagging, #entropy).

`state.core.language.split_sentences` cuts at sentence punctuation and ASR pauses; a long Chinese
sentence is often several speech acts joined by commas ("好的收到，关于接口文档麻烦补充下错误码
说明，另外测试账号权限我们已开通，谢谢"). This module cuts such sentences further, at ，；, when the
sentence has at least `clause_min_chars` characters, and at English ";" or ", but/also/however…".
Offsets stay relative to the turn's text, so a segment always maps back to the source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

from state.core.language import Sentence

_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[\w\u3400-\u9fff]")
_ZH_CUT = re.compile(r"(?<=[，,；;])")
_EN_CUT = re.compile(
    r"(?<=;)\s+|(?<=,)\s+(?=(?:but|however|also|and also|plus|by the way|btw|anyway|so|then|otherwise|although)\b)",
    re.IGNORECASE,
)


UNIT_TRIM = " ，,、；;"


def unit_text(text: str) -> str:
    """A segment's text as a memory unit stores it (and as every embedder sees it): no trailing comma.

    >>> unit_text("关于接口文档麻烦补充下错误码说明，")
    '关于接口文档麻烦补充下错误码说明'
    """
    return text.strip(UNIT_TRIM) or text


@dataclass(frozen=True, slots=True)
class Segment:
    """A clause of a turn: its text, offsets in the turn text, and the sentence it came from."""

    text: str
    start: int
    end: int
    sentence: int


def _pieces(text: str, cut: re.Pattern[str], min_piece: int) -> list[tuple[int, int]]:
    bounds = sorted({0, len(text), *(m.end() for m in cut.finditer(text))})
    spans = [(a, b) for a, b in pairwise(bounds) if text[a:b].strip()]
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        # A piece too short to carry a speech act ("嗯，") joins the next one, or the last.
        if merged and len(text[merged[-1][0] : merged[-1][1]].strip(" ，,；;")) < min_piece:
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    if len(merged) > 1 and len(text[merged[-1][0] : merged[-1][1]].strip(" ，,；;。.!！?？")) < min_piece:
        merged[-2:] = [(merged[-2][0], merged[-1][1])]
    return merged


def segment_sentences(
    sentences: tuple[Sentence, ...],
    *,
    clause_min_chars: int = 20,
    en_clause_min_chars: int = 60,
    source: str | None = None,
) -> tuple[Segment, ...]:
    """Cut long sentences into clauses; short ones stay whole. `source` is the text the sentences
    index into (exact segment text where a segment spans a gap).

    >>> from state.core.language import split_sentences
    >>> text = "好的收到，关于接口文档麻烦补充下错误码说明，另外测试账号权限我们已开通，谢谢"
    >>> [s.text for s in segment_sentences(split_sentences(text))]
    ['好的收到，', '关于接口文档麻烦补充下错误码说明，', '另外测试账号权限我们已开通，', '谢谢']
    >>> [s.text for s in segment_sentences(split_sentences("这个价格我们尽力争取"))]
    ['这个价格我们尽力争取']
    """
    out: list[Segment] = []
    for index, sentence in enumerate(sentences):
        text = sentence.text
        if out and not _WORD.search(text):
            # Punctuation alone ("……" after a pause) belongs to the segment before it.
            last = out[-1]
            gap = source[last.end : sentence.start] if source is not None else " " * (sentence.start - last.end)
            out[-1] = Segment(last.text + gap + text, last.start, sentence.end, last.sentence)
            continue
        if _CJK.search(text):
            spans = _pieces(text, _ZH_CUT, 2) if len(text) >= clause_min_chars else [(0, len(text))]
        else:
            spans = _pieces(text, _EN_CUT, 8) if len(text) >= en_clause_min_chars else [(0, len(text))]
        for a, b in spans:
            piece = text[a:b]
            lead = len(piece) - len(piece.lstrip())
            stripped = piece.strip()
            start = sentence.start + a + lead
            out.append(Segment(stripped, start, start + len(stripped), index))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class SegmentTags:
    """What the tagger says about one segment; `cues` names the rules that fired (explainability)."""

    intent: tuple[float, ...]
    label: str
    stress: float
    certainty: float
    urgency: float
    cooperation: float
    confidence: float = 0.75
    commitment_strength: float = 0.0
    pressure: float = 0.0
    hedged: bool = False
    apology: bool = False  # an agent's apology: the inversion rule applies (here and to a unit's head stress)
    apology_inverted: bool = False
    kind: str = "statement"  # the unit type this segment would have alone (MemoryUnit.unit_type)
    topic: str | None = None
    cues: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class UnitSpan:
    """One memory unit of the cut: consecutive segment indexes, atomic or a merged low-entropy run."""

    first: int
    last: int
    atomic: bool
    priority: bool = False
