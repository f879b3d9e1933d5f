"""Kind words said with a name, and later nouns that refer back through them (bridging).

A name is often introduced by the word for its kind: 电饭煲是美的MB-FB40S, 宽带账号是0571-88239046,
受理编号CB20261202-5517, booking code KQ7T2M, work order WO-5521, a fuel pump recall, campaign WRK-99.
Later the customer names the kind, not the name: 电饭煲倒是没毛病, 这个编号多久出结果, that booking, the
return. `lead_words` keeps the kind words of the clause that introduced a name; `bridges` finds, in a
later sentence, a noun that is one of them and binds it to that name. Without the kind word the name
would be reached only by recency, and with two names of one type (two appliances, two tickets) the
last one said wins whatever the customer meant.

The kind words are only read where the clause ties them to the name: "KIND是/为 NAME" for any name,
or the words right before an identifier (订单号TM…, ticket SR-40917). Chinese: a later noun matches
by two characters or more of the kind (光猫 of 光猫型号), said bare only when the kind was tied by 是;
after a pointer one character will do (这单 for 订单号, 这个码 for 远程协助码). English: a definite noun
phrase (the/that/this/my [word] KIND).

Pure functions over strings; no state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ZH_RUN = re.compile(r"[\u4e00-\u9fff]+$")
# characters that end a kind word read backwards from the name: function words, pronouns, verbs of saying
_ZH_STOP = re.compile(r"[的了您我你他她它在给到去把已被和与及、有就也都还叫是为]")
_ZH_COUNTED = re.compile(r"^[一二两三四五六七八九十几每][个台部件款张笔单份条只家项套样]")
_ZH_TIE = re.compile(r"(?:是|为)\s*$")
_ZH_POINTER = re.compile(r"(?:这|那|该)(?:个|张|份|笔|条|台|件)?$")
_ZH_AFTER_ONE = re.compile(r"$|[^\u4e00-\u9fff]|[的子是了吗呢还也都就在有不我你他能要怎可什多哪几]")
_EN_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_EN_STOP = frozenset(
    {
        "a",
        "an",
        "the",
        "my",
        "your",
        "our",
        "their",
        "his",
        "her",
        "its",
        "to",
        "from",
        "on",
        "at",
        "for",
        "with",
        "of",
        "in",
        "by",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "i",
        "we",
        "you",
        "it",
        "opened",
        "logged",
        "created",
        "made",
        "added",
        "open",
        "new",
        "ve",
        "i've",
        "we've",
        "has",
        "have",
        "number",
        "no",
        "id",
    }
)  # "number" and "id" say nothing of the kind: order number X, the number
_EN_DEFINITE = r"\b(?:the|that|this|my)\s+(?:[a-z]+\s+)?"


@dataclass(frozen=True, slots=True)
class Lead:
    """Kind words said with a name, and whether they were tied to it by 是/为 (said bare later)."""

    words: tuple[str, ...]
    tied: bool


NO_LEAD = Lead((), False)


def lead_words(sentence: str, span: tuple[int, int], *, identifier: bool, since: int = 0) -> Lead:
    """The kind words the clause introducing the name at `span` said with it, read after `since` (the
    end of the name said before it: Ticket INC-55821: Outlook gives Outlook no kind).

    >>> lead_words("电饭煲是美的MB-FB40S，炖盅是小熊DBQ-B20N1", (18, 29), identifier=False)
    Lead(words=('炖盅',), tied=True)
    >>> lead_words("Your booking code KQ7T2M", (18, 24), identifier=True)
    Lead(words=('booking', 'code'), tied=False)
    """
    before = sentence[since : span[0]]
    if sentence[span[0] : span[1]].isascii() and not _ZH_RUN.search(before.rstrip("是为 ")):
        return _en_lead(before, identifier=identifier)
    tied = _ZH_TIE.search(before) is not None
    if not tied and not identifier:
        return NO_LEAD
    run = _ZH_RUN.search(before.rstrip().removesuffix("是").removesuffix("为"))
    if run is None:
        return NO_LEAD
    word = _ZH_COUNTED.sub("", _ZH_STOP.split(run.group())[-1][-6:])  # 一单是A, 一单是B: counted, no kind
    words: tuple[str, ...] = (word,) if word else ()
    if identifier and words and len(run.group()) <= 3:  # 已记录您的投诉，编号TS-…: the clause before names it
        clauses = re.split(r"[，,]", before)
        earlier = _ZH_RUN.search(clauses[-2].rstrip()) if len(clauses) >= 2 else None
        kind = _ZH_STOP.split(earlier.group())[-1][-4:] if earlier else ""
        if len(kind) >= 2:
            words = (kind, *words)
    # a number's kind (电话是69766388) is named again only after a pointer: 电话 alone asks for a phone
    return Lead(words, tied and not identifier) if words else NO_LEAD


def _en_lead(before: str, *, identifier: bool) -> Lead:
    """English: the last words before an identifier (work order WO-5521), or before "is"/a colon; with
    one or two words in the clause, the last word of the clause before the comma too (a fuel pump
    recall, campaign WRK-99)."""
    clauses = re.split(r"[.;!?]", before)[-1].split(",")
    tail = clauses[-1]
    tied = re.search(r"\b(?:is|was)\s+$|:\s*$", tail) is not None
    if not identifier and not tied:
        return NO_LEAD
    words = [w.lower() for w in _EN_WORD.findall(tail)][-2:]
    if len(_EN_WORD.findall(tail)) <= 2 and len(clauses) >= 2:
        words = [w.lower() for w in _EN_WORD.findall(clauses[-2])][-1:] + words
    kept = tuple(w for w in words if w not in _EN_STOP and len(w) >= 3)
    return Lead(kept, False)


def bridges(text: str, leads: list[Lead], taken: list[tuple[int, int]]) -> list[tuple[tuple[int, int], int]]:
    """Where `text` names the kind of one of `leads` (most recent last): (span, index into `leads`), the
    most recent lead winning a word two share.

    >>> bridges("这个编号多久出结果", [Lead(("受理编号",), False)], [])
    [((0, 4), 0)]
    """
    found: list[tuple[tuple[int, int], int]] = []
    spans = list(taken)
    for index in range(len(leads) - 1, -1, -1):
        for word in leads[index].words:
            span = _en_bridge(text, word) if word.isascii() else _zh_bridge(text, word, tied=leads[index].tied)
            if span is not None and not any(span[0] < b and a < span[1] for a, b in spans):
                found.append((span, index))
                spans.append(span)
    return sorted(found)


def _en_bridge(text: str, word: str) -> tuple[int, int] | None:
    if word not in text.lower():
        return None
    # the red one: a word said with "one" is a cue, read by `state.coref.cues`
    hit = re.search(_EN_DEFINITE + re.escape(word) + r"\b(?!\s+ones?\b)", text, re.IGNORECASE)
    return None if hit is None else hit.span()


def _zh_bridge(text: str, word: str, *, tied: bool) -> tuple[int, int] | None:
    """The longest part of `word` said in `text`: two characters or more (bare only for a tied kind,
    else after a pointer), or its last character after a pointer (这单 for 订单号)."""
    if not set(word) & set(text):
        return None
    for size in range(len(word), 0, -1):
        for k in range(len(word) - size + 1):
            part = word[k : k + size]
            for hit in re.finditer(re.escape(part), text):
                pointer = _ZH_POINTER.search(text, 0, hit.start())
                if size == 1 and (pointer is None or not _ZH_AFTER_ONE.match(text, hit.end())):
                    continue
                if size >= 2 and not tied and pointer is None:
                    continue
                return (pointer.start() if pointer else hit.start(), hit.end())
    return None
