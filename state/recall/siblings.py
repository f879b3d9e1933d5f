"""Whether the memories recall would offer hold a sibling of what the question asks about.

Input: the question's text and its specific terms the offered memories lack (`state.recall.specifics`),
the memories' texts, the lexicon's kin groups (word → group: "我爸", "dad", "father" → one group) and
stop words. Output: the sibling pairs found, "asked→offered" ("5521→5512", "father→mother",
"杭州→成都", "pet→car"). State: none.

Why: a question next to what the user discussed (another order number, another family member's
appointment, another city's hotel, another kind of policy) shares most of its words with the
memories of the matter discussed, so dense and BM25 scores carry it over the abstain floor. What it
names and the memories lack says "not held"; a memory holding a *different value of the same kind*
in that place says "the stored matter is a sibling, not the answer", which is stronger evidence:
* an identifier the memories lack, while they hold one of the same shape (letters and digit count:
  "55987" against "55102", "SF11…" against "SF12…");
* a kin word the memories lack (by group: "我爸", "父亲", "dad" are one), while they hold another group,
  or no relative at all ("my son's line" against "your line": the user's own matter, "我妈家那边燃气费"
  against "我家电费"); a general word for relatives ("孩子", "kids", the `family` group) may stand for any
  member, so it is neither asked nor another member;
* a place name (jieba's ns) the memories lack, while they hold another one;
* a noun modifying the next noun ("home" in "home insurance", "oven" in "the oven technician") the memories
  lack, while they hold that noun modified by another noun ("car insurance", "the dishwasher technician").
An adjective before the held noun ("a new SIM" for "the replacement SIM") is no sibling: only nouns are,
and a proper noun only inside a sentence (spaCy tags a capital "New" that opens one as a proper noun).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from state.core.language import CJK as _CJK
from state.coref.taggers import Token, en_tokens, zh_tokens
from state.recall.specifics import Term

FAMILY = "family"  # the kin group of words for relatives in general ("孩子", "kids", "家人"): any member
_CODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
_LATIN_WORD = re.compile(r"[A-Za-z]+")


def _shape(word: str) -> str:
    return re.sub(r"[A-Za-z]", "A", re.sub(r"\d", "9", word.upper()))


def _identifiers(missing: Sequence[Term], texts: Sequence[str]) -> list[str]:
    shapes: dict[str, str] = {}
    for text in texts:
        for code in _CODE.findall(text):
            if any(c.isdigit() for c in code):
                shapes.setdefault(_shape(code), code)
    return [f"{t.text}→{shapes[_shape(t.text)]}" for t in missing if t.identifier and _shape(t.text) in shapes]


def kin_groups(text: str, kin: Mapping[str, str]) -> dict[str, str]:
    """The kin groups a text names, each with the word that names it ("我爸的体检" → {father: 我爸})."""
    low = text.lower()
    latin = set(_LATIN_WORD.findall(low))
    out: dict[str, str] = {}
    for word, group in kin.items():
        if (word in low) if _CJK.search(word) else (word in latin):
            out.setdefault(group, word)
    return out


def _kin(question: str, texts: Sequence[str], kin: Mapping[str, str]) -> list[str]:
    asked = kin_groups(question, kin)
    if not asked:
        return []
    asked.pop(FAMILY, None)  # "my kids", "家人": no one member, so no other member to tell apart
    if not asked:
        return []
    offered = kin_groups(" ".join(texts), kin)
    if FAMILY in offered or any(g in offered for g in asked):
        return []  # the asked member, or a word that may stand for them ("孩子" for "我儿子")
    if not offered:  # no family member at all: the memories are the user's own matter, not the relative's
        return [f"{w}→self" for w in asked.values()]
    return [f"{w}→{o}" for g, w in asked.items() for o in list(offered.values())[:1]]


def _places(missing: Sequence[Term], texts: Sequence[str]) -> list[str]:
    asked = [t for t in missing if t.place]
    if not asked:
        return []
    offered = {tok.text for text in texts if _CJK.search(text) for tok in zh_tokens(text) if tok.tag == "ns"}
    others = sorted(offered - {t.text for t in asked})
    return [f"{t.text}→{others[0]}" for t in asked] if others else []


def _modifiers_en(text: str, head: str, stop: frozenset[str]) -> set[str]:
    toks = en_tokens(text)
    return {
        toks[i - 1].text.lower()
        for i in range(1, len(toks))
        if toks[i].text.lower() == head
        and (toks[i - 1].tag == "NOUN" or (toks[i - 1].tag == "PROPN" and i > 1 and toks[i - 2].tag != "PUNCT"))
        and toks[i - 1].text.lower() not in stop
        and len(toks[i - 1].text) > 2
    }


def _modifiers_zh(text: str, head: str) -> set[str]:
    toks = zh_tokens(text)
    found: set[str] = set()
    for i in range(1, len(toks)):
        if toks[i].text.lower() != head:
            continue
        j = _word_before(toks, i)
        if j >= 0 and (toks[j].tag.startswith("n") or toks[j].tag == "eng") and len(toks[j].text) >= 2:
            found.add(toks[j].text.lower())
    return found


def _word_before(toks: Sequence[Token], i: int) -> int:
    """The position of the word before token i, past spaces between scripts and one attributive 的
    ("爱奇艺的 auto-renew": 爱奇艺); -1 when there is none."""
    j = i - 1
    while j >= 0 and not toks[j].text.strip():
        j -= 1
    if j >= 0 and toks[j].text == "的":
        j -= 1
        while j >= 0 and not toks[j].text.strip():
            j -= 1
    return j


def _modifiers(missing: Sequence[Term], texts: Sequence[str], stop: frozenset[str]) -> list[str]:
    out: list[str] = []
    for t in missing:
        head = t.modifies.lower()
        if not head or t.identifier:
            continue
        found: set[str] = set()
        for text in texts:
            # read by the memory's script: "Spotify" is asked about in a Chinese sentence as in an English one
            found |= _modifiers_zh(text, head) if _CJK.search(text) else _modifiers_en(text, head, stop)
        found.discard(t.text.lower())
        if found:
            out.append(f"{t.text}→{sorted(found)[0]}")
    return out


def siblings(
    question: str,
    missing: Sequence[Term],
    texts: Sequence[str],
    kin: Mapping[str, str],
    stop: frozenset[str],
) -> tuple[str, ...]:
    """The "asked→offered" sibling pairs (see the module docstring); empty when none.

    >>> from state.recall.specifics import specific_terms
    >>> t = [x for x in specific_terms("Has order 55987 shipped?", frozenset({"order"})) if x.identifier]
    >>> siblings("Has order 55987 shipped?", t, ["Order 55102 shipped today."], {}, frozenset())
    ('55987→55102',)
    """
    if not texts:
        return ()
    return tuple(
        dict.fromkeys(  # a place that modifies the noun ("杭州的酒店") is found by both rules: once
            (
                *_identifiers(missing, texts),
                *_kin(question, texts, kin),
                *_places(missing, texts),
                *_modifiers(missing, texts, stop),
            )
        )
    )
