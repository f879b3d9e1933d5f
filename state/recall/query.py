"""Reading the question before recall: class, causal cues, emotion, names, identifiers, statements.

Input: the user's turn text (and the immediate context turns). Output: `QueryAnalysis`, a
frozen record the scorer and the arbitration use. State: none.

Names: a question that names a person ("When did Caroline go ...") must not be ranked by
the name, or every chit-chat turn that says "Hey Caroline!" outranks the evidence. So
capitalised words that are not question words, and people the caller already knows, are
taken out of the text that is embedded and of the lexical query, and come back as a
separate signal: the memory was *said by* that person (see `state.recall.scoring`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from state.recall.config import ClassSpec, RecallTables
from state.recall.focus import Focus, answer_focus, says
from state.recall.lexical import tokenize

_CAPITALISED = re.compile(r"\b([A-Z][a-z]+(?:[A-Z][a-z]+)?)(?:'s)?\b")
# Identifiers worth matching exactly: order numbers, tracking numbers, phone numbers, codes.
_IDENTIFIER = re.compile(
    r"(?<![A-Za-z0-9])(?:[A-Z]{1,4}-?\d{4,}(?:-\d+)*|\d{5,}(?!\s*[元块])|[A-Z]{2,}\d{2,}[A-Z0-9]*)(?![A-Za-z0-9])"
)
# A shorter number is an identifier where a record noun names it: "订单7719", "7731那个订单", "order #4471".
_RECORD = r"(?:订单|单号|运单|工单|尾号|卡号|order|ticket|case|invoice|booking|ref(?:erence)?|ending(?: in)?)"
_NAMED_NUMBER = re.compile(
    rf"{_RECORD}\s*(?:no\.?|number|号|#)?\s*#?(\d{{4,}})(?!\d)|(?<![\d.,$¥€£])(\d{{4,}})\s*(?:那个|这个|的|号)?\s*{_RECORD}",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class QueryAnalysis:
    text: str
    question_class: str
    class_spec: ClassSpec | None
    cue_intensity: float
    cue_families: tuple[str, ...]
    emotion: npt.NDArray[np.float64]
    name_candidates: tuple[str, ...]
    semantic_text: str
    entities: tuple[str, ...]
    needs_certainty: bool
    focus: Focus
    refers_to_open: bool  # names no matter of its own ("my problem"): an open issue is its referent
    points_back: bool  # a pronoun or demonstrative points at something already said ("that", "它", "那笔")


def classify_question(text: str, tables: RecallTables) -> ClassSpec | None:
    """The class whose keywords cover most of the question (ties: table order); None is 'other'.

    >>> from state.recall.config import load_tables
    >>> classify_question("我的快递到哪了", load_tables()).name
    'logistics'
    >>> classify_question("How are you?", load_tables()) is None
    True
    """
    lowered = text.lower()
    best: ClassSpec | None = None
    best_hits = 0
    for spec in tables.classes:
        hits = sum(len(kw) for kw in spec.keywords if kw in lowered)
        if hits > best_hits:
            best, best_hits = spec, hits
    return best


def causal_cues(text: str, tables: RecallTables) -> tuple[float, tuple[str, ...]]:
    """Cue intensity in [0, 1] and the cue families found ("again", frustration, urgency).

    >>> from state.recall.config import load_tables
    >>> causal_cues("客服态度又这么差，太失望了", load_tables())
    (1.0, ('repeat', 'frustration'))
    """
    lowered = text.lower()
    found = tuple(f.name for f in tables.cues if any(w in lowered for w in f.words))
    weight = sum(f.weight for f in tables.cues if f.name in found)
    return min(1.0, weight), found


def query_emotion(families: Sequence[str], tables: RecallTables) -> npt.NDArray[np.float64]:
    """The question's emotion vector (stress, urgency, 1-certainty, 1-cooperation)."""
    vecs = [tables.query_emotion[f] for f in families if f in tables.query_emotion]
    if not vecs:
        vecs = [tables.query_emotion["neutral"]]
    mean: npt.NDArray[np.float64] = np.asarray(vecs, dtype=np.float64).mean(axis=0)
    return mean


def name_candidates(text: str, known_people: Iterable[str], tables: RecallTables) -> tuple[str, ...]:
    """Words that may name a person: capitalised non-question words, and known people present.

    >>> from state.recall.config import load_tables
    >>> name_candidates("When did Caroline go to the LGBTQ group?", (), load_tables())
    ('Caroline',)
    >>> name_candidates("王经理上次说的方案呢", ("王经理",), load_tables())
    ('王经理',)
    """
    found: list[str] = []
    for match in _CAPITALISED.finditer(text):
        word = match.group(1)
        if word in tables.not_people or word.lower() in tables.stopwords:
            continue
        found.append(word)
    found.extend(p for p in known_people if p and p in text)
    return tuple(dict.fromkeys(found))


def strip_names(text: str, names: Sequence[str]) -> str:
    """The text without the given names (and their possessive 's); the original if nothing is left.

    >>> strip_names("What is Caroline's identity?", ["Caroline"])
    'What is identity?'
    >>> strip_names("Well , can you change it ?", [])  # nothing to strip: the very text (one memo entry)
    'Well , can you change it ?'
    """
    if not names:
        return text
    out = text
    for name in sorted(names, key=len, reverse=True):
        out = re.sub(rf"\b{re.escape(name)}(?:'s)?\b", " ", out) if name.isascii() else out.replace(name, " ")
    out = re.sub(r"\s+", " ", out).strip()
    out = re.sub(r"\s+([?!.,])", r"\1", out)
    return out if tokenize(out) else text


def identifiers(text: str) -> tuple[str, ...]:
    """Strong identifiers said in the text (order numbers, tracking numbers, phone numbers): letters with
    digits, five digits and more, or four where a record noun names them ("订单7719", "order 7731").

    >>> identifiers("订单 20250601123 还没发货, tracking SF123456789")
    ('20250601123', 'SF123456789')
    >>> identifiers("7731那个订单到哪了"), identifiers("when is 66154 supposed to come?"), identifiers("2023年买的")
    (('7731',), ('66154',), ())
    >>> identifiers("INV-2025-0113 那张后来怎么处理的？")  # every group of a hyphenated number: not INV-2025
    ('INV-2025-0113',)
    """
    found = [m.group(0) for m in _IDENTIFIER.finditer(text)]
    return tuple(dict.fromkeys([*found, *named_numbers(text)]))


def named_numbers(text: str) -> tuple[str, ...]:
    """Numbers of four digits and more that a record noun names ("订单7719", "7731那个订单", "order #4471").

    >>> named_numbers("7731那个订单到哪了"), named_numbers("Order 4471 and 2 items")
    (('7731',), ('4471',))

    A card or an account is named by its last digits ("尾号3318", "card ending in 4471"):
    >>> named_numbers("尾号3318那张卡的年费"), named_numbers("my card ending in 4471")
    (('3318',), ('4471',))
    """
    return tuple(dict.fromkeys(m.group(1) or m.group(2) for m in _NAMED_NUMBER.finditer(text)))


def analyse_query(
    text: str, tables: RecallTables, *, known_people: Sequence[str] = (), entities: Sequence[str] = ()
) -> QueryAnalysis:
    """Everything recall needs to know about the question, from the text alone.

    >>> from state.recall.config import load_tables
    >>> q = analyse_query("我的订单 20250601123 又被取消了，太失望了", load_tables())
    >>> (q.question_class, q.cue_intensity, q.entities)
    ('order', 1.0, ('20250601123',))
    """
    spec = classify_question(text, tables)
    intensity, families = causal_cues(text, tables)
    names = name_candidates(text, known_people, tables)
    return QueryAnalysis(
        text=text,
        question_class=spec.name if spec else "other",
        class_spec=spec,
        cue_intensity=intensity,
        cue_families=families,
        emotion=query_emotion(families, tables),
        name_candidates=names,
        semantic_text=strip_names(text, names),
        entities=tuple(dict.fromkeys([*identifiers(text), *entities])),
        needs_certainty=bool(spec and spec.needs_certainty),
        focus=answer_focus(
            text, tables.focus_handling, tables.focus_own, tables.focus_current, tables.focus_information
        ),
        refers_to_open=_refers_to_open(text, tables.open_referents),
        points_back=says(text, tables.back_references),
    )


def _refers_to_open(text: str, referents: Sequence[str]) -> bool:
    """The question names no matter of its own but points at one of the user's: a referent phrase
    as a substring, or with a gap where "…" stands ("那个…的问题": "那个登不上的问题").

    >>> _refers_to_open("那个登不上的问题 它现在有人在跟吗", ["那个…的问题"])
    True
    >>> _refers_to_open("Any news on my cases?", ["my case"]), _refers_to_open("那个订单到哪了", ["那个…的问题"])
    (True, False)
    """
    lowered = text.lower()
    return any(p in lowered for p in referents if "…" not in p) or says(lowered, [p for p in referents if "…" in p])


def is_explicit_statement(text: str, tables: RecallTables) -> bool:
    """A user's explicit statement of a fact ("我刚领的券", "actually I already got it").

    >>> from state.recall.config import load_tables
    >>> is_explicit_statement("我刚领的券，怎么用不了", load_tables())
    True
    >>> is_explicit_statement("优惠券还能用吗", load_tables())
    False
    """
    lowered = text.lower()
    return any(m in lowered for m in tables.statement_markers)
