"""Antecedents no finder registered, found again in the session's last sentences, and the other one
of a pair.

`found_again` reads the recent sentences (the resolver keeps the last 12, `CorefState.recent`): for
a pointer and a noun the chosen mention does not hold (这张账单 → 电费账单), the noun phrase ending in
that noun in a sentence said since the chosen one was named (`state.coref.heads.head_phrase`); for
an ordinal with nothing listed (第二张), the item of the last enumeration said
(`state.coref.heads.enumeration`). What it finds is bound to the mention said there when one is, or
made a mention of its own. `other_of_pair` answers "the other one" (the other card, 另一单): of the
last pair said, by ordinal or found again, the one spoken of less recently.

Pure functions over the window's mentions (`state.coref.window.Mention`) and sentence texts.
"""

from __future__ import annotations

import re
from dataclasses import replace

from state.coref.anaphora import BUSINESS, RECORD, Anaphor
from state.coref.heads import enumeration, head_phrase
from state.coref.lexicon import CorefLexicon
from state.coref.names import overlaps
from state.coref.ordinals import by_ordinal
from state.coref.window import Mention

_APPOSED = re.compile(r"\s*[,，]\s*|：|:\s*|\s*\(")  # my VPN client, GlobalProtect: the name after it


def found_again(
    anaphor: Anaphor,
    head: str | None,
    chosen: Mention | None,
    recent: list[tuple[str, str]],
    window: list[Mention],
    lex: CorefLexicon,
) -> Mention | None:
    """An antecedent no finder registered: for a pointer and a noun that the chosen mention does not
    hold (这张账单 → 电费账单), the phrase ending in that noun in a sentence said since the chosen one
    was named; for an ordinal with nothing listed (第二张), the item of the last enumeration."""

    def said_at(index: int, span: tuple[int, int], phrase: str, types: tuple[str, ...]) -> Mention:
        turn, sentence = recent[index]
        named = [
            m
            for m in window
            if m.sentence == sentence
            and (overlaps(m.span, [span]) or _APPOSED.fullmatch(sentence[span[1] : max(span[1], m.span[0])]))
            and m.span[0] >= span[0]
        ] or [m for m in window if m.sentence == sentence and overlaps(m.span, [span])]
        return named[0] if named else Mention(phrase, phrase, types, turn, sentence, span, (), 0)

    def since(mention: Mention | None) -> int:
        if mention is None:
            return 0
        return max((i for i, (turn, _) in enumerate(recent) if turn == mention.turn_id), default=len(recent))

    n = next((lex.ordinals[d] for d in anaphor.descriptors if d in lex.ordinals), None)
    if n is not None:  # an enumeration said since the last turn that named two or more entities
        listed = by_ordinal(anaphor, window, lex)
        for index in range(len(recent) - 1, since(listed) - 1, -1):
            items = enumeration(recent[index][1])
            if listed is not None and anaphor.type is not None and recent[index][1] == listed.sentence:
                group = [m.entity for m in window if m.sentence == listed.sentence]
                if sum(any(g in item or item in g for g in group) for item in items) < 2:
                    continue  # 后面那位 after 邓可欣…，马骁主要带增肌和康复训练: the people listed, not the skills
            if len(items) >= 2 and n <= len(items):
                item = items[n - 1] if n > 0 else items[-1]
                at = recent[index][1].find(item)
                return said_at(index, (at, at + len(item)), item, ())
        return None
    if head is None or anaphor.kind != "anaphor":
        return None
    if chosen is not None and (
        head in chosen.entity.lower()
        or head in chosen.kinds
        or (anaphor.type is not None and anaphor.type in chosen.types)
    ):
        return None  # the chosen one holds the noun, or is of the type the noun names (这个快递: the parcel)
    for index in range(len(recent) - 1, since(chosen) - 1, -1):
        found = head_phrase(recent[index][1], head)
        if found is not None:
            types = (anaphor.type,) if anaphor.type not in (None, BUSINESS, RECORD) else ()
            return said_at(index, found[0], found[1], types)
    return None


def other_of_pair(
    anaphor: Anaphor, candidates: list[Mention], recent: list[tuple[str, str]], lex: CorefLexicon
) -> Mention | None:
    """The other one of the last pair said (two cases, two orders, 两单): the one of the two spoken of
    less recently."""
    pair = []
    for n in (1, 2):
        ordinal = replace(anaphor, descriptors=(f"#{n}",))
        found = by_ordinal(ordinal, candidates, lex) or found_again(ordinal, None, None, recent, candidates, lex)
        if found is not None:
            pair.append(found)
    if len(pair) < 2 or pair[0].entity == pair[1].entity:
        return None

    def last_said(mention: Mention) -> int:
        return max((m.seq for m in candidates if m.entity == mention.entity), default=mention.seq)

    return min(pair, key=last_said)
