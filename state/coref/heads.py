"""Antecedents no finder registered, found again from the session's recent sentences.

Two general gaps of name finding are closed here, lazily (only for a reference that needs it):

* a pointer and a noun (这张账单, 这盒葡萄, 这个班, that bill, that store) whose noun no registered
  mention holds: the antecedent is the noun phrase that ends in the same noun in a recent sentence
  (阳光玫瑰葡萄, 新东方少儿英语春季班, water bill, REI Boulder store): a run of nouns, names and
  numbers read from the word tags (jieba, spaCy), two words at least, in Chinese holding a proper
  noun, a Latin word or a number. The taggers run on a Chinese sentence only where it holds such a
  pointer (这/那 and a classifier, 该; English takes the word after this/that without tags), and on a
  recent sentence only where the noun looked for is said;
* an ordinal or 前者/后者 (第二张, 前一单, the second one) with no two entities named together: the
  items of the last enumeration said (一笔是398元，一笔是1299元; A和B; $15.49 and $22.99).

Pure functions over sentence texts; the taggers cache per text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from state.coref.taggers import Token, en_tokens, zh_tokens

_CJK = re.compile(r"[\u4e00-\u9fff]")
_ZH_POINTER = re.compile(r"(?:这|那|该)(?:一)?(?P<cls>[个台部件款张双副只条份套把盒笔单家间位辆本瓶袋包箱节门项份])?")
_EN_POINTER = re.compile(r"\b(?P<det>this|that)\s+(?=[a-z])", re.IGNORECASE)  # "the" would tag every turn
_EN_WORD = re.compile(r"[a-z]{3,}\b")
_EN_NOT_HEADS = frozenset(
    """is was are were will would can could should has have had does did the and but for not you she they
    one ones way kind much many time day week month year morning afternoon evening night weekend
    isn wasn doesn didn""".split()  # noqa: SIM905 - a word list reads better as text
)
_ZH_POINTER_GATE = re.compile(
    r"(?:这|那)一?[个台部件款张双副只条份套把盒笔单家间位辆本瓶袋包箱节门项]|该[\u4e00-\u9fff]"
)
# words of a Chinese name phrase: nouns, names, Latin words, numbers, noun-like verbs (考勤), attributes
_ZH_PHRASE_TAGS = ("n", "nr", "nz", "nt", "ns", "nrt", "nrfg", "eng", "j", "vn", "b", "m", "zg")
_ZH_NOT_IN_PHRASE = frozenset("的了在是和与跟或及我你他她它这那该")
_ZH_NAME_TAGS = frozenset({"nr", "nz", "nt", "ns", "nrt", "nrfg", "eng", "j"})
_LATIN_OR_DIGIT = re.compile(r"[A-Za-z0-9]")
_EN_PHRASE_TAGS = frozenset({"NOUN", "PROPN", "NUM", "ADJ", "X"})
_EN_LEAD_DROP = frozenset({"DET", "PRON"})
_EN_TIME_NOUNS = frozenset(
    {"today", "tomorrow", "yesterday", "tonight", "morning", "afternoon", "evening", "night", "week", "month", "year"}
)  # that branch today: a time word is no part of the noun
# 一笔是398元, 第二笔是…, 第一笔商户是…: items labelled by a count or an ordinal and 是
_ZH_ITEM = re.compile(
    r"(?:一|第[一二三四五六七八九十])[个台部件款张笔单份条只家项套][\u4e00-\u9fff]{0,3}?是(?P<item>[^，。；,;！？!?、]+)"
)
_ZH_AND = re.compile(r"(?:和|跟|与|以及|、)")
_EN_AND = re.compile(r"\s+and\s+", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Pointer:
    """A pointer and the noun after it: 这张|账单, that|store."""

    span: tuple[int, int]
    head: str


def pointers(text: str) -> list[Pointer]:
    """Pointer + noun references of a sentence (the noun as the tagger reads it)."""
    out: list[Pointer] = []
    if _CJK.search(text):
        if not _ZH_POINTER_GATE.search(text):
            return out  # the tagger runs only where a pointer with a classifier (or 该) is said
        tokens = zh_tokens(text)
        starts = {t.start: t for t in tokens}
        for m in _ZH_POINTER.finditer(text):
            token = starts.get(m.end())
            if token is not None and token.tag.startswith("n") and len(token.text) >= 2 - bool(m.group("cls")):
                out.append(Pointer((m.start(), token.end), token.text))
        return out
    for m in _EN_POINTER.finditer(text):  # no tagger here: the word after this/that, if no function word
        word = _EN_WORD.match(text, m.end())
        if word is not None and word.group().lower() not in _EN_NOT_HEADS:
            out.append(Pointer((m.start(), word.end()), word.group().lower()))
    return out
    tokens = en_tokens(text)
    starts = {t.start: i for i, t in enumerate(tokens)}
    for m in _EN_POINTER.finditer(text):
        i = starts.get(m.end())
        if i is None:
            continue
        while (
            i + 1 < len(tokens)
            and tokens[i].tag in ("NOUN", "PROPN")
            and tokens[i + 1].tag == "NOUN"
            and tokens[i + 1].text.lower() not in _EN_TIME_NOUNS
        ):
            i += 1  # the family plan: the last noun is the head
        if tokens[i].tag == "NOUN" and len(tokens[i].text) >= 3:
            out.append(Pointer((m.start(), tokens[i].end), tokens[i].text.lower()))
    return out


_OTHER = re.compile(
    r"\b[Tt]he other(?: one\b| [a-z]+\b)?|另(?:外)?一(?:个|台|单|张|笔|件|家|部|款|份|位|条)(?![一-鿿]{0,1}(?:吗|呢))"
)


def the_other(text: str) -> list[tuple[int, int]]:
    """The other one, the other ticket, 另一单, 另一个: the item of a pair not just spoken of."""
    return [m.span() for m in _OTHER.finditer(text)]


def head_phrase(sentence: str, head: str) -> tuple[tuple[int, int], str] | None:
    """The last name-like noun phrase of `sentence` that ends in `head` and is not itself pointed at:
    (span, phrase)."""
    if head not in sentence.lower():
        return None  # the noun is not said there: no tagging
    if _CJK.search(sentence) and _CJK.search(head):
        return _zh_phrase(sentence, head)
    if head.isascii() and not _CJK.search(sentence):
        return _en_phrase(sentence, head)
    return None


def _zh_phrase(sentence: str, head: str) -> tuple[tuple[int, int], str] | None:
    tokens = zh_tokens(sentence)
    found = None
    for i, token in enumerate(tokens):
        if not token.text.endswith(head):
            continue
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        if after is not None and after.start == token.end and after.tag.startswith("n") and _CJK.match(after.text):
            continue  # 丰巢快递|柜: the noun goes on, 快递 is not its head
        if _ZH_POINTER.search(sentence[max(0, token.start - 2) : token.start]):
            continue  # 这张|账单: a reference, not the name
        j = i
        while (
            j - 1 >= 0
            and tokens[j - 1].end == tokens[j].start
            and tokens[j - 1].tag.startswith(_ZH_PHRASE_TAGS)
            and not any(c in _ZH_NOT_IN_PHRASE for c in tokens[j - 1].text)
            and i - j < 4
        ):
            j -= 1
        span = (tokens[j].start, token.end)
        named = any(t.tag in _ZH_NAME_TAGS or _LATIN_OR_DIGIT.search(t.text) for t in tokens[j : i + 1])
        if named and (j < i or len(token.text) - len(head) >= 2):  # 阳光|玫瑰|葡萄, 春季班: a name, no 游玩时间
            found = (span, sentence[span[0] : span[1]])
    return found


def _en_phrase(sentence: str, head: str) -> tuple[tuple[int, int], str] | None:
    tokens = en_tokens(sentence)
    found = None
    for i, token in enumerate(tokens):
        if token.text.lower() != head or token.tag != "NOUN":
            continue
        if i + 1 < len(tokens) and tokens[i + 1].tag == "NOUN" and tokens[i + 1].text.lower() not in _EN_TIME_NOUNS:
            continue  # the power light|switch: the noun goes on
        j = i
        while j - 1 >= 0 and (tokens[j - 1].tag in _EN_PHRASE_TAGS or tokens[j - 1].text == "&"):
            j -= 1
        if j > 0 and tokens[j - 1].text.lower() in ("this", "that", "these", "those"):
            continue  # that bill: a reference, not the name
        words = tokens[j : i + 1]
        if len(words) < 2:
            continue
        found = ((words[0].start, token.end), sentence[words[0].start : token.end])
    return found


_PRICED_BY = re.compile(r"^\d+(?:\.\d+)?[元块]的")


def enumeration(sentence: str) -> list[str]:
    """The items a sentence lists (一笔是398元，一笔是1299元; 喜茶多肉葡萄和瑞幸生椰拿铁; $15.49 and
    $22.99), in order; [] when it lists fewer than two."""
    if _CJK.search(sentence):
        items = [m.group("item").strip() for m in _ZH_ITEM.finditer(sentence)]
        if len(items) >= 2:
            return items
        for clause in re.split(r"[，。；,;！？!?]", sentence):
            parts = _ZH_AND.split(clause)
            if len(parts) == 2:
                left = re.split(r"[的是了买点订有]", parts[0])[-1].strip()
                right = _PRICED_BY.sub("", parts[1].strip())  # 39元的腾讯王卡: the price modifies the item
                if len(left) >= 2 and len(right) >= 2:
                    return [left, right]
        return []
    for clause in re.split(r"[,;:.!?](?:\s|$)", sentence):
        parts = _EN_AND.split(clause.strip())
        if len(parts) == 2 and all(_en_item(p) for p in parts):
            return [_en_item(p) for p in parts]  # type: ignore[misc]
    return []


def _en_item(part: str) -> str | None:
    """A short noun phrase (an amount, a name), leading articles and possessives dropped."""
    tokens: list[Token] = list(en_tokens(part))
    while tokens and tokens[0].tag in _EN_LEAD_DROP:
        tokens = tokens[1:]
    if not tokens or len(tokens) > 5 or any(t.tag in ("VERB", "AUX", "PRON", "ADP") for t in tokens):
        return None
    if not any(t.tag in ("PROPN", "NUM") or t.text[:1] in "$€£¥" for t in tokens):
        return None
    return part[tokens[0].start : tokens[-1].end]
