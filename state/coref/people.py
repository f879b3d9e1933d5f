"""Chinese people named in the frames service agents use, where the word tags alone miss the name.

An agent introduces staff in a few fixed shapes, and later turns say 他/她, 那位, 上午那位 or the
surname and title (项主任) for them:

* a full name and a title after it: 上午是项文静主任, 下午是陈博副主任医师 (the name without the title);
* a role word, then 是/为 or nothing, then the name: 服务顾问是曹婷婷, 抄表员是蒋国栋, 美容师小葛
  (小 and a surname is a name too);
* names opening the clauses of a list the sentence announces with a colon: 两位私教：邓可欣主要带…，
  马骁主要带…;
* a kind and 叫 and a short name closing its clause (英短叫土豆，布偶叫年糕): a pet or a thing the
  customer calls by a name, kept with its kind word so that 英短那只 finds it later.

A name is a surname (the lexicon's list) and one or two characters, and it must not be one word
the tagger reads as a common noun (金牌教练 is no person). Pure functions over one sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from state.coref.lexicon import CorefLexicon
from state.coref.names import Named, overlaps
from state.coref.taggers import Token, zh_tokens

_BEFORE_NAME = "，。；：、,:;！？!? 是为叫找由和跟与的"  # what a name may follow in a title frame (组的周立新工程师)
_UNIT_END = "组部科室处队房务台"  # 桌面组, 财务部, 眼科, 机房, 财务, 前台: where staff work
_ROLE_END = "员人师官长任理问手生家叫主姨"  # 派件员, 代理人, 美容师, 主任, 经理, 顾问, 骑手, 医生, 业主, 阿姨; 她叫…
_LINK = "是为：:"
_OWNERS = frozenset("业房车店户")  # 业主, 房主, 车主, 店主, 户主
_AFTER_NAME = re.compile(r"$|[，。；！？,;!?、（(\s]|[给会来在说的负带今明下上去过也都已将]")  # 抄表员马建国 11 月
_PERSON_TAGS = ("nr",)
_NAME_WORD_TAGS = ("nr", "ns")  # jieba reads some full names as places (抄表员马建国: 马建国/ns)
_NOT_IN_NAMES = ("t", "p", "c", "u", "r", "f")  # time words, pronouns …; jieba tags given names v, d, q too
_NOT_NAME_CHARS = frozenset("有是在的了和我你他她它这那")
_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True, slots=True)
class _Frames:
    titles: frozenset[str]
    title_re: re.Pattern[str]  # any title, longest first
    gate: re.Pattern[str]  # a title, a role end before a surname, or a colon: where jieba may be needed


_FRAMES: dict[int, tuple[object, _Frames]] = {}  # per lexicon (a reload makes a new one)


def _frames(lex: CorefLexicon) -> _Frames:
    """Person titles (副主任医师 before 主任, from the lexicon's person suffixes) and the cheap gate
    that keeps the tagger off sentences no frame can match."""
    cached = _FRAMES.get(id(lex))
    if cached is not None and cached[0] is lex:
        return cached[1]
    words = {s for s, types in lex.type_suffixes.items() if "person" in types and len(s) >= 2}
    words |= {f"副{s}" for s in words} | {"医师", "主任医师", "副主任医师"}
    alternation = "|".join(map(re.escape, sorted(words, key=len, reverse=True)))
    surnames = "".join(sorted(lex.surnames)) or "\\u4e00-\\u9fff"
    gate = re.compile(rf"{alternation}|[{_ROLE_END}][{_LINK}]?[{surnames}小]|[{_UNIT_END}]的[{surnames}]|[：:]")
    frames = _Frames(frozenset(words), re.compile(alternation), gate)
    _FRAMES.clear()
    _FRAMES[id(lex)] = (lex, frames)
    return frames


def _one_common_word(tokens: tuple[Token, ...], span: tuple[int, int]) -> bool:
    """The span is a single word the tagger reads as something other than a name (金牌, 数学), or holds
    a time word, verb or function word (周四有副主任医师: no person 周四有)."""
    inside = [t for t in tokens if span[0] <= t.start and t.end <= span[1]]
    touching = [t for t in tokens if t.start < span[1] and span[0] < t.end]
    if any(t.tag.startswith(_NOT_IN_NAMES) and not t.tag.startswith(_PERSON_TAGS) for t in touching):
        return True
    return len(inside) == 1 and not inside[0].tag.startswith(_NAME_WORD_TAGS)


def _name_ok(name: str, lex: CorefLexicon) -> bool:
    if not all(_CJK.fullmatch(c) for c in name) or _NOT_NAME_CHARS & set(name):
        return False
    if name[0] == "小" and len(name) == 2:
        return name[1] in lex.surnames  # 小葛
    return 2 <= len(name) <= 3 and name[0] in lex.surnames and name not in lex.name_stop


def _titled_names(text: str, lex: CorefLexicon, tokens: tuple[Token, ...]) -> list[tuple[int, int]]:
    out = []
    for m in _frames(lex).title_re.finditer(text):
        for size in (3, 2):
            start = m.start() - size
            if start < 0 or (start > 0 and text[start - 1] not in _BEFORE_NAME + _ROLE_END + _UNIT_END):
                continue
            span = (start, m.start())
            if _name_ok(text[start : m.start()], lex) and not _one_common_word(tokens, span):
                out.append(span)
                break
    return out


def _role_names(text: str, lex: CorefLexicon, tokens: tuple[Token, ...]) -> list[tuple[int, int]]:
    out = []
    for i, ch in enumerate(text):
        if ch not in _ROLE_END or i + 1 >= len(text) or (ch == "主" and text[i - 1 : i] not in _OWNERS):
            continue  # 主 ends a role only as an owner (业主是黄志强), never in 项主任
        at = i + 1 + (text[i + 1] in _LINK)
        for size in (3, 2):
            span = (at, at + size)
            if span[1] > len(text) or _AFTER_NAME.match(text, span[1]) is None:
                continue
            if _name_ok(text[span[0] : span[1]], lex) and not _one_common_word(tokens, span):
                out.append(span)
                break
    return out


def _unit_names(text: str, lex: CorefLexicon, tokens: tuple[Token, ...]) -> list[tuple[int, int]]:
    """机房的郑凯, 桌面组的方思雨: a name after a team or place and 的, one word the tagger reads as a
    person or, at three characters, as a noun (方思雨/n); 财务部的方案 is no person."""
    return [
        (t.start, t.end)
        for t in tokens
        if t.start >= 2
        and text[t.start - 1] == "的"
        and text[t.start - 2] in _UNIT_END
        and (t.tag.startswith(_PERSON_TAGS) or (t.tag == "n" and len(t.text) == 3))
        and _name_ok(t.text, lex)
        and _AFTER_NAME.match(text, t.end) is not None
    ]


def _listed_names(text: str, lex: CorefLexicon, tokens: tuple[Token, ...]) -> list[tuple[int, int]]:
    colon = max(text.find("："), text.find(":"))
    if colon < 0:
        return []
    return [
        (t.start, t.end)
        for t in tokens
        if t.start > colon
        and t.tag.startswith(_PERSON_TAGS)
        and text[t.start - 1] in "：:，,；;"
        and _name_ok(t.text, lex)
    ]


def zh_people(text: str, lex: CorefLexicon, taken: list[tuple[int, int]]) -> list[Named]:
    """People named in a sentence by the frames of the module doc, overlapping nothing in `taken`
    (extended with what is found).

    >>> from state.coref.lexicon import load_coref_lexicon
    >>> lex = load_coref_lexicon().get()
    >>> [n.entity for n in zh_people("周二有两位医生出诊：上午是项文静主任，下午是陈博副主任医师。", lex, [])]
    ['项文静', '陈博']
    >>> [n.entity for n in zh_people("好的，服务顾问是曹婷婷。", lex, [])]
    ['曹婷婷']
    """
    if not _CJK.search(text) or not _frames(lex).gate.search(text):
        return []  # no frame can match: the tagger stays off
    tokens = zh_tokens(text)
    spans = _titled_names(text, lex, tokens) + _role_names(text, lex, tokens) + _listed_names(text, lex, tokens)
    spans += _unit_names(text, lex, tokens)
    found: list[Named] = []
    for span in sorted(set(spans)):
        if not overlaps(span, taken):
            name = text[span[0] : span[1]]
            found.append(Named(name, name, ("person",), span, "open", 0.7))
            taken.append(span)
    return found


def full_name_of(surface: str, people: list[str], lex: CorefLexicon) -> str | None:
    """The full name a surname and title stand for (项主任 for 项文静, 严师傅 for 严德胜): the latest of
    `people` (names said before, oldest first) with that surname and no title of its own.

    >>> from state.coref.lexicon import load_coref_lexicon
    >>> full_name_of("项主任", ["陈博", "项文静"], load_coref_lexicon().get())
    '项文静'
    """
    titles = _frames(lex).titles
    if len(surface) < 3 or surface[0] not in lex.surnames or surface[1:] not in titles:
        return None
    for name in reversed(people):
        if name[0] == surface[0] and _name_ok(name, lex) and not any(name.endswith(t) for t in titles):
            return name
    return None


_CALLED = re.compile(r"(?P<kind>[\u4e00-\u9fff]{2,3})叫(?P<name>[\u4e00-\u9fff]{2,3})(?=$|[，。；、,;！？!?\s])")
_NOT_CALLED = frozenset({"什么", "啥", "哪个", "多少", "我", "你", "他", "她", "它"})


def called_names(text: str, taken: list[tuple[int, int]]) -> list[Named]:
    """Names given with 叫 after a kind (英短叫土豆): untyped, with the kind word as their kind.

    >>> [(n.entity, n.kinds) for n in called_names("我家两只猫，英短叫土豆，布偶叫年糕", [])]
    [('土豆', ('英短',)), ('年糕', ('布偶',))]
    """
    found: list[Named] = []
    for m in _CALLED.finditer(text):
        span = m.span("name")
        kind = m.group("kind")
        if m.group("name") in _NOT_CALLED or kind[-1] in _NOT_NAME_CHARS or overlaps(span, taken):
            continue
        found.append(Named(m.group("name"), m.group("name"), (), span, "frame", 0.6, kinds=(kind,)))
        taken.append(span)
    return found
