"""Names said in passing, in Chinese: the places and things an agent recommends (讲礼驴肉馆, 东来顺(前门大街店)).

Four finders, each leaving alone what an earlier one took: a name with a branch in brackets
(东来顺(前门大街店)); a name ending in a type suffix (讲礼驴肉馆, 北京京仪大酒店, 颐和园), its left edge
where a boundary word ends (推荐您去人均68元的|讲礼驴肉馆); a name a trigger opens and a terminator closes
(推荐您去|北京大学|吧, 为您推荐|颐和园|吧); comma lists after a trigger (比如A, B, C等). Values of an
attribute (推荐菜有…, 地址是…) are not names. All words come from the coreference lexicon.

Pure functions over one sentence; no state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from state.coref.lexicon import CorefLexicon

_NAME_CHAR = r"[\u4e00-\u9fffA-Za-z0-9·&'\-]"
_IS_NAME_CHAR = re.compile(_NAME_CHAR)
_BRANCH = re.compile(rf"({_NAME_CHAR}{{1,24}})([（(][^（()）\s，。,]{{1,15}}[)）])")
_CLOCK = re.compile(r"\d{1,2}[:：]\d{2}")
_LEADING_DIGIT = re.compile(r"^[0-9０-９.]")
_ADDRESS = re.compile(
    r"\d+号|(?:省|市|区|县).*(?:路|街|道|巷|弄|号|村|镇|楼内|\d)|[省市]$|\d+(?:\.\d+)?(?:分|元|块|星|小时)|以上|以下|左右|之间"
)
_QUANTITY = re.compile(r"\d+(?:\.\d+)?(?:分|元|块|星|小时)")
# a description, not a name: 这家烤肉店, 那段长城 (something said before)
_DESCRIBED = re.compile(r"(?:这|那|该|此)[家个座所间段条]$")
# ... or a kind asked for: 一家粤菜馆, 一家便宜点的温泉酒店 (a short body after an indefinite)
_INDEFINITE = re.compile(r"(?:一|几|两|哪)?[家个座所间处](?P<mod>[^，。！？,!?了]{0,15}的)?$")  # 了: a clause between
_COUNTED = re.compile(r"^[一二两三四五六七八九十几半每某][个只件台部张条份位种款双套把笔支]")  # 一只基金: indefinite
_STAY = re.compile(r"(?:[一二两三四五六七八九十\d]+)(?:晚|夜)|[一二两三四五六七八九十]+[间套]")  # 7天酒店 is a brand
_PRICE_TIER = re.compile(r"\d+元档?(?![\d/每])")
_FUNCTION_CHARS = frozenset("是的了在把被给从到向和与或也都就还")
_BRANCH_TAIL = re.compile(r"[（(].*[)）]$")
_LIST_SPLIT = re.compile(r"[,，、]\s*")
_LIST_LEAD = re.compile(r"^(?:比如说?|例如|包括|还有|分别是|分别有|有(?![点些])|是|像|如)[:：]?")  # 有点, 有些: "a bit"
_LIST_LEAD_INSIDE = re.compile(r"(?:比如说?|例如|包括|还有|分别是|(?<![没])有(?![点些]))[:：]?")
_LIST_TAIL = re.compile(r"(?:等等|等)$")
_ATTR_BEFORE = re.compile(r"(?:地址|电话|评分|价格|门票|时间|人均消费|人均|号码|费用|票价)[是为在:：]?$")


@dataclass(frozen=True, slots=True)
class Named:
    """An entity mention in a sentence: surface, canonical entity, possible types, span and descriptors."""

    surface: str
    entity: str
    types: tuple[str, ...]
    span: tuple[int, int]
    source: str  # dictionary | identifier | quote | branch | suffix | frame | list | proper
    confidence: float
    descriptors: tuple[str, ...] = ()
    dictionary: bool = False
    kinds: tuple[str, ...] = ()  # product words said with it: headphones (Sony WH-1000XM5 headphones), router


_POINTED = re.compile(r"(?:这|那|该|此)(?:个|台|部|件|款|张|家|位|种|条)")
_POSSESSOR = re.compile(r"(?:它|他|她|这|那)(?:家|们|个)?$")


def _value_of_attribute(text: str, at: int, lex: CorefLexicon) -> bool:
    """Whether `at` follows an attribute word in its clause (推荐菜有…, 地址是…)."""
    clause = re.split(r"[，,。；;！？!?]", text[:at])[-1]
    return any(
        (h.value != "attraction" or h.word in ("门票", "票价")) and not lex.background_cues.find(h.word)
        for h in lex.attributes.find(clause[-8:])
    )


def _address_value(text: str, at: int) -> bool:
    """Whether `at` is inside an address or phone value (地址是北京市海淀区…)."""
    clause = re.split(r"[，,。；;！？!?]", text[:at])[-1]
    return bool(re.search(r"(?:地址|位置|电话|号码)", clause))


def core_name(name: str) -> str:
    """The name without its branch in brackets: 东来顺(前门大街店) → 东来顺."""
    return _BRANCH_TAIL.sub("", name)


def overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(span[0] < b and a < span[1] for a, b in taken)


def _trim_left(body: str, lex: CorefLexicon, keep: int, *, priced: bool = False) -> int:
    """Offset in `body` after the last boundary word that still leaves `keep` characters.

    A conjunction (和, 或者) is a boundary only where a name ends just before it (A酒店和B宾馆); a
    type noun only after a generic modifier (高档型酒店北京京仪大酒店, 餐馆喜蜗牛日料; not 和颐酒店…店).
    """
    best = 0
    for counted in _STAY.finditer(body):  # 还有一晚北京王府井希尔顿酒店: the stay, not the hotel's name
        if len(body) - counted.end() >= max(keep, 2):
            best = counted.end()
    for word in lex.name_boundaries:
        start = 0
        while (at := body.find(word, start)) >= 0:
            cut = at + len(word)
            if len(body) - cut >= keep and cut > best:
                best = cut
            start = at + 1
    for word in lex.name_conjunctions:
        start = 0
        while (at := body.find(word, start)) > 0:
            cut = at + len(word)
            before = body[:at]
            ends_name = before[-1:] in (")", "）") or any(before.endswith(s) for s in lex.type_suffixes)
            own = body[
                max(
                    (c for c in (body.rfind(w, 0, at) + len(w) for w in lex.name_boundaries if w in before)), default=0
                ) : at
            ]
            long_enough = len(own) >= (2 if len(word) > 1 or word == "或" else 3)
            if (ends_name or long_enough) and len(body) - cut >= max(keep, 2) and cut > best:
                best = cut
            start = at + 1
    for m in _QUANTITY.finditer(body) if not priced else ():  # 星卡19元套餐: the price is part of a plan's name
        if len(body) - m.end() >= keep and m.end() > best:
            best = m.end()
    if 0 < best < len(body) - keep and body[best - 1] in "这那一哪几每该此" and body[best] in "家个座所位处间":
        best += 1  # 这家全聚德…: the classifier belongs to the demonstrative, not the name
    for hit in lex.type_nouns.find(body[best:]):
        prefix = body[best : best + hit.start]
        cut = best + hit.end
        if (
            len(hit.word) >= 2
            and not hit.word.isascii()
            and len(body) - cut >= keep
            and (not prefix or any(p.match(prefix) for p in lex.generic_bodies))
        ):
            best = cut
    return best


def _generic(name: str, lex: CorefLexicon) -> bool:
    """家餐馆, 经济型酒店, 周边景点: a type word with a modifier, not a name."""
    core = core_name(name)
    for m in lex.suffix_pattern.finditer(core):
        if m.end() == len(core):
            body = core[: m.start()]
            return bool(body) and any(p.match(body) for p in lex.generic_bodies)
    return False


def _name_ok(name: str, lex: CorefLexicon, *, digits: bool = True, generic: bool = False, priced: bool = False) -> bool:
    core = core_name(name)
    return (
        lex.name_min <= len(name) <= lex.name_max + 16
        and lex.name_min <= len(core) <= lex.name_max
        and core not in lex.name_stop
        and (core not in lex.type_suffixes or core in lex.standalone_names)
        and not lex.not_in_names.search(core)
        and (digits or not _LEADING_DIGIT.match(core))
        and (priced or not _ADDRESS.search(core))
        and not _COUNTED.match(core)
        and (generic or not _generic(name, lex))
    )


def suffix_types(name: str, lex: CorefLexicon) -> tuple[str, ...]:
    core = core_name(name)
    for m in sorted(lex.suffix_pattern.finditer(core), key=lambda m: -m.end()):
        if m.end() == len(core):
            return lex.type_suffixes[m.group(0)]
    return ()


def demonstrated(text: str, start: int) -> bool:
    """Whether a demonstrative with its classifier stands right before `start` (这家, 那段, 该个)."""
    return _DESCRIBED.search(text, 0, start) is not None


def suffix_len(name: str, lex: CorefLexicon) -> int:
    return max((len(s) for s in lex.type_suffixes if name.endswith(s)), default=0)


def _described(text: str, span: tuple[int, int], suffix: int) -> bool:
    """这家烤肉店 (something said before) or 一家粤菜馆 / 一家便宜点的温泉酒店 (a kind asked for): a
    description, not a name. After an indefinite only a short body is a kind (一家汉庭酒店 is a name)."""
    if _DESCRIBED.search(text, 0, span[0]):
        return True
    kind = _INDEFINITE.search(text, 0, span[0])
    body = span[1] - span[0] - suffix
    return kind is not None and (body <= 1 or (body == 2 and kind.group("mod") is not None))


def _branch_names(text: str, lex: CorefLexicon, taken: list[tuple[int, int]]) -> list[Named]:
    out: list[Named] = []
    for m in _BRANCH.finditer(text):
        if _CLOCK.search(m.group(2)):
            continue  # MU5411（14:05起飞）: a time said in brackets is no branch
        body = m.group(1)
        start = m.start(1) + _trim_left(body, lex, lex.name_min)
        if start == m.start(1) and start > 0 and text[start - 1] in ")）":  # A(…店)和B(…店)
            start += next((len(c) for c in lex.name_conjunctions if body.startswith(c)), 0)
        span = (start, m.end())
        name = text[span[0] : span[1]]
        generic = False
        if not _name_ok(name, lex) and text[max(0, start - 2) : start] in ("那家", "这家"):
            span = (start - 2, m.end())  # 那家小馆(永安里店): a branch makes it a name, demonstrative and all
            name, generic = text[span[0] : span[1]], True
        if overlaps(span, taken) or not _name_ok(name, lex, generic=generic):
            continue
        types = suffix_types(name, lex) or tuple(sorted(lex.business_types))
        out.append(Named(name, name, types, span, "branch", 0.9))
        taken.append(span)
    return out


def _name_may_end(text: str, at: int, lex: CorefLexicon) -> bool:
    """Whether a name can end before `at`: punctuation, a particle, an attribute or type word follows."""
    if lex.name_followers.match(text, at):
        return True
    ahead = text[at : at + 5]
    return any(h.start == 0 for index in (lex.attributes, lex.type_nouns, lex.type_cues) for h in index.find(ahead))


def _suffix_names(text: str, lex: CorefLexicon, taken: list[tuple[int, int]]) -> list[Named]:
    candidates: list[tuple[tuple[int, int], str]] = []
    for m in lex.suffix_pattern.finditer(text):
        a, b = m.span()
        if m.group(0).isascii():
            continue  # English suffixes go through the capitalised-name rule
        j = a
        while j > 0 and a - j < lex.name_max and _IS_NAME_CHAR.match(text[j - 1]):
            j -= 1
        body = text[j:a]
        if len(m.group(0)) == 1 and b < len(text) and not _name_may_end(text, b, lex):
            continue  # 山药, 园区: the suffix character is inside a longer word
        if _address_value(text, a):
            continue
        priced = bool(set(lex.type_suffixes.get(m.group(0), ())) & lex.priced_types)
        start = j + _trim_left(body, lex, 1 if len(m.group(0)) < 2 else 0, priced=priced)
        if start == j and j > 0 and text[j - 1] in ")）":  # 味多美(良乡店)和开黑电竞烧烤主题餐厅
            start += next((len(c) for c in lex.name_conjunctions if body.startswith(c)), 0)
        if a - start == 1 and text[start] in _FUNCTION_CHARS:
            continue  # 说是店里漏装的: a copula or particle and the suffix, no name
        if a - start < 1 and m.group(0) not in lex.standalone_names:
            continue  # a bare suffix (馆, 面馆, 度假村) is no name; a whole-name one (故宫) said alone is
        tier = _PRICE_TIER.match(text, b) if priced else None  # 全家享套餐99元, 畅享套餐128元档: the tier's name
        candidates.append(((start, tier.end() if tier else b), m.group(0)))
    out: list[Named] = []
    # the longest candidate wins where two overlap (和颐酒店北京财满街店 over 和颐酒店)
    for span, suffix in sorted(candidates, key=lambda c: (-(c[0][1] - c[0][0]), -c[0][1])):
        name = text[span[0] : span[1]]
        tier = _PRICE_TIER.search(name) if not name.endswith(suffix) else None
        typed = name[: tier.start()] if tier else name  # the name up to its suffix, without a price tier
        priced = bool(set(suffix_types(typed, lex)) & lex.priced_types)
        if (
            overlaps(span, taken)
            or not _name_ok(typed, lex, priced=priced)
            or _described(text, span, len(name) - len(typed) + suffix_len(typed, lex))
        ):
            continue
        taken.append(span)
        out.append(Named(name, name, suffix_types(typed, lex), span, "suffix", 0.8))
    return out


def _frame_names(text: str, lex: CorefLexicon, taken: list[tuple[int, int]]) -> list[Named]:
    out: list[Named] = []
    strong = [(m, False) for m in lex.name_triggers.finditer(text)]
    weak = [(m, True) for m in lex.name_weak_triggers.finditer(text)]  # 去X吧: only with a terminator after X
    for m, needs_terminator in strong + weak:
        after = lex.attributes.find(text[m.start() : m.end() + 4])
        if any(h.start == 0 and h.end > m.end() - m.start() for h in after):
            continue  # 推荐菜都是…: the trigger is the start of an attribute word
        if _ATTR_BEFORE.search(text[max(0, m.start() - 5) : m.start()]) or _value_of_attribute(text, m.start(), lex):
            continue  # 地址是…, 推荐菜有…: a value, not a name
        start = m.end()
        end = start
        while (
            end < len(text)
            and end - start < lex.name_max + 8
            and (
                _IS_NAME_CHAR.match(text[end])
                or (text[end] == "." and text[end - 1 : end].isdigit())
                or (
                    text[end] == " "
                    and text[end - 1 : end].isascii()
                    and text[end + 1 : end + 2].isascii()
                    and text[end + 1 : end + 2].isalnum()
                )  # Temple Bar: a space inside a Latin name
            )
        ):
            end += 1  # 评分4.1分的X: a decimal stays in the run, the 的 cut below drops it
        run = text[start:end]
        stop = lex.name_terminators.search(run, 1)
        if stop is not None:
            run = run[: stop.start()]
        elif needs_terminator or (end < len(text) and _IS_NAME_CHAR.match(text[end])):
            continue  # ran past the length limit, or a weak trigger without a terminator: not a name
        if "的" in run:
            if _POSSESSOR.search(run[: run.rindex("的")]):
                continue  # 尝尝它家的酥皮海鲜清汤: something of an entity, not an entity
            shift = run.rindex("的") + 1
            start, run = start + shift, run[shift:]
        shift = _trim_left(run, lex, lex.name_min)
        if shift and needs_terminator:
            continue  # 去玩更好呢: a weak trigger must be followed by the name itself
        start, run = start + shift, run[shift:]
        span = (start, start + len(run))
        if not run or re.search(r"\d", run) or overlaps(span, taken) or not _name_ok(run, lex, digits=False):
            continue
        if _described(text, span, suffix_len(run, lex)):
            continue  # 推荐一家适合聚餐的粤菜馆: a kind asked for
        out.append(Named(run, run, suffix_types(run, lex), span, "frame", 0.6))
        taken.append(span)
    return out


def _list_names(text: str, lex: CorefLexicon, taken: list[tuple[int, int]]) -> list[Named]:
    out: list[Named] = []
    pieces: list[tuple[int, int, bool]] = []  # start, end, opened by a trigger
    pos = 0
    for part in [*_LIST_SPLIT.split(text)]:
        begin = text.find(part, pos)
        pos = begin + len(part)
        core = part.rstrip("。！？!?.；; ")
        tail = _LIST_TAIL.search(core)
        if tail:
            core = core[: tail.start()]
        lead = _LIST_LEAD.search(core) or _LIST_LEAD_INSIDE.search(core)
        opened = lead is not None or (bool(pieces) and pieces[-1][1] - pieces[-1][0] <= 1 and pieces[-1][2])
        offset = lead.end() if lead else 0
        pieces.append((begin + offset, begin + len(core), opened))
    run: list[tuple[int, int, bool]] = []

    def flush() -> None:
        if run and _value_of_attribute(text, run[0][0], lex):
            run.clear()  # 推荐菜有A, B, C: values of an attribute, not entities
        # a list: opened by a trigger, or one of its items a name found whole (A酒店, B, C); a clause that
        # merely holds a name (流水号是TX…，对方说没收到) makes no list
        if len(run) >= 2 and (run[0][2] or any((a, b) in taken for a, b, _ in run)):
            for a, b, _ in run:
                name = text[a:b]
                if not overlaps((a, b), taken):
                    out.append(Named(name, name, suffix_types(name, lex), (a, b), "list", 0.6))
                    taken.append((a, b))
        run.clear()

    for a, b, opened in pieces:
        name = text[a:b]
        pointed = _POINTED.match(name) is not None  # 这个系统昨天还正常: a reference and what is said of it
        if (
            a < b
            and not pointed
            and all(_IS_NAME_CHAR.match(c) or c in "()（）" for c in name)
            and _name_ok(name, lex, digits=False)
        ):
            if opened and run:
                flush()
            run.append((a, b, opened))
        else:
            flush()
    flush()
    return out


def chinese_names(text: str, lex: CorefLexicon, taken: list[tuple[int, int]]) -> list[Named]:
    """Names in `text` that overlap no span in `taken` (which the found spans are added to).

    >>> from state.coref.lexicon import load_coref_lexicon
    >>> lex = load_coref_lexicon().get()
    >>> [n.surface for n in chinese_names("比如全聚德烤鸭店(清华园店), 花家怡园, 海底捞火锅(牡丹园店)等。", lex, [])]
    ['全聚德烤鸭店(清华园店)', '海底捞火锅(牡丹园店)', '花家怡园']
    """
    found: list[Named] = []
    for finder in (_branch_names, _suffix_names, _frame_names, _list_names):
        found.extend(finder(text, lex, taken))
    return found
