"""Language-mix detection and sentence splitting (docs/design.md#time).

Pure functions: a turn is classified by its share of CJK vs Latin letters; sentences are cut
at Chinese and Latin sentence punctuation and, for ASR turns, at pauses of at least
`pause_split_ms`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

from schemas.events import AsrPause

LangMix = Literal["zh", "en", "mixed", "other"]

# One CJK ideograph: the basic block, extension A and the compatibility ideographs.
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
# Cut after terminal punctuation (keeping it), also after a Chinese comma-run when long.
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;…])\s*|(?<=\.)\s+(?=[A-Z\"'(\u4e00-\u9fff])")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SPACES = re.compile(r"[ \t\u3000]+")


@dataclass(frozen=True, slots=True)
class Sentence:
    text: str
    start: int
    end: int


def language_mix(text: str, *, mixed_threshold: float = 0.2) -> LangMix:
    """Classify a text by its share of CJK vs Latin letters.

    >>> language_mix("明天下午三点开会"), language_mix("next Tuesday"), language_mix("帮我check一下order")
    ('zh', 'en', 'mixed')
    """
    cjk = len(CJK.findall(text))
    latin_words = len(re.findall(r"[A-Za-z]+", text))
    total = cjk + latin_words
    if total == 0:
        return "other"
    share = cjk / total
    if share >= 1 - mixed_threshold:
        return "zh"
    if share <= mixed_threshold:
        return "en" if _LATIN.search(text) else "other"
    return "mixed"


def clean_text(text: str, mix: LangMix) -> str:
    """Drop control characters and collapse spaces; mixed input also loses spaces between CJK chars.

    >>> clean_text("帮 我 check  一下", "mixed")
    '帮我 check 一下'
    """
    text = _CONTROL.sub("", text).replace("\r\n", "\n")
    text = _SPACES.sub(" ", text).strip()
    if mix in ("zh", "mixed"):
        text = re.sub(r"(?<=[\u4e00-\u9fff]) (?=[\u4e00-\u9fff])", "", text)
    return text


def split_sentences(text: str, pauses: tuple[AsrPause, ...] = (), *, pause_split_ms: int = 700) -> tuple[Sentence, ...]:
    """Split on sentence punctuation and on long ASR pauses, keeping character offsets.

    >>> [s.text for s in split_sentences("好的收到。另外权限已开通！Thanks. Bye")]
    ['好的收到。', '另外权限已开通！', 'Thanks.', 'Bye']
    """
    cuts = {m.end() for m in _SENTENCE_END.finditer(text)}
    cuts.update(p.after_char for p in pauses if p.duration_ms >= pause_split_ms and 0 < p.after_char < len(text))
    bounds = sorted({0, len(text), *cuts})
    out: list[Sentence] = []
    for start, end in pairwise(bounds):
        piece = text[start:end]
        stripped = piece.strip()
        if not stripped:
            continue
        lead = len(piece) - len(piece.lstrip())
        out.append(Sentence(stripped, start + lead, start + lead + len(stripped)))
    return tuple(out)
