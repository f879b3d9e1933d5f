"""Ordinals and pairs: which listed entity 第二个订单, the first one, 后面那位 or 前一个单子 picks.

An ordinal (a rank word among the reference's descriptors, `lex.ordinals`: 1, 2, …, -1 for the
last) picks the n-th entity of the type asked for, in the order of the last turn that named two or
more of them (我有两个订单，A和B → 第二个 is B). A record said as the second of its kind (I've opened
a second ticket, INC…; another package, 77…; 新单号…) pairs with the last record of that kind said
before it, and when said after the last list, that pair is what the ordinal counts: the first one is
the earlier record, the second (or last) the one just said.

Pure functions over the window's mentions (`state.coref.window.Mention`).
"""

from __future__ import annotations

import re

from state.coref.anaphora import Anaphor
from state.coref.lexicon import CorefLexicon
from state.coref.window import Mention, compatibility, identifier

_SECOND = re.compile(
    r"\b(?:a|an)\s+(?:second|another)\s+[a-z]+\s*[,:]?\s*$|新的?[\u4e00-\u9fff]{0,2}号[是为:：]?\s*$", re.IGNORECASE
)  # a second ticket, INC…; 新单号INC…


def _second_of_pair(n: int, candidates: list[Mention], lex: CorefLexicon) -> Mention | None:
    """I've opened a second ticket, INC0093342 / another package, 773022914471: a thing said as the
    second of its kind pairs with the last one of that kind said before it; the first one is that
    earlier one, the second (or last) the one just said."""
    for mention in reversed(candidates):
        if not _SECOND.search(mention.sentence[max(0, mention.span[0] - 30) : mention.span[0]]):
            continue
        record = _numbered(mention, lex)
        earlier = [
            m
            for m in candidates
            if m.seq < mention.seq
            and m.entity != mention.entity
            and ((record and _numbered(m, lex)) or bool(set(m.types) & set(mention.types)))
        ]
        if not earlier:
            return None
        return earlier[-1] if n == 1 else mention if n in (2, -1) else None
    return None


def by_ordinal(anaphor: Anaphor, candidates: list[Mention], lex: CorefLexicon) -> Mention | None:
    """第二个订单, the first one: the n-th (or last) entity of the type asked for, in the order of the
    last turn that named two or more of them (我有两个订单，A和B → 第二个 is B), unless a thing said
    since as the second of its kind makes a pair (`_second_of_pair`)."""
    n = next((lex.ordinals[d] for d in anaphor.descriptors if d in lex.ordinals), None)
    if n is None:
        return None
    paired = _second_of_pair(n, candidates, lex)
    if paired is not None:
        group_turns = [t for t in dict.fromkeys(m.turn_id for m in candidates) if _turn_lists(t, candidates)]
        latest_group = max((m.seq for m in candidates if m.turn_id in group_turns[-1:]), default=-1)
        second = max(m.seq for m in candidates if _SECOND.search(m.sentence[max(0, m.span[0] - 30) : m.span[0]]))
        if second > latest_group:
            return paired
    typed = [
        m
        for m in candidates
        if compatibility(anaphor.type, m.types, lex) == 2
        or (anaphor.type is None and (compatibility(None, m.types, lex) or m.types == ("person",)))
    ]  # 头一个 after 周二有专家张抒扬，周四有王欣: people are ranked as any listed thing
    for turn in dict.fromkeys(m.turn_id for m in reversed(typed)):
        said = [m for m in typed if m.turn_id == turn]
        named = list(dict.fromkeys(m.entity for m in said))
        by_type: dict[tuple[str, ...], list[str]] = {}
        for m in said:  # two lamps, orders A and B: "the first one" counts the orders, the kind said twice
            by_type.setdefault(m.types, [])
            if m.entity not in by_type[m.types]:
                by_type[m.types].append(m.entity)
        groups = [g for g in by_type.values() if len(g) >= 2]
        if len(groups) == 1:
            named = groups[0]
        start = min(m.seq for m in said)
        before = {m.entity for m in candidates if m.seq < start and m.turn_id != turn}
        offered = [e for e in named if e not in before]
        if len(offered) >= 2:
            named = offered  # Dr. Marsh is full; Dr. Ortiz … and Dr. Haddad …: the second doctor is Haddad
        if len(named) >= 2 and n <= len(named):
            entity = named[n - 1] if n > 0 else named[-1]
            return next(m for m in reversed(typed) if m.entity == entity)
    return None


def _numbered(mention: Mention, lex: CorefLexicon) -> bool:
    """A record's number (INC0093318, 773022914458): an identifier with a digit in it."""
    return identifier(mention.entity, mention.types, lex) and any(c.isdigit() for c in mention.entity)


def _turn_lists(turn: str, candidates: list[Mention]) -> bool:
    """Whether `turn` named two or more entities."""
    return len({m.entity for m in candidates if m.turn_id == turn}) >= 2
