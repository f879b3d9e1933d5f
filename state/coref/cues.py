"""Context cues: a word said with a reference binds it to the entity that word was said beside.

Customers tell apart what they listed by a word that was said next to it: "a home policy HO-5528810
and an auto policy AU-3390127 … the home one", "UA 1492 got cancelled … the cancelled one",
"SF1122334455和中通的78812345690 … 中通那个", "tracking 1Z84X02Y0397720145 … that tracking number".
No dictionary lists these words; they are read from the reference itself (the words between the
determiner and `one` or the head noun, "the X Y" for X; the word said right before 那个/这笔 in
Chinese) and looked up around each candidate in the sentence it was named in, never across a comma,
a conjunction or a clause end.
A cue that names the kind of a candidate (the wiki one, for Confluence: its kinds, see
`state.coref.categories`) binds it too, but counts farther than any cue said beside a name.
A head noun alone is used so only when nothing else was found. The candidate with the cue nearest
to it wins (a cue before the name, as a modifier, counts nearer than one after it, as a predicate);
a tie goes to the most recent.

Pure functions over sentence texts and the window's mentions; the Chinese tagger caches per text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, TypeVar

from state.coref.taggers import zh_tokens

_CJK = re.compile(r"[\u4e00-\u9fff]")
_EN_ONE = re.compile(r"\b(?:the|that|this)\s+((?:[a-z][a-z-]{2,}\s+){1,2})ones?\b", re.IGNORECASE)
_ZH_POINTER = re.compile(r"(?:这|那)(?:个|单|笔|件|台|张|份|条|款|家|位|只|辆|场|套|本)")
_EN_NOT_CUES = frozenset(
    {"one", "ones", "other", "first", "second", "third", "last", "same", "whole", "next", "new", "old", "one's"}
    | {"is", "was", "are", "were", "has", "had", "does", "did", "will", "can", "and", "but", "for", "not", "way"}
    | {"time", "day", "week", "month", "year", "morning", "afternoon", "evening", "night", "weekend", "thing"}
    | {"same", "rest", "end", "problem", "issue", "question", "phone", "website", "app", "system", "team"}
)  # words that tell nothing apart, or say everything
_ZH_CUE_TAGS = ("n", "nr", "nz", "nt", "ns", "nrt", "eng", "j", "vn")
_BEFORE_GAP = 12  # characters between a cue and the name it is said before (a home policy HO-…)
_AFTER_GAP = 24  # … and between a name and a cue said after it, of the name that opens the clause
_AFTER_COST = 6  # a cue after the name (UA 1492 got cancelled) counts this much farther
_KNOWN_KIND = _AFTER_GAP + _AFTER_COST + 1  # a cue the name's kind holds: farther than any said beside a name
_BREAK = re.compile(r"[。；;！？!?,，、]|\.\s|\band\b|\bor\b|和|及|或")  # no cue across items or clauses
_ZH_FUNCTION = frozenset(
    "一下是的了在我你他她它们这那就还也都吧吗呢啊呀哦嗯和跟与或及对把被给让从到向说要想有没不很再又才刚"
)  # no part of a cue
_APPOSED_LABEL = re.compile(r"\s+[a-z]+,\s+")
_EN_THE_TWO = re.compile(r"\bthe\s+([a-z][a-z-]{2,})\s+([a-z]{3,})\b", re.IGNORECASE)


class _Said(Protocol):
    @property
    def entity(self) -> str: ...
    @property
    def types(self) -> tuple[str, ...]: ...
    @property
    def sentence(self) -> str: ...
    @property
    def span(self) -> tuple[int, int]: ...
    @property
    def kinds(self) -> tuple[str, ...]: ...


def one_references(text: str, taken: list[tuple[int, int]]) -> list[tuple[tuple[int, int], tuple[str, ...], bool]]:
    """English "the X one" references not taken by another finder, and "the X Y" phrases whose X may
    tell a listed entity apart (the auto policy): (span, cue words, whether it refers only when a
    cue binds it)."""
    out = []
    for m in _EN_ONE.finditer(text):
        cues = tuple(w.lower() for w in m.group(1).split() if w.lower() not in _EN_NOT_CUES)
        if cues and not any(m.start() < b and a < m.end() for a, b in taken):
            out.append((m.span(), cues, False))
    for m in _EN_THE_TWO.finditer(text):
        word = m.group(1).lower()
        noun = m.group(2).lower()
        free = not any(m.start() < b and a < m.end() for a, b in taken + [o[0] for o in out])
        if word not in _EN_NOT_CUES and noun not in _EN_NOT_CUES and noun != "one" and free:
            out.append((m.span(), (word,), True))
    return out


def modifier_cues(text: str, span: tuple[int, int], head: str | None) -> tuple[str, ...]:
    """The words that tell a reference's antecedent apart: in English the words between its determiner
    and its head (that tracking number → tracking); in Chinese the word said right before its pointer
    (中通那个 → 中通, 键盘那单 → 键盘)."""
    said = text[span[0] : span[1]]
    if not _CJK.search(said):
        words = [w.lower() for w in said.split()[1:]]
        words = words[:-1] if len(words) >= 2 else words  # the auto policy: the head tells nothing apart
        return tuple(w for w in words if w != (head or "").lower() and w not in _EN_NOT_CUES and w.isalpha())
    if not _ZH_POINTER.match(text, span[0]):
        return ()
    before = [t for t in zh_tokens(text) if t.end == span[0]]
    if before and before[0].tag.startswith(_ZH_CUE_TAGS) and len(before[0].text) >= 2:
        return (before[0].text,)
    # 滞留的那个; 增肌的那个教练, 装热水器的那个师傅: a clause before 的 tells the one meant apart, head or not
    return said_before(text, span[0]) if head is None or text[span[0] - 1 : span[0]] == "的" else ()


def said_before(text: str, at: int) -> tuple[str, ...]:
    """The words a Chinese pointer at `at` is said after, whatever the tagger split (韵|达那个, 英|短那只,
    滞留的那个): the ends, two to four characters long, of the run of content characters before it,
    longest first; a cue must then be found beside a candidate to count.

    >>> said_before("英短那只上个月刚打完", 2)
    ('英短',)
    >>> said_before("滞留的那个里面是药", 3)
    ('滞留',)
    """
    end = at - 1 if text[at - 1 : at] == "的" else at
    start = end
    while start > 0 and _CJK.match(text[start - 1]) and text[start - 1] not in _ZH_FUNCTION and end - start < 4:
        start -= 1
    return tuple(text[k:end] for k in range(start, end - 1))


def cued_pointer(text: str, at: int) -> bool:
    """Whether a content word ends right before the pointer at `at` (韵达那个我没收到: a reference, not
    the filler 那个我)."""
    return bool(said_before(text, at))


def _distance(sentence: str, span: tuple[int, int], cue: str, opens: bool) -> int | None:
    """How near `cue` is said to the name at `span` (None: not in its clause, or too far); a cue after
    the name counts only for the name that `opens` its clause (My flight UA 882 to Tokyo was cancelled)."""
    lowered = sentence.lower()
    best: int | None = None
    pattern = re.escape(cue) if _CJK.search(cue) else rf"\b{re.escape(cue)}\b"
    for m in re.finditer(pattern, lowered):
        gap: int | None
        if m.start() < span[1] and span[0] < m.end():
            gap = 0  # said inside the name (the Lodge cast iron skillet)
        elif m.end() <= span[0]:
            between = sentence[m.end() : span[0]]
            apposed = _APPOSED_LABEL.fullmatch(between) is not None  # a Sunday class, Power Cycle 45
            near = len(between) <= _BEFORE_GAP and (apposed or not _BREAK.search(between))
            gap = len(between) if near else None
        else:
            between = sentence[span[1] : m.start()]
            near = opens and len(between) <= _AFTER_GAP and not _BREAK.search(between)
            gap = len(between) + _AFTER_COST if near else None
        if gap is not None and (best is None or gap < best):
            best = gap
    return best


M = TypeVar("M", bound=_Said)


def bound_by_cue(cues: Sequence[str], candidates: list[M], *, people: bool = False) -> M | None:
    """The candidate a cue was said nearest to (see the module doc); None when no cue is said by any."""
    best: tuple[int, int] | None = None
    chosen: M | None = None
    for order, mention in enumerate(candidates):
        if ("person" in mention.types) != people:
            continue
        opens = not any(
            other.sentence == mention.sentence
            and other.span[1] <= mention.span[0]
            and mention.sentence[other.span[1] : mention.span[0]].strip()  # United flight UA 1492: one name
            and not _BREAK.search(mention.sentence[other.span[1] : mention.span[0]])
            for other in candidates
        )
        gaps = [g for cue in cues if (g := _distance(mention.sentence, mention.span, cue, opens)) is not None]
        if not gaps and any(cue.lower() in mention.kinds for cue in cues):
            gaps = [_KNOWN_KIND]  # the wiki one for Confluence: of the kind the cue names, though never said with it
        if gaps and (best is None or (min(gaps), -order) < best):
            best, chosen = (min(gaps), -order), mention
    return chosen
