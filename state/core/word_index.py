"""A word index over a word list (Aho-Corasick): longest non-overlapping matches, ASCII words on word
boundaries. Shared by the coreference lexicon and the term whitelist.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import ahocorasick

_ASCII_WORD = re.compile(r"[A-Za-z0-9]")


@dataclass(frozen=True, slots=True)
class Hit:
    """A word-list match in a text: [start, end) and the payload stored for the word."""

    start: int
    end: int
    word: str
    value: Any


class WordIndex:
    """Aho-Corasick over a word list; longest non-overlapping matches, ASCII words on word boundaries.

    >>> idx = WordIndex({"环境": 1, "测试环境": 2, "api": 3})
    >>> [(h.word, h.value) for h in idx.find("在测试环境调 API，rapid 环境")]
    [('测试环境', 2), ('API', 3), ('环境', 1)]
    """

    def __init__(self, words: dict[str, Any]) -> None:
        self._automaton = ahocorasick.Automaton()
        for word, value in words.items():
            key = word.lower()
            if key:
                self._automaton.add_word(key, (len(key), value))
        self._empty = len(self._automaton) == 0
        if not self._empty:
            self._automaton.make_automaton()

    def __len__(self) -> int:
        return len(self._automaton)

    def words(self) -> list[str]:
        """The (lower-cased) words indexed."""
        return [] if self._empty else list(self._automaton.keys())

    def find(self, text: str) -> list[Hit]:
        if self._empty or not text:
            return []
        lowered = text.lower()
        found: list[Hit] = []
        for end_index, (length, value) in self._automaton.iter(lowered):
            start, end = end_index - length + 1, end_index + 1
            if _ASCII_WORD.match(lowered[start]) and start > 0 and _ASCII_WORD.match(lowered[start - 1]):
                continue
            if _ASCII_WORD.match(lowered[end - 1]) and end < len(lowered) and _ASCII_WORD.match(lowered[end]):
                continue
            found.append(Hit(start, end, text[start:end], value))
        found.sort(key=lambda h: (h.start, -(h.end - h.start)))
        out: list[Hit] = []
        for hit in sorted(found, key=lambda h: (-(h.end - h.start), h.start)):
            if all(hit.end <= o.start or hit.start >= o.end for o in out):
                out.append(hit)
        return sorted(out, key=lambda h: h.start)
