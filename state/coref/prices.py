"""References that pick a listed option by its price: 便宜的那个, 贵的那个, the cheaper one, the pricier kit.

An agent lists options with their prices (基础套餐680元和全面套餐1280元, a Basic Kit for $89 or a Deluxe
Kit for $179) and the customer picks one by comparing them. The referent is the option, among the
last sentence that named two or more priced ones, whose own stretch of that sentence (from its name
to the next option's) carries the lowest or the highest price. A request for something new (有没有
便宜点的, anything cheaper than …) is no reference: it names no option said.

Pure functions over sentence texts and the window's mentions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, TypeVar

_ZH_COMPARED = re.compile(r"(?P<word>便宜|实惠|贵)(?:一?点|些)?的(?:那(?:个|款|档|种|张|份|套|家|位)?)?")
_ZH_REQUEST = re.compile(r"(?:有没有|有无|还有|找|推荐|换个|换一个|来个|要个)(?:更|再)?$")
_EN_COMPARED = re.compile(
    r"\bthe\s+(?P<word>cheaper|cheapest|pricier|priciest|more\s+expensive|less\s+expensive|"
    r"most\s+expensive|least\s+expensive)\b(?:\s+(?:one|option|[a-z]+))?",
    re.IGNORECASE,
)
_CHEAP = ("便宜", "实惠", "cheaper", "cheapest", "less expensive", "least expensive")
_PRICE = re.compile(r"[$¥€£]\s?(\d[\d,]*(?:\.\d+)?)|(\d+(?:\.\d+)?)\s?(?:元|块|美元|dollars?\b)")


class _Said(Protocol):
    @property
    def entity(self) -> str: ...
    @property
    def turn_id(self) -> str: ...
    @property
    def sentence(self) -> str: ...
    @property
    def span(self) -> tuple[int, int]: ...


M = TypeVar("M", bound=_Said)


def price_comparison(text: str, span: tuple[int, int]) -> int | None:
    """-1 when the reference at `span` (or the words right before it) asks for the cheaper option,
    1 for the dearer one, None when it compares no prices.

    >>> price_comparison("那还是做便宜的吧", (4, 7))
    -1
    >>> price_comparison("what's in the pricier one?", (10, 25))
    1
    >>> price_comparison("有没有便宜点的", (3, 7)) is None
    True
    """
    for pattern in (_ZH_COMPARED, _EN_COMPARED):
        for m in pattern.finditer(text):
            if m.start() < span[1] and span[0] < m.end() and not _ZH_REQUEST.search(text[: m.start()]):
                word = " ".join(m.group("word").lower().split())
                return -1 if word in _CHEAP else 1
    return None


def compared_spans(text: str, taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Price comparisons no other finder took (做便宜的吧, the cheaper kit)."""
    out = []
    for pattern in (_ZH_COMPARED, _EN_COMPARED):
        for m in pattern.finditer(text):
            free = not any(m.start() < b and a < m.end() for a, b in taken)
            if free and not _ZH_REQUEST.search(text[: m.start()]):
                out.append(m.span())
    return out


def _price(text: str) -> float | None:
    m = _PRICE.search(text)
    return None if m is None else float((m.group(1) or m.group(2)).replace(",", ""))


def by_price(direction: int, candidates: Sequence[M]) -> M | None:
    """The option of the last turn naming two or more priced options (`candidates` oldest first)
    with the lowest (`direction` -1) or highest (1) price said in its own stretch of its sentence
    (一是A 129元套餐…；二是B 99元套餐…: a list may run over sentences the splitter cut at ；)."""
    turns = list(dict.fromkeys(m.turn_id for m in reversed(candidates)))
    for turn in turns:
        priced: list[tuple[float, M]] = []
        for sentence in dict.fromkeys(m.sentence for m in candidates if m.turn_id == turn):
            said = sorted(
                {m.span: m for m in candidates if m.turn_id == turn and m.sentence == sentence}.values(),
                key=lambda m: m.span,
            )
            for i, mention in enumerate(said):
                end = said[i + 1].span[0] if i + 1 < len(said) else len(sentence)
                price = _price(sentence[mention.span[0] : end])
                if price is not None and all(mention.entity != m.entity for _, m in priced):
                    priced.append((price, mention))
        if len(priced) >= 2 and len({p for p, _ in priced}) >= 2:
            return (min if direction < 0 else max)(priced, key=lambda pm: pm[0])[1]
    return None
