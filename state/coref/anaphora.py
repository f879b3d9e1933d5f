"""Anaphors in one sentence: the words that point back to something said before.

Chinese: a demonstrative with a classifier and/or a head noun (这家餐馆, 那个接口, 这个), with a
descriptor it is a weak reference (那个蓝色的盒子); pronouns (它, 他家, 他们); back-reference
phrases (上次提的方案); a bare type noun used as definite (餐馆的地址在哪？). English: pronouns (it,
they, he), this/that + noun or one, the + descriptor + one/noun (the blue one), the + type noun.
A question about an attribute with no referent in the turn (电话是多少？, 门票多少钱？) is a zero
anaphor on the entity in focus. Each anaphor carries the type its words ask for (餐馆 →
restaurant, 家 → a business, 他 → person) and its descriptors.

Pure functions over one sentence and the lexicon; no state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from state.coref.cues import cued_pointer
from state.coref.lexicon import CorefLexicon

BUSINESS = "business"
RECORD = "record"  # 这单, 那单: any record (an order, a booking, a ticket), never the thing it is for
_DESCRIBED_DEMONSTRATIVE = re.compile(r"的?(?:那|这)(?P<cls>[个款件只台种])?")
AnaphorKind = Literal["anaphor", "weak", "zero", "contrast"]
_CLAUSE_END = re.compile(r"[。；;！？!?]")
_ORDINAL = re.compile(
    r"(?:第(?P<n>[一二三四五六七八九十]|\d{1,2})|(?P<last>最后一|后面那|后一)|(?P<first>前面那|前一|头一))"
    r"(?P<cls>[个张台件笔单份款家位部只双条])?|(?P<pair>前者|后者)"
)
_EN_PAIR = re.compile(r"\bthe (?P<which>former|latter)\b(?!\s+(?:one|ones)\b)", re.IGNORECASE)
# 这笔: a payment or its record; 这单: a record of any kind
_CLASSIFIER_TYPES = {"家": BUSINESS, "位": "person", "笔": "transaction", "单": RECORD}
_ZH_DIGITS = {c: i for i, c in enumerate("一二三四五六七八九十", start=1)}
_CONTRAST_REACH = 30  # characters from the contrast word to its type noun (再帮我找一家评分4分以上的酒店)


@dataclass(frozen=True, slots=True)
class Anaphor:
    """A referring expression: its text, span in the sentence, the type asked for and descriptors."""

    text: str
    span: tuple[int, int]
    kind: AnaphorKind
    type: str | None
    head: str | None
    descriptors: tuple[str, ...] = ()
    confidence: float = 0.6


def classifier_type(said: str) -> str | None:
    """The type a Chinese pointer's classifier asks for (那单 → a record, 那位 → a person), whichever
    finder took the pointer.

    >>> classifier_type("原来那单"), classifier_type("那位"), classifier_type("那个")
    ('record', 'person', None)
    """
    pointer = re.search(r"[这那该此](?P<cls>.)$", said)
    return _CLASSIFIER_TYPES.get(pointer.group("cls")) if pointer else None


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(span[0] < b and a < span[1] for a, b in taken)


def _head_at(text: str, pos: int, lex: CorefLexicon) -> tuple[str, str, int] | None:
    """A type noun starting at `pos`: (noun, type, end)."""
    for hit in lex.type_nouns.find(text[pos : pos + 8]):
        if hit.start == 0:
            return hit.word, hit.value, pos + hit.end
    return None


def _descriptor_at(text: str, pos: int, lex: CorefLexicon) -> tuple[str, int] | None:
    for hit in lex.descriptors.find(text[pos : pos + 6]):
        if hit.start == 0:
            end = pos + hit.end
            if text[end : end + 1] == "的":
                end += 1
            return hit.value, end
    return None


def _chinese(text: str, lex: CorefLexicon, taken: list[tuple[int, int]]) -> list[Anaphor]:
    out: list[Anaphor] = []
    mentions = list(taken)
    for phrase in lex.zh_backref_phrases:
        for m in re.finditer(re.escape(phrase), text):
            end = m.end()
            if text[end : end + 1] in ("那", "这"):
                end += 1 + (text[end + 1 : end + 2] in lex.zh_classifiers)
            head = _head_at(text, end, lex)
            span = (m.start(), head[2] if head else end)
            if not _overlaps(span, taken):
                out.append(
                    Anaphor(
                        text[span[0] : span[1]],
                        span,
                        "anaphor",
                        head[1] if head else None,
                        head[0] if head else None,
                        confidence=0.7,
                    )
                )
                taken.append(span)
    for hit in lex.descriptors.find(text):  # 红色的那个, 蓝色那款: the descriptor before the demonstrative
        dem = _DESCRIBED_DEMONSTRATIVE.match(text, hit.end)
        if dem is None or _overlaps((hit.start, dem.end()), taken):
            continue
        head = _head_at(text, dem.end(), lex)
        span = (hit.start, head[2] if head else dem.end())
        out.append(
            Anaphor(
                text[span[0] : span[1]],
                span,
                "weak",
                head[1] if head else None,
                head[0] if head else None,
                (hit.value,),
                0.7,
            )
        )
        taken.append(span)
    for m in _ORDINAL.finditer(text):  # 第二个订单, 最后一台: by position among those said
        head = _head_at(text, m.end(), lex)
        if not m.group("pair") and (
            (head is None and not m.group("cls")) or (head is None and text[m.end() : m.end() + 1].isdigit())
        ):
            continue
        span = (m.start(), head[2] if head else m.end())
        if _overlaps(span, taken):
            continue
        if m.group("pair"):  # 前者 / 后者
            n = 1 if m.group("pair") == "前者" else -1
        elif m.group("last") or m.group("first"):  # 最后一个, 后面那个 / 前面那个
            n = -1 if m.group("last") else 1
        else:
            n = int(m.group("n")) if m.group("n").isdigit() else _ZH_DIGITS[m.group("n")]
        out.append(
            Anaphor(
                text[span[0] : span[1]],
                span,
                "weak",
                head[1] if head else "person" if m.group("cls") == "位" else None,  # 后面那位: a person
                head[0] if head else None,
                (f"#{n}",),
                0.7,
            )
        )
        taken.append(span)
    not_anaphora = {m.start() for m in lex.zh_not_anaphora_re.finditer(text)}
    for m in lex.zh_demonstrative_re.finditer(text):
        if (m.start() in not_anaphora and not cued_pointer(text, m.start())) or _overlaps(m.span(), taken):
            continue
        pos = m.end()
        classifier = text[pos] if pos < len(text) and text[pos] in lex.zh_classifiers else None
        pos += 1 if classifier else 0
        descriptor = _descriptor_at(text, pos, lex)
        pos = descriptor[1] if descriptor else pos
        head = _head_at(text, pos, lex)
        if head is None and descriptor is None and classifier is None:
            continue  # 这/那 alone: 这是, 那就 …
        end = head[2] if head else pos
        span = (m.start(), end)
        if _overlaps(span, taken):
            continue
        type_ = head[1] if head else _CLASSIFIER_TYPES.get(classifier or "")  # 那家: a business; 那位: a person
        kind: AnaphorKind = "weak" if descriptor else "anaphor"
        confidence = 0.85 if head else 0.7 if classifier == "家" else 0.55
        out.append(
            Anaphor(
                text[span[0] : span[1]],
                span,
                kind,
                type_,
                head[0] if head else None,
                (descriptor[0],) if descriptor else (),
                confidence,
            )
        )
        taken.append(span)
    for m in lex.zh_pronoun_re.finditer(text):
        if _overlaps(m.span(), taken) or text[max(0, m.start() - 1) : m.start()] in ("其", "吉"):
            continue
        if text[m.end() : m.end() + 1] == "叫":
            continue  # 她叫陈秀兰: the pronoun introduces the name said after it, it points back to no one
        out.append(Anaphor(m.group(0), m.span(), "anaphor", lex.zh_pronouns[m.group(0)], None, confidence=0.6))
        taken.append(m.span())
    out.extend(_contrasts(text, lex, taken))
    for hit in lex.type_nouns.find(text):
        span = (hit.start, hit.end)
        before = text[max(0, hit.start - 4) : hit.start]
        if hit.word.isascii() or _overlaps(span, taken) or any(before.endswith(w) for w in lex.zh_indefinite):
            continue
        if any(b == hit.start or a in (hit.end, hit.end + 1) for a, b in mentions):
            continue  # SKU-A12盒子, 订单号A123: part of the name said right there, not a reference back
        if hit.value != "person" and _before_person(text, hit.end, lex):
            continue  # 装热水器的那个师傅: the thing tells the person meant apart, a cue and no reference
        out.append(Anaphor(hit.word, span, "anaphor", hit.value, hit.word, confidence=0.5))
        taken.append(span)
    return out


_OF_POINTER = re.compile(r"的(?:这|那)(?P<cls>[个位名])?")


def _before_person(text: str, at: int, lex: CorefLexicon) -> bool:
    """Whether 的, a pointer and a person (那位, 那个师傅) follow `at`: what is said before is a cue."""
    m = _OF_POINTER.match(text, at)
    if m is None:
        return False
    if m.group("cls") in ("位", "名"):
        return True
    return any(h.start == 0 and h.value == "person" for h in lex.type_nouns.find(text[m.end() : m.end() + 4]))


def _contrasts(text: str, lex: CorefLexicon, taken: list[tuple[int, int]]) -> list[Anaphor]:
    """换一家酒店, 再推荐一个景点, 别的餐馆: the first type noun after a contrast word in its clause."""
    out: list[Anaphor] = []
    for m in lex.zh_contrast_re.finditer(text):
        stop = _CLAUSE_END.search(text, m.end())
        reach = text[m.end() : min(stop.start() if stop else len(text), m.end() + _CONTRAST_REACH)]
        heads = [h for h in lex.type_nouns.find(reach) if not h.word.isascii()]
        if not heads:
            continue
        # a two-character noun over a one-character one (再推荐一个人少点的景点: 景点, not 人)
        head = min(heads, key=lambda h: (h.end - h.start < 2, h.start, -h.end))
        span = (m.start(), m.end() + head.end)
        if _overlaps(span, taken):
            continue
        out.append(Anaphor(text[span[0] : span[1]], span, "contrast", head.value, head.word, confidence=0.5))
        taken.append(span)
    return out


def _english(text: str, lex: CorefLexicon, taken: list[tuple[int, int]]) -> list[Anaphor]:
    out: list[Anaphor] = []
    lowered = text.lower()
    for m in lex.en_backref_re.finditer(lowered):
        out.append(Anaphor(text[m.start() : m.end()], m.span(), "anaphor", None, None, confidence=0.6))
        taken.append(m.span())
    for m in _EN_PAIR.finditer(text):  # the latter, the former: by position among those said
        if not _overlaps(m.span(), taken):
            n = "#1" if m.group("which").lower() == "former" else "#-1"
            out.append(Anaphor(m.group(0), m.span(), "weak", None, None, (n,), 0.7))
            taken.append(m.span())
    for m in lex.en_np_re.finditer(lowered):
        if _overlaps(m.span(), taken):
            continue
        head = m.group("head")
        type_ = None if head in ("one", "ones") else _type_of(head, lex)
        desc = m.group("desc")
        if m.group("det") == "the" and not desc and head in ("one", "ones"):
            continue  # "the one that …" introduces, it does not point back
        kind: AnaphorKind = "weak" if desc else "anaphor"
        confidence = 0.8 if type_ else 0.6
        person = _EN_PERSON_AFTER.match(lowered, m.end())
        if person is not None and type_ != "person" and _type_of(person.group(1), lex) == "person":
            # the washer guy, the dishwasher tech: a person the thing tells apart (a cue, see state.coref.cues)
            span = (m.start(), person.end(1))
            out.append(Anaphor(text[span[0] : span[1]], span, "anaphor", "person", person.group(1), confidence=0.8))
            taken.append(span)
            continue
        out.append(
            Anaphor(
                text[m.start() : m.end()],
                m.span(),
                kind,
                type_,
                None if type_ is None else head,
                (desc,) if desc else (),
                confidence,
            )
        )
        taken.append(m.span())
    for m in lex.en_contrast_re.finditer(lowered):  # another hotel, a different restaurant
        if not _overlaps(m.span(), taken):
            head = m.group("head")
            out.append(
                Anaphor(text[m.start() : m.end()], m.span(), "contrast", _type_of(head, lex), head, confidence=0.5)
            )
            taken.append(m.span())
    pleonastic = [m.span() for m in lex.en_pleonastic_re.finditer(lowered)]
    for m in lex.en_pronoun_re.finditer(lowered):
        if _overlaps(m.span(), taken) or _overlaps(m.span(), pleonastic):
            continue
        type_ = lex.en_pronouns.get(m.group(0))
        out.append(Anaphor(text[m.start() : m.end()], m.span(), "anaphor", type_, None, confidence=0.5))
        taken.append(m.span())
    return out


_EN_PERSON_AFTER = re.compile(r"\s+([a-z]+)\b")


def _type_of(noun: str, lex: CorefLexicon) -> str | None:
    hits = lex.type_nouns.find(noun)
    return hits[0].value if hits else None


def find_anaphors(text: str, lex: CorefLexicon, taken: list[tuple[int, int]] | None = None) -> list[Anaphor]:
    """Anaphors in one sentence, in text order; `taken` spans (entity mentions) are skipped.

    >>> from state.coref.lexicon import load_coref_lexicon
    >>> lex = load_coref_lexicon().get()
    >>> [(a.text, a.kind, a.type) for a in find_anaphors("那个蓝色的盒子还有货吗？这家餐馆呢", lex)]
    [('那个蓝色的盒子', 'weak', 'product'), ('这家餐馆', 'anaphor', 'restaurant')]
    >>> [(a.text, a.kind, a.descriptors) for a in find_anaphors("I'll take the blue one", lex)]
    [('the blue one', 'weak', ('blue',))]
    """
    taken = list(taken or [])
    found = _chinese(text, lex, taken) if re.search(r"[\u4e00-\u9fff]", text) else []
    if re.search(r"[A-Za-z]", text):
        found.extend(_english(text, lex, taken))
    return sorted(found, key=lambda a: a.span)


def is_question(text: str, lex: CorefLexicon) -> bool:
    return bool(lex.question_words.find(text)) or any(m in text for m in lex.question_markers)


def zero_anaphor(text: str, lex: CorefLexicon) -> Anaphor | None:
    """A question about an attribute with no referent said (电话是多少？), or a place said relative to
    nothing named (在附近找一家酒店): the entity in focus is meant.

    >>> from state.coref.lexicon import load_coref_lexicon
    >>> zero_anaphor("那门票什么价？", load_coref_lexicon().get())
    Anaphor(text='门票', span=(1, 3), kind='zero', type='attraction', head=None, descriptors=(), confidence=0.5)
    """
    hits = lex.attributes.find(text)
    background = [h for h in hits if lex.background_cues.find(h.word)]
    if not is_question(text, lex):
        hits = background  # 在附近再找一家酒店: near what is in focus, asked or not
    if not hits:
        return None
    typed = [h for h in hits if h.value is not None]
    hit = background[0] if background else typed[0] if typed else hits[0]  # 附近有啥好吃的: near what is in focus
    return Anaphor(hit.word, (hit.start, hit.end), "zero", hit.value, None, confidence=0.5)


def has_backref_cue(text: str, lex: CorefLexicon) -> bool:
    """上一轮, 刚才, 上次, 之前, earlier, last time … widen the mention window (50 → 80)."""
    return bool(lex.backref_cues.find(text))


def question_rule_applies(text: str, lex: CorefLexicon) -> tuple[int, int] | None:
    """For a question whose verb is 问/咨询/确认: (clause start, verb position) of the clause that holds
    the verb; else None. 请问 (a polite "may I ask") is not the asking verb.

    >>> from state.coref.lexicon import load_coref_lexicon
    >>> lex = load_coref_lexicon().get()
    >>> question_rule_applies("他们问这个功能能不能下周上线吗？", lex)
    (0, 2)
    >>> question_rule_applies("请问这家酒店的地址？", lex) is None
    True
    """
    stripped = text.rstrip(" 。.!！~～")
    if not stripped or not any(stripped.endswith(m) for m in lex.question_markers):
        return None
    inside = [(h.start, h.end) for h in lex.question_not_verbs.find(text)]
    for verb in lex.question_verbs.find(text):
        if text[max(0, verb.start - 1) : verb.start] == "请" or any(a <= verb.start < b for a, b in inside):
            continue  # 请问 is polite; 问题, confirmation hold the verb without being it
        clause_start = max((text.rfind(b, 0, verb.start) + 1 for b in lex.clause_breaks), default=0)
        return clause_start, verb.start
    return None
