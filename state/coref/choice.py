"""Choosing a reference's referent among the window's mentions.

In order: a pronoun whose clause speaks of what only one type does (它的聊天记录, it costs per month:
`pronoun_hint`) takes the last mention of that type; they/them a name said with a plural product
word; a weak reference the mention its descriptor was said with, else an ordinal's listed entity
(`state.coref.ordinals`); a pointer and a noun the entity whose name or kind holds the noun (这台电饭煲
→ 美的电饭煲); else the most recent type-compatible salient mention, then any type-compatible one
(an English pronoun keeping the sentence's topic), then fallbacks of lower confidence: another kind
of thing, a shop said as an organisation, an untyped mention, the place just recommended, the
place in focus for 他家. Each choice comes with its confidence.

Pure functions over the window's mentions (`state.coref.window.Mention`).
"""

from __future__ import annotations

from state.coref.anaphora import Anaphor
from state.coref.categories import category_nouns
from state.coref.lexicon import CorefLexicon
from state.coref.mentions import BARE_IDENTIFIER
from state.coref.ordinals import by_ordinal
from state.coref.salience import CLAUSE_BREAK
from state.coref.window import Mention, compatibility, no_referent


def _plural(mention: Mention) -> bool:
    """Named with a plural product word (Sony WH-1000XM5 headphones, the Nike sneakers)."""
    words = [*mention.kinds, mention.entity.split()[-1].lower()] if mention.entity.isascii() else []
    return any(len(w) > 3 and w.endswith("s") and not w.endswith("ss") for w in words)


def _of_kind(head: str, kinds: tuple[str, ...]) -> bool:
    """The head noun is one of the kinds, or a Chinese kind word holds it (扫地机 in 扫地机器人, 炸锅 in 空气炸锅)."""
    return head in kinds or (len(head) >= 2 and not head.isascii() and any(head in k for k in kinds))


def _hinted(anaphor: Anaphor, hint: str | None, candidates: list[Mention]) -> Mention | None:
    """它的聊天记录, it keeps crashing, what does it cost per month: a pronoun whose clause speaks of
    what only one type does binds to the last mention of that type."""
    if hint is None or anaphor.type is not None or anaphor.head is not None or anaphor.kind != "anaphor":
        return None
    return next((m for m in reversed(candidates) if hint in m.types), None)


def _topic(anaphor: Anaphor, latest: Mention, pool: list[Mention], lex: CorefLexicon) -> Mention:
    """A pronoun keeps the topic: when the sentence that named `latest` first referred back to another
    entity (Sure, it is covered under ProSupport; the package had my charger in it), that entity, the
    sentence's subject, is meant rather than the name said after it."""
    if anaphor.head is not None or anaphor.kind != "anaphor" or anaphor.descriptors or latest.topic_in is not None:
        return latest  # a name referred back to since it was said is itself the topic
    if not anaphor.text.isascii():
        return latest  # Chinese agents name what is near the topic after 它 (它周边有…): measured worse there
    for mention in reversed(pool):
        if (
            mention.topic_in == latest.sentence
            and mention.seq < latest.seq
            and mention.entity != latest.entity
            and compatibility(anaphor.type, mention.types, lex) == 2
        ):
            return mention
    return latest


def choose(
    anaphor: Anaphor, candidates: list[Mention], lex: CorefLexicon, hint: str | None = None
) -> tuple[Mention | None, float]:
    """The referent: by descriptor for a weak reference (an ordinal by position); else the most recent
    type-compatible salient mention, then any type-compatible one, then the most recent untyped one.
    A floor, a day or a bare title a finder took for a name is never chosen (`no_referent`)."""
    candidates = [m for m in candidates if not no_referent(m.entity)]
    hinted = _hinted(anaphor, hint, candidates)
    if hinted is not None:
        return hinted, anaphor.confidence * 0.9
    if anaphor.text.lower() in ("they", "them", "their"):  # the headphones, not the laptop
        plural = [m for m in candidates if _plural(m) and compatibility(anaphor.type, m.types, lex) == 2]
        if plural:
            return plural[-1], anaphor.confidence * 0.9
    if anaphor.descriptors:
        bound = [
            m
            for m in candidates
            if (set(anaphor.descriptors) & set(m.descriptors)) - set(lex.ordinals)  # fix Outlook first: no rank
            and compatibility(anaphor.type, m.types, lex)
        ]
        if bound:
            return bound[-1], min(1.0, anaphor.confidence + 0.1)
        nth = by_ordinal(anaphor, candidates, lex)
        if nth is not None:
            return nth, anaphor.confidence
    if anaphor.head and anaphor.type not in lex.place_types:
        # 这台电饭煲 → 美的电饭煲, 这个环境 → 生产环境: an entity whose name holds the head noun said
        head = anaphor.head.lower()
        # 那台扫地机器人 for 机器人X20: a Chinese head whose last word (two characters or more) the name holds
        ends = [head[k:] for k in range(len(head) - 1)] if not head.isascii() else [head]
        # 那个炸锅 for a name said with the kind 空气炸锅: the head is the end of its kind word
        headed = [m for m in candidates if any(e in m.entity.lower() for e in ends) or _of_kind(head, m.kinds)]
        compatible = compatibility(anaphor.type, headed[-1].types, lex) if headed else 0
        # a name said with the noun; or of a kind the noun names (这个系统 for 用友U8), whatever its type
        if headed and (
            compatible == 2
            or ((anaphor.type is None or headed[-1].types == (BARE_IDENTIFIER,)) and _of_kind(head, headed[-1].kinds))
            or head in category_nouns(headed[-1].entity, lex)
        ):
            return headed[-1], anaphor.confidence
    penalty = 0.6 if anaphor.descriptors else 1.0
    for pool, factor in (([m for m in candidates if m.salient], 1.0), (candidates, 0.8)):
        for mention in reversed(pool):
            if compatibility(anaphor.type, mention.types, lex) == 2:
                mention = _topic(anaphor, mention, pool, lex)
                confidence = anaphor.confidence * factor * (1.0 if anaphor.type else 0.9)
                return mention, confidence * penalty
    if anaphor.type in lex.thing_types:
        # that server for FS-09 said as "the shared drive on FS-09", the device for a key: with nothing of
        # the asked type, another kind of machine or product said before
        things = [m for m in candidates if set(m.types) & lex.thing_types]
        if things:
            return things[-1], anaphor.confidence * 0.5
    if (
        anaphor.type in lex.business_types
        and anaphor.kind != "contrast"
        and not any(set(m.types) & lex.place_types for m in candidates)
    ):
        # 这家店, the restaurant, that place with no place named: the shop said as an organisation
        # (美团点的老乡鸡外卖, an order from Shake Shack)
        shops = [m for m in candidates if "organization" in m.types]
        if shops:
            return shops[-1], 0.4
    for mention in reversed(candidates):
        if compatibility(anaphor.type, mention.types, lex) == 1:
            return mention, anaphor.confidence * 0.6
    if anaphor.type in lex.place_types and anaphor.kind != "contrast":
        # 该餐馆 right after 给您推荐钓鱼台国宾馆: with no place of the asked type in the window, the
        # place just recommended is meant, whatever its name's suffix says
        places = [m for m in candidates if m.salient and set(m.types) & lex.place_types]
        if places and not any(compatibility(anaphor.type, m.types, lex) for m in candidates):
            return places[-1], 0.3
    if (
        anaphor.head is None
        and anaphor.kind == "anaphor"
        and not anaphor.text.endswith("们")
        and not anaphor.text.isascii()
        and anaphor.text != "她"  # 她是联通的: a woman not named, never a shop or a plan
    ):
        # 他家, 他的周边: colloquially the place in focus as often as a person
        for mention in reversed([m for m in candidates if m.salient] or candidates):
            return mention, 0.3
    return None, 0.0


def pronoun_hint(text: str, anaphor: Anaphor, lex: CorefLexicon) -> str | None:
    """The type a pronoun's clause speaks of (重装以后它…, 它还是闪退 → software; it costs per month → plan)."""
    if anaphor.head is not None:
        return None
    stop = CLAUSE_BREAK.search(text, anaphor.span[1])
    start = max((m.end() for m in CLAUSE_BREAK.finditer(text, 0, anaphor.span[0])), default=0)
    clause = (text[start : anaphor.span[0]] + " " + text[anaphor.span[1] : stop.start() if stop else len(text)]).lower()
    hit = next(iter(lex.pronoun_hints.find(clause)), None)
    return None if hit is None else str(hit.value)
