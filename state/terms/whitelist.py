"""Term whitelist and authority lexicon (docs/design.md#terms): per-sentence notes for the entropy stage.

Aho-Corasick (pyahocorasick) over the term files in `state/terms/resources/terms/` (technical and
customer-service terms, Chinese and English) and over `state/terms/resources/authority.txt`, both
hot-reloaded. Per sentence of a turn:

* the whitelisted terms it holds;
* the short-sentence shortcut: a sentence shorter than `short_sentence_chars` (20) holding a
  term is domain common ground, not a surprise — `fixed_entropy` 0.1, the entropy stage skips
  computing it;
* authority words (老板, 务必, deadline, must …): `priority_flag`, an entropy floor of 0.5 and
  `no_merge` — the unit is stored atomically, so the authority clause is never merged away.

Where a short term sentence is also an authority sentence the floor wins (fixed 0.5). Pure
functions over a loaded `TermLexicon`; no state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from schemas.errors import LexiconError
from state.core.datafiles import text_loader
from state.core.hotfile import HotFile
from state.core.language import Sentence
from state.core.word_index import WordIndex

RESOURCES = Path(__file__).resolve().parent / "resources"
DEFAULT_TERM_FILES = tuple(sorted((RESOURCES / "terms").glob("*.txt")))
DEFAULT_AUTHORITY_FILE = RESOURCES / "authority.txt"


@dataclass(frozen=True, slots=True)
class TermsConfig:
    short_sentence_chars: int = 20
    shortcut_entropy: float = 0.1
    authority_entropy_floor: float = 0.5


@dataclass(frozen=True, slots=True)
class SentenceNote:
    """What the term and authority filters say about one sentence of a turn (same order as `Turn.sentences`).

    The entropy stage reads it: `fixed_entropy` set → skip computing, use it; else compute and
    raise to `entropy_floor`; `no_merge` → never merge this sentence into a neighbour.
    """

    terms: tuple[str, ...] = ()
    authority: tuple[str, ...] = ()
    fixed_entropy: float | None = None
    entropy_floor: float = 0.0
    no_merge: bool = False

    @property
    def priority_flag(self) -> bool:
        return bool(self.authority)


@dataclass(frozen=True)
class TermLexicon:
    terms: WordIndex
    authority: WordIndex

    def __len__(self) -> int:
        return len(self.terms)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def parse_term_lexicon(texts: list[str]) -> TermLexicon:
    """[term file …, authority file] → `TermLexicon` (the last text is the authority lexicon)."""
    if not texts:
        raise LexiconError("no term files given")
    terms: dict[str, str] = {}
    for text in texts[:-1]:
        for term in _lines(text):
            terms.setdefault(term, term)
    authority = {word: word for word in _lines(texts[-1])}
    if not terms:
        raise LexiconError("the term whitelist is empty")
    return TermLexicon(WordIndex(terms), WordIndex(authority))


def load_term_lexicon(
    term_files: Sequence[Path | str] = DEFAULT_TERM_FILES,
    authority_file: Path | str = DEFAULT_AUTHORITY_FILE,
    *,
    check_every_s: float = 1.0,
) -> HotFile[TermLexicon]:
    """A hot-reloading handle on the term whitelist and the authority lexicon."""
    load = text_loader(parse_term_lexicon, error=LexiconError)
    return HotFile([*term_files, authority_file], load, check_every_s=check_every_s)


def match_terms(text: str, lexicon: TermLexicon) -> tuple[str, ...]:
    """Whitelisted terms in `text` (as written in the list, first occurrence order, no repeats).

    >>> lex = load_term_lexicon().get()
    >>> match_terms("TCP三次握手超时了，查下慢查询和错误码", lex)
    ('TCP', '三次握手', '超时', '慢查询', '错误码')
    """
    return tuple(dict.fromkeys(hit.value for hit in lexicon.terms.find(text)))


def note_sentence(text: str, lexicon: TermLexicon, config: TermsConfig) -> SentenceNote:
    """The term and authority note for one sentence.

    >>> lex = load_term_lexicon().get()
    >>> note_sentence("TCP握手超时。", lex, TermsConfig()).fixed_entropy
    0.1
    >>> n = note_sentence("请务必在5月20日前完成，这是老板亲自交代的", lex, TermsConfig())
    >>> n.priority_flag, n.entropy_floor, n.no_merge
    (True, 0.5, True)
    """
    terms = match_terms(text, lexicon)
    authority = tuple(dict.fromkeys(hit.value for hit in lexicon.authority.find(text)))
    fixed = config.shortcut_entropy if terms and len(text) < config.short_sentence_chars else None
    floor = config.authority_entropy_floor if authority else 0.0
    if fixed is not None:
        fixed = max(fixed, floor)
    return SentenceNote(terms, authority, fixed, floor, bool(authority))


def note_sentences(
    sentences: Sequence[Sentence], lexicon: TermLexicon, config: TermsConfig
) -> tuple[SentenceNote, ...]:
    """One note per sentence, in order."""
    return tuple(note_sentence(s.text, lexicon, config) for s in sentences)
