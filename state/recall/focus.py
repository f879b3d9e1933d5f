"""Which side of an exchange holds what the question wants (its answer focus).

Relevance flows between neighbouring turns of one exchange towards the turn that holds the
answer (`state.recall.scoring`). Which turn that is depends on the question:

* `answer` (the default): a turn that asks is answered by the next turn ("How long have you
  been painting?" → the reply holds the answer);
* `handling` ("后来怎么处理的", "how was it handled"): what the customer said (a complaint, a
  request, however it was typed at write time) is answered by the agent's next turn, the way it
  was handled, as a question by its reply;
* `own` ("我找你们是为了什么事", "what did I cancel"): the question asks what the customer
  themself asked or said, so the agent's reply to a customer's turn ("Cancelled.", "已为您
  预约…") hands relevance back to the customer's turn it acknowledges;
* `current` ("我现在约的保洁是哪天？", "my current plan"): the current state of a matter: the
  agent's reply to a request states it (as for `handling`), and a newer version of a statement
  supersedes the earlier one (`state.recall.versions`);
* `information` ("换 AirPods 要带什么？", "how long do I have to return it?"): a question for a
  fact the customer was told: the agent's reply to what the customer said holds it, as for
  `handling` (a complaint names the matter; the reply says what to do about it).

Phrases are matched on the lower-cased question: Latin ones as whole words ("now" is not in
"know"), CJK ones as substrings, '…' a gap of a few characters ("我…了什么").

Input: the question text and the focus phrases of the recall lexicon; per turn, whether it asks
and whether the customer said it. Output: the focus, and per link between two
consecutive turns its direction. Pure.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

Focus = Literal["answer", "handling", "own", "current", "information"]
B = npt.NDArray[np.bool_]


# 我 right after a preposition or a benefactive is the object, not the one who did it: "你们给我补偿了什么"
# asks what the agent did, not what the customer did ("我…了什么").
_OBJECT_OF = "给帮替为让跟对和向"


def _pattern(phrase: str) -> str:
    """A phrase as a regular expression: Latin ones as whole words, '…' a gap of up to 6 characters;
    a CJK phrase opening with 我 not where 我 is an object ("给我…")."""
    body = ".{0,6}?".join(re.escape(part) for part in phrase.split("…"))
    if phrase.isascii():
        return rf"(?<!\w){body}(?!\w)"
    return rf"(?<![{_OBJECT_OF}]){body}" if phrase.startswith("我") else body


def says(text: str, phrases: Sequence[str]) -> bool:
    """One of the lower-cased phrases is in the text: Latin ones as whole words, others as substrings;
    '…' in a phrase stands for a few characters ("我…了什么": "我退订了什么").

    >>> says("What did it cost?", ["what did i"]), says("What did I order?", ["what did i"])
    (False, True)
    >>> says("我现在约的保洁", ["现在"]), says("上周三我退订了什么？", ["我…了什么"]), says("我了解了", ["我…了什么"])
    (True, True, False)
    >>> says("你们给我补偿了什么？", ["我…了什么"])
    False
    """
    matcher = _matcher(tuple(phrases))
    return matcher is not None and matcher.search(text.lower()) is not None


# A negation just before a phrase takes it back: 不能用了 is no 能用了, "not working again" no
# "working again". Read over the dozen characters before the phrase.
_NEGATED = re.compile(r"(?:不|没|沒|未|别|無|无法|(?<!\w)not|n't|(?<!\w)never|(?<!\w)no longer)\s*$")


def says_unnegated(text: str, phrases: Sequence[str]) -> bool:
    """`says`, but a phrase said right after a negation does not count.

    >>> says_unnegated("终于能用了", ["能用了"]), says_unnegated("还是不能用了", ["能用了"])
    (True, False)
    >>> phrase = ["working again"]
    >>> says_unnegated("It's working again!", phrase), says_unnegated("It's not working again", phrase)
    (True, False)
    >>> says_unnegated("不能用了，不过现在能用了", ["能用了"])
    True
    """
    matcher = _matcher(tuple(phrases))
    if matcher is None:
        return False
    lowered = text.lower()
    return any(_NEGATED.search(lowered[max(0, m.start() - 12) : m.start()]) is None for m in matcher.finditer(lowered))


# What is still to come takes a "done" phrase back too: "等修好了", "once it's fixed", "I'll get it replaced".
# Read over the dozen characters before the phrase (within its clause), as the negation is.
_PROSPECTIVE = re.compile(
    r"(?:会|将|要|等|如果|一旦|(?<!\w)(?:will|going to|gonna|to be|to get|get it|can|could|should|would|once|when|if)"
    r"|'ll)[^.,;!?。，；！？]{0,12}$"
)


def says_done(text: str, phrases: Sequence[str], steps: Sequence[str] = ()) -> bool:
    """`says_unnegated`, and the phrase is not said of what is still to come, nor of one of the
    `steps` right after it (a step on the way: "已为您提交电费核查", "it has been escalated").

    >>> says_done("餐厅confirm了，已经帮你留好", ["已经"]), says_done("I'll get it replaced", ["replaced"])
    (True, False)
    >>> says_done("The plumber replaced the valve", ["replaced"]), says_done("等修好了就通知您", ["修好了"])
    (True, False)
    >>> says_done("已为您提交电费核查", ["已为"], ["提交"]), says_done("已帮您关闭续费并申请退回", ["已帮"], ["申请"])
    (False, True)
    """
    matcher = _matcher(tuple(phrases))
    if matcher is None:
        return False
    lowered = text.lower()
    for m in matcher.finditer(lowered):
        before = lowered[max(0, m.start() - 12) : m.start()]
        after = lowered[m.end() : m.end() + (14 if m.group(0).isascii() else 6)]
        taken_back = _NEGATED.search(before) is not None or _PROSPECTIVE.search(before) is not None
        if not taken_back and not any(step in after for step in steps):
            return True
    return False


@functools.lru_cache(maxsize=64)
def _matcher(phrases: tuple[str, ...]) -> re.Pattern[str] | None:
    """One compiled alternation per phrase list (the lexicon's lists are few and hot-reloaded whole)."""
    return re.compile("|".join(f"(?:{_pattern(p)})" for p in phrases)) if phrases else None


def answer_focus(
    text: str,
    handling: Sequence[str],
    own: Sequence[str],
    current: Sequence[str] = (),
    information: Sequence[str] = (),
) -> Focus:
    """The question's focus from its phrases; `own` wins over `handling`, `handling` over `current`,
    `current` over `information`.

    >>> answer_focus("上次尺码发错的事后来怎么处理的？", ["后来怎么"], ["我找你们"])
    'handling'
    >>> answer_focus("What did I cancel last Monday?", ["how was it handled"], ["what did i"])
    'own'
    >>> answer_focus("What is my current plan?", [], [], ["current"])
    'current'
    >>> answer_focus("When is the technician coming?", ["how was it handled"], ["what did i"], ["now"])
    'answer'
    """
    if says(text, own):
        return "own"
    if says(text, handling):
        return "handling"
    if says(text, current):
        return "current"
    if says(text, information):
        return "information"
    return "answer"


def said_by_customer(payloads: Sequence[Mapping[str, Any]]) -> B:
    """Per unit: said by the customer (the speaker's role; labels of content are not read here)."""
    return np.array([str(p.get("speaker_role", "customer")) == "customer" for p in payloads], dtype=bool)


def link_directions(focus: Focus, asks: B, customer: B) -> tuple[B, B]:
    """For each pair of consecutive turns (k, k+1), arrays of length len(asks) - 1:

    `forward`: turn k asks and turn k+1 holds the answer;
    `backward`: turn k+1 acknowledges turn k, which holds the answer (the `own` focus).

    >>> a = np.array([False, False]); c = np.array([True, False])
    >>> [x.tolist() for x in link_directions("answer", a, c)]
    [[False], [False]]
    >>> [x.tolist() for x in link_directions("handling", a, c)]
    [[True], [False]]
    >>> [x.tolist() for x in link_directions("own", a, c)]
    [[False], [True]]
    """
    to_agent = customer[:-1] & ~customer[1:]
    if focus == "own":
        return asks[:-1] & ~to_agent, to_agent
    replied = focus in ("handling", "current", "information")
    forward = asks[:-1] | to_agent if replied else asks[:-1].copy()
    return forward, np.zeros(forward.size, dtype=bool)
