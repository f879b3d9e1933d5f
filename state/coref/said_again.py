"""Entities of the window said again by part of what they were named with.

Before anaphors are looked for, a sentence is read for the window's entities said again:
`shortened` and `short_forms` find a name said again whole or without its type suffix or branch
(八大处 for 八大处公园, 海底捞 for 海底捞火锅(牡丹园店), 海洋馆 for 北京海洋馆), bound to that entity as a
name; `tail_references` a pointer and the end of a name (那个牙刷 for 飞利浦电动牙刷, the pot for Instant
Pot Duo, the key for Yubikey 5C), or that end opening a clause; `bridged` a noun naming the kind a name
was introduced with (炖盅 for 炖盅是小熊…, that booking for booking code KQ7T2M; `state.coref.leads`).
The last two are references, each bound directly to its entity. Places are left to the chooser:
their names end in their type, so 这家酒店 is any hotel said last.

Pure functions over sentence texts and the window's mentions (`state.coref.window.Mention`).
"""

from __future__ import annotations

import re

from state.coref.anaphora import Anaphor
from state.coref.leads import bridges
from state.coref.lexicon import CorefLexicon
from state.coref.names import Named, core_name, demonstrated, overlaps
from state.coref.window import Mention

_ZH_POINTER = re.compile(r"(?:这|那|该)(?:个|台|部|件|款|张|双|副|只|条|份|套|把)?")
_CLAUSE_START = re.compile(r"(?:^|(?<=[，。；！？,;!?]))")
_WORD_END = re.compile(
    r"$|[^\u4e00-\u9fff]|[是的了吗呢还也都就在有不很被把给让会能要没怎为才又再已]"
)  # 这个锅|是: 锅 is a word
# the key (for Yubikey) ending its phrase: a word, then punctuation, the end, or a word that is no noun
_WORD_END_EN = re.compile(
    r"[a-z]{3,}(?=\s*$|\s*[^\sA-Za-z]|\s+(?:in|on|at|to|for|with|from|by|is|was|are|were|has|had|does|did|"
    r"still|again|and|or|but|that|yet|now|anymore|itself|work|works|worked|stopped|keeps|won't|doesn't|isn't)\b)"
)
_NAME_WORD = re.compile(r"[^\W\d_]+|(?=\S*[A-Za-z])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+")  # pot, CR-V
_EN_POINTER = re.compile(r"\b(?:the|this|that|these|those)\s+", re.IGNORECASE)


def shortened(named: Named, candidates: list[Mention]) -> Mention | None:
    """A shortened name of an entity already in the window (海洋馆 for 北京海洋馆)."""
    if named.dictionary or len(named.surface) < 2 or any(m.entity == named.entity for m in candidates):
        return None  # itself an entity of the window (香山 beside 香山饭店中餐厅)
    for mention in reversed(candidates):
        if mention.entity != named.entity and named.surface in mention.entity:
            return mention
    return None


def short_forms(text: str, candidates: list[Mention], named: list[Named], lex: CorefLexicon) -> list[Named]:
    """Entities of the window said again, by their name (泰山要爬多久, where no rule finds a name) or by
    the name without its type suffix or branch (八大处 for 八大处公园, 海底捞 for 海底捞火锅(牡丹园店)):
    progressive binding of what is said to the entity said before."""
    taken = [n.span for n in named]
    found: list[Named] = []
    for mention in reversed(candidates):
        for form in (mention.entity, _stem(mention.entity, lex)):
            if form is None or len(form) < 2 or any(form in n.surface for n in named + found):
                continue
            at = text.find(form)
            span = (at, at + len(form))
            if at < 0 or overlaps(span, taken) or demonstrated(text, at):
                continue  # 这段长城: a demonstrative before it makes it a reference, resolved as one
            found.append(Named(form, mention.entity, mention.types, span, "known", 0.7))
            taken.append(span)
            break
    return found


def tail_references(
    text: str, candidates: list[Mention], taken: list[tuple[int, int]], lex: CorefLexicon
) -> dict[tuple[int, int], tuple[Anaphor, Mention]]:
    """A pointer and the end of a name said before (那个牙刷 for 飞利浦电动牙刷, the pot for Instant
    Pot Duo), or that end alone opening a clause (运动裤的尺码偏小 for 李宁运动裤): a reference to that
    entity. Not for places, whose names end in their type (这家酒店 is any hotel said last, not the
    one whose name ends in 酒店)."""
    found: dict[tuple[int, int], tuple[Anaphor, Mention]] = {}
    things = [m for m in reversed(candidates) if not set(m.types) & (lex.place_types | {"person"})]
    pointers = list(_ZH_POINTER.finditer(text)) + list(_EN_POINTER.finditer(text)) + list(_CLAUSE_START.finditer(text))
    for pointer in pointers:
        at = pointer.end()
        bare = pointer.start() == at
        classified = len(pointer.group()) >= 2 and not pointer.group().isascii()  # 这个|锅, 那台|机
        for mention in things:
            if bare and mention.entity.isascii():
                continue
            tail = _tail_at(text, at, mention.entity, classified=classified, pointed=not bare)
            if tail is None:
                continue
            span = (pointer.start(), at + len(tail))
            if not overlaps(span, taken):
                anaphor = Anaphor(text[span[0] : span[1]], span, "anaphor", None, tail, confidence=0.8)
                found[span] = (anaphor, mention)
                taken.append(span)
            break
    return found


def bridged(
    text: str, candidates: list[Mention], taken: list[tuple[int, int]], lex: CorefLexicon
) -> dict[tuple[int, int], tuple[Anaphor, Mention]]:
    """A noun naming the kind a name was introduced with (炖盅 for 炖盅是小熊DBQ-B20N1, 这个编号 for
    受理编号CB…, that booking for booking code KQ7T2M): a reference to that name (`state.coref.leads`).
    Not for places, whose names say their type (这个餐馆 is the restaurant said last), and a number's
    kind (电话是69766388) only after a pointer: 电话 alone asks for a place's phone, it does not name one."""
    latest: dict[str, Mention] = {}
    for m in candidates:
        if m.lead.words:
            latest[m.entity] = m
    if not latest:
        return {}
    led = sorted((m for m in latest.values() if not set(m.types) & lex.place_types), key=lambda m: m.seq)
    found = {}
    for span, index in bridges(text, [m.lead for m in led], taken):
        anaphor = Anaphor(text[span[0] : span[1]], span, "anaphor", None, text[span[0] : span[1]], confidence=0.7)
        found[span] = (anaphor, led[index])
    return found


def _tail_at(text: str, at: int, entity: str, *, classified: bool = False, pointed: bool = False) -> str | None:
    """The longest end of `entity` (two CJK characters or a Latin word at least) that `text` says at `at`;
    after a pointer with a classifier one character will do (这个锅 for 苏泊尔电压力锅). After the/that,
    a capitalised brand (the Dyson for Dyson V15) or the end of a word of the name (the key for
    Yubikey 5C) also refers to it."""
    if entity.isascii():  # a word of the name after the brand: the pot (Instant Pot Duo)
        words = entity.split()
        for n, word in enumerate(words):
            if n == 0 and not (pointed and len(words) > 1 and text[at : at + 1].isupper()):
                continue
            end = at + len(word)
            said = text[at:end]
            whole = not text[end : end + 1].isalnum()
            if len(word) >= 3 and _NAME_WORD.fullmatch(word) and said.lower() == word.lower() and whole:
                return said
        if pointed:
            end_of_word = _WORD_END_EN.match(text, at)
            part = end_of_word.group() if end_of_word else ""
            if part and any(w.lower().endswith(part) and w.lower() != part for w in words):
                return part  # the key: Yubikey
        return None
    for k in range(1, len(entity)):
        tail = entity[k:]
        one = classified and re.fullmatch(r"[\u4e00-\u9fff]", tail) and _WORD_END.match(text, at + 1) is not None
        if (re.fullmatch(r"[\u4e00-\u9fff]{2,}", tail) or one) and text.startswith(tail, at):
            return tail
    return None


def _stem(entity: str, lex: CorefLexicon) -> str | None:
    core = core_name(entity)
    ends = [s for s in lex.type_suffixes if core.endswith(s) and len(s) >= 2 and not s.isascii()]
    if not ends:
        return None
    stem = core[: -max(map(len, ends))]
    return stem if len(stem) >= 3 and stem not in lex.name_stop and re.fullmatch(r"[\u4e00-\u9fff]+", stem) else None
