"""Entity mentions in one sentence: what later anaphors can point back to.

Found, in this order of trust (a later finder never overlaps an earlier one): entities of the
typed dictionary (by alias, longest first, so 测试环境 is never 环境), strong identifiers (order,
parcel, ticket, SKU), quoted names (「」“”《》""), names with a branch in brackets (东来顺(前门大街店)),
names ending in a type suffix (讲礼驴肉馆, 北京京仪大酒店, Grand Hyatt Hotel), names a trigger opens
and a terminator closes (推荐您去X用餐, 为您推荐X吧, X就很好), comma lists after a trigger (比如A, B,
C等), products and models no dictionary lists (华为Mate60, iPhone 15 Pro, 戴森吹风机;
`state.coref.open_names`, from word tags), capitalised English names, and people and organisations
spaCy names (Maria, Amazon). A name the suffix does not type is typed by the nearest type word
in the sentence (景点, 用餐, 门票 …), else by the type the conversation is about (`focus`).
Words that describe a mention (蓝色的, the blue) are kept with it for weak references later.

Pure functions over one sentence and the lexicon; no state.
"""

from __future__ import annotations

import re
from dataclasses import replace

from state.coref.categories import category_nouns
from state.coref.lexicon import CorefLexicon, DictEntity, unnamed_type
from state.coref.names import Named, chinese_names, core_name, overlaps, suffix_len, suffix_types
from state.coref.open_names import open_names
from state.coref.people import called_names, zh_people
from state.coref.phrases import full_phrases
from state.coref.taggers import zh_tokens

_QUOTED = re.compile(r"「([^」]{2,30})」|『([^』]{2,30})』|“([^”]{2,30})”|《([^》]{2,30})》|\"([^\"]{2,30})\"")
_EN_SUFFIX_NAME = r"((?:[A-Z][\w'&.-]*\s+){{0,4}}(?:{suffixes}))\b"
_EN_PLACE_AFTER = re.compile(r"[ ]((?:[A-Z][a-z]+)(?: [A-Z][a-z]+){0,2})\b(?![-'&])")
_EN_NOT_PLACES = frozenset(
    "I Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July "  # noqa: SIM905
    "August September October November December Today Tomorrow Yesterday".split()
)
_MORE_IDS = re.compile(
    r"\s*(?:和|、|,|，|及|以及|与|或|还有|and|or)\s*((?=[A-Z-]*\d)[A-Z0-9][A-Z0-9-]{3,})(?![A-Za-z0-9])"
)
# a capitalised run; one opened by a word in capitals (IBM Data Science, SPOTIFY USA) needs a second word
_EN_PROPER = re.compile(
    r"\b((?:[A-Z][a-z][\w'&-]*|[A-Z]{2,}(?=\s+[A-Z]))(?:\s+(?:of\s+|the\s+|&\s+)?(?!I\b)[A-Z][\w'&-]*){0,4})"
)
_NOT_NAME_WORDS = (
    "I I'm I'll I've I'd OK Okay Yes No Hi Hello Hey Thanks Thank Please Sorry Sure Mr Mrs Ms Dr "
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June "
    "July August September October November December The This That These Those It We You They He "
    "She Our Your My Try Visit Go See Check Maybe Perhaps Also Then Let Can Could Would Is Are Do Does "
    "Should Will Shall Did Has Have Had Was Were Am What When Where Why How Who Which Any Just So And But "
)
_EN_NOT_NAMES = frozenset(_NOT_NAME_WORDS.split())
_JOINED_CLAUSE = re.compile(r"[是的和在有了与及或也都还就被把给让]")
# words before a person's name that are no role: a shop or an app may be "called" or spoken "with"
_NOT_ROLE_WORDS = frozenset({"with", "told", "asked", "ask", "tell", "called", "named", "emailed", "contacted"})
_EN_PLACE_OF = re.compile(r"\b(?:in|at|near|from|to|of)\b", re.IGNORECASE)


BARE_IDENTIFIER = "identifier"  # the type of a number no keyword names; record-like references may take it
_KEYWORD_GAP = re.compile(r"(?:[\s#:：]|号码|编号|号|是|为|\bno\.?|\bnumber\b|\bid\b|\bcode\b|\bis\b)*$", re.IGNORECASE)


def _keyword_type(text: str, start: int, lex: CorefLexicon) -> str:
    """The record type a bare identifier's keyword names (case 418830 → ticket, 申请单号… → application),
    else `identifier`: the type word must end right before it, with only 号/编号/number/#/: between."""
    lead = text[max(0, start - 28) : start]
    for hit in sorted(lex.type_nouns.find(lead), key=lambda h: -h.end):  # "number" itself types nothing
        if hit.word.lower() != "number" and hit.value in lex.record_types and _KEYWORD_GAP.match(lead, hit.end):
            return str(hit.value)
    return BARE_IDENTIFIER


def _english_suffix_names(text: str, lex: CorefLexicon, taken: list[tuple[int, int]]) -> list[Named]:
    out: list[Named] = []
    en_suffixes = [s for s in lex.type_suffixes if s.isascii()]
    if en_suffixes:
        pattern = re.compile(_EN_SUFFIX_NAME.format(suffixes="|".join(map(re.escape, en_suffixes))))
        for m in pattern.finditer(text):
            located = _kept_words(text, m.span(1))
            if located is None or len(located[0]) < 2:
                continue
            words, span = located
            types = lex.type_suffixes[words[-1]]
            place = _EN_PLACE_AFTER.match(text, span[1])  # Hilton Garden Inn Seattle Downtown: the branch
            if place is not None and not set(place.group(1).split()) & _EN_NOT_PLACES:
                words, span = [*words, *place.group(1).split()], (span[0], place.end(1))
            name = text[span[0] : span[1]]
            if overlaps(span, taken):
                continue
            out.append(Named(name, " ".join(words), types, span, "suffix", 0.8))
            taken.append(span)
    return out


def _kept_words(text: str, span: tuple[int, int]) -> tuple[list[str], tuple[int, int]] | None:
    """The words of a capitalised run in `text[span]` after leading non-names (The, My …), and the
    span they cover in `text` itself; None when nothing is left or the run crosses a line break
    (a name never does, and the mention must be the text its span points at)."""
    hits = [(w.group(), w.start() + span[0], w.end() + span[0]) for w in re.finditer(r"\S+", text[span[0] : span[1]])]
    while hits and (hits[0][0] in _EN_NOT_NAMES or hits[0][0].islower()):  # Has the Dyson: Dyson
        hits.pop(0)
    if not hits:
        return None
    start, end = hits[0][1], hits[-1][2]
    if "\n" in text[start:end] or "\r" in text[start:end]:
        return None
    return [h[0] for h in hits], (start, end)


def _english_proper_names(text: str, taken: list[tuple[int, int]]) -> list[Named]:
    out: list[Named] = []
    for m in _EN_PROPER.finditer(text):
        span = m.span(1)
        located = _kept_words(text, span)
        if located is None or overlaps(span, taken):
            continue
        words, (start, end) = located
        joined = _JOINED_CLAUSE.search(text, start, end)
        if joined is not None:  # Young卡是信用卡: the name ends where a verb or particle joins it to a clause
            end = joined.start()
            words = text[start:end].split()
        name = text[start:end]
        sentence_start = not text[:start].strip() or text[:start].rstrip()[-1] in ".!?。！？"
        if (sentence_start or words[0].isupper()) and len(words) < 2:
            continue  # a capitalised first word is just the start of a sentence; VPN alone is a kind
        out.append(Named(name, " ".join(words), (), (start, end), "proper", 0.5 if len(words) < 2 else 0.6))
        taken.append((start, end))
    return out


_LETTER_PREFIX = re.compile(r"(?<![\w-])[A-Z]-$")


def _with_letter_prefix(text: str, named: Named) -> Named:
    """T-Mobile Go5G Plus, not Mobile Go5G Plus: a capital and a hyphen right before a name belong to it."""
    start = named.span[0]
    if named.dictionary or named.entity != named.surface or not _LETTER_PREFIX.search(text[max(0, start - 3) : start]):
        return named
    surface = text[start - 2 : named.span[1]]
    return replace(named, surface=surface, entity=surface, span=(start - 2, named.span[1]))


def _given_name(name: str, lex: CorefLexicon) -> bool:
    """One or two capitalised words opening with a common given name (Marcus, Beth Nakamura)."""
    words = name.split()
    return 1 <= len(words) <= 2 and words[0].isalpha() and words[0].lower() in lex.given_genders


def _after_person_word(text: str, start: int, lex: CorefLexicon) -> bool:
    """A role or kin word right before a capitalised name (my mentor Daniel Cho): the name is a person's."""
    before = text[:start].split()[-2:]
    if len(before) == 2 and before[1] in ("is", "was"):  # The 5B tenant is Harold Pike
        before = before[:1]
    word = before[-1].lower().strip(".,:") if before else ""
    return word in lex.open_names.en_person_before and word not in _NOT_ROLE_WORDS


_EDITION_AFTER = re.compile(r"[A-Za-z0-9\u4e00-\u9fff]{0,4}?(?:专业|企业|标准|旗舰|团队|基础|高级|个人|家庭|商业)版")
_CAPS_NAME = re.compile(
    r"(?<![\w-])[A-Z]{2,}(?:-[A-Z]{2,})+(?![\w-])"
)  # letters only: codes with a digit are identifiers
_WHO = re.compile(r",?\s+who\b")
_TITLE_WORDS = frozenset({"mr", "mrs", "ms", "miss", "dr", "prof", "spoke to"})


def _role_opened(named: Named, lex: CorefLexicon) -> Named:
    """Driver Marcus, Tech Ray Dominguez: a role word opening a capitalised run is no part of the name;
    the rest is a person, with the role as its kind (the driver, the other tech find it later)."""
    words = named.surface.split()
    if named.dictionary or len(words) < 2 or named.entity != named.surface or not named.surface.isascii():
        return named
    role = words[0].lower()
    roles = lex.open_names.en_person_before - _NOT_ROLE_WORDS - _TITLE_WORDS
    if role not in roles or not all(w[:1].isupper() for w in words[1:]):
        return named
    cut = named.surface.index(words[1])
    name = named.surface[cut:]
    span = (named.span[0] + cut, named.span[1])
    return replace(named, surface=name, entity=name, types=("person",), span=span, kinds=(*named.kinds, role))


_VERSION_AFTER = re.compile(r" ?v?\d+(?:\.\d+)+(?![\w.])")  # GlobalConnect 5.2, Zoom v6.1.4
_YEAR_BEFORE = re.compile(r"\b(?:19|20)\d\d $")  # a 2019 Honda CR-V
_CJK_PREFIX = re.compile(r"^[\u4e00-\u9fff]+(?=[A-Z])")


def _edges(text: str, named: Named, lex: CorefLexicon) -> Named:
    """Where an open name's span ends: a version number after it belongs to it (GlobalConnect 5.2), so
    does a model year before an English make and model (2019 Honda CR-V); a Chinese product word before
    a Latin brand and model (打印机HP LaserJet M428) is its kind, not part of its name."""
    if named.dictionary or named.source not in ("open", "proper") or named.entity != named.surface:
        return named
    start, end = named.span
    version = _VERSION_AFTER.match(text, end) if named.surface[-1:].isalpha() and named.surface.isascii() else None
    if version is not None:
        end = version.end()
    year = _YEAR_BEFORE.search(text, 0, start) if named.surface.isascii() and "-" in named.surface else None
    if year is not None and len(named.surface.split()) >= 2:
        start = year.start()
    prefix = _CJK_PREFIX.match(named.surface)
    kinds = named.kinds
    if prefix is not None and prefix.group() in lex.open_names.zh_product_heads:
        start, kinds = start + prefix.end(), (*kinds, prefix.group())
    if (start, end) == named.span:
        return named
    name = text[start:end]
    return replace(named, surface=name, entity=name, span=(start, end), kinds=kinds)


def _edition(text: str, named: Named) -> Named | None:
    """An edition's name starts after the verb or preposition before it (续费|专业版, 用|飞书企业版); an
    edition word alone (专业版) names no product, and is left for the references to one said before."""
    edition = _EDITION_AFTER.fullmatch(named.surface[-3:]) if named.source == "suffix" else None
    if edition is None:
        return named
    start = named.span[0]
    for token in zh_tokens(text):
        if token.start == start and token.tag.startswith(("v", "p")) and token.end < named.span[1]:
            start = token.end
    if named.span[1] - start <= 3:
        return None
    name = text[start : named.span[1]]
    return replace(named, surface=name, entity=name, span=(start, named.span[1]))


def _nearest_type(text: str, span: tuple[int, int], lex: CorefLexicon) -> str | None:
    best: tuple[int, str] | None = None
    for hit in lex.type_cues.find(text):
        if span[0] <= hit.start < span[1] or unnamed_type(lex, hit.value):
            continue  # a name is never an order or a booking: "my Uber Eats order", "a reservation at X"
        distance = span[0] - hit.end if hit.end <= span[0] else hit.start - span[1]
        between = text[hit.end : span[0]] if hit.end <= span[0] else text[span[1] : hit.start]
        if lex.background_cues.find(between) or _EN_PLACE_OF.search(between):
            continue  # X周边的酒店: the type word is about X's neighbours, not X; a hotel in Lisbon: where it is
        if distance <= 12 and (best is None or distance < best[0]):
            best = (distance, hit.value)
    return None if best is None else best[1]


def _used_as(text: str, span: tuple[int, int], lex: CorefLexicon) -> str | None:
    """The type a verb right after a name uses it as (X用餐, X尝尝, X住宿, X游玩)."""
    for hit in lex.type_cues.find(text[span[1] : span[1] + 6]):
        if hit.start <= 1 and hit.word in lex.type_verbs:
            return str(hit.value)
    return None


def _widen_to_focus(named: Named, types: tuple[str, ...], focus: str | None, lex: CorefLexicon) -> bool:
    """A place name whose suffix does not settle its type may be of the place type asked for."""
    if focus is None or focus in types or focus not in lex.place_types:
        return False
    return set(types) <= lex.place_types and _weak_suffix(named, lex)


def _weak_suffix(named: Named, lex: CorefLexicon) -> bool:
    """A one-character suffix (山, 楼, 居) or none: the name alone does not settle its type."""
    return named.source in ("suffix", "frame", "list", "branch") and suffix_len(core_name(named.surface), lex) <= 1


def _descriptors(text: str, span: tuple[int, int], lex: CorefLexicon) -> tuple[str, ...]:
    """Descriptors said with a mention: just before it in its phrase (蓝色的SKU-A12), else right after
    (SKU-A12（蓝色）)."""
    before = re.split(r"[，,。；;！？!?：:、]|和|与|及|以及|\band\b|\bor\b", text[max(0, span[0] - 10) : span[0]])[-1]
    found = [h.value for h in lex.descriptors.find(before)]
    if not found:
        after = text[span[1] : span[1] + 6]
        found = [h.value for h in lex.descriptors.find(after) if h.start <= 2]
    return tuple(dict.fromkeys(found))


def _issued(text: str, named: Named, lex: CorefLexicon) -> Named:
    """A bank or shop said with a thing it issues right after it (招商银行|信用卡, 京东|账号): the thing."""
    if named.dictionary or not (set(named.types) & (lex.place_types | {"organization"})):
        return named
    hit = next((h for h in lex.type_nouns.find(text[named.span[1] : named.span[1] + 6]) if h.start == 0), None)
    if hit is None or hit.value not in lex.issued_types:
        return named
    span = (named.span[0], named.span[1] + hit.end)
    name = text[span[0] : span[1]]
    return Named(name, name, (hit.value,), span, named.source, named.confidence)


_APPOSITION = re.compile(
    r"\s*[,，]?\s*(?:(?:is\s+)?(?:a|an|the|which is|it's|it is)\s+|是|型号是|型号|叫)?\s*$", re.IGNORECASE
)


_ID_KIND_GAP = re.compile(r"(?:[\s#:：]|号码|编号|号|是|为|\bno\.?|\bnumber\b|\bid\b|\bis\b)*$", re.IGNORECASE)
_ID_KIND_EN = re.compile(r"\b([A-Za-z]{3,})$")
_ID_KIND_ZH = re.compile(r"([\u4e00-\u9fff]{1,2})$")


def _identifier_kind(text: str, start: int, lex: CorefLexicon) -> tuple[str, ...]:
    """The noun that names what an identifier is (claim number CLM-448120 → claim, 票号999-… → 票,
    工单号IT-20931 → 工单): this claim, 这张票 then point to it."""
    lead = text[max(0, start - 24) : start]
    gap = _ID_KIND_GAP.search(lead)
    lead = lead[: gap.start()] if gap else lead
    if lead.isascii():
        m = _ID_KIND_EN.search(lead)
        return (m.group(1).lower(),) if m else ()
    tokens = zh_tokens(lead)
    last = tokens[-1].text if tokens else ""
    if _ID_KIND_ZH.fullmatch(last):
        return (last,)
    noun = next((h.word for h in lex.type_nouns.find(last) if h.end == len(last)), None)
    return (noun,) if noun else ()  # 数据库服务器DB-FIN-02: the type noun that ends the word before it


def _kinds(text: str, named: Named, lex: CorefLexicon) -> tuple[str, ...]:
    """The product or software word said right after a name (Sony WH-1000XM5 headphones, 飞书客户端);
    for an identifier, the noun said right before it (claim number CLM-448120)."""
    if named.source == "identifier":
        return _identifier_kind(text, named.span[0], lex)
    if named.dictionary:
        return ()
    after = text[named.span[1] : named.span[1] + 16]
    hit = next((h for h in lex.type_nouns.find(after) if h.start <= 1 and not after[: h.start].strip()), None)
    if hit is None or (hit.word.isascii() and after[hit.end : hit.end + 1].isalpha()):
        return _kind_before(text, named, lex)  # 石头G20，订单…: a word after a comma is no kind of it
    return (hit.word.lower(),)


def _kind_before(text: str, named: Named, lex: CorefLexicon) -> tuple[str, ...]:
    """扫地机器人石头G20, 相机索尼A7M4: a Chinese product word said right before a name is its kind."""
    if named.types == ("person",) or not _CJK_CHAR.match(text, max(0, named.span[0] - 1)) or named.span[0] == 0:
        return ()
    before = text[max(0, named.span[0] - 8) : named.span[0]]
    words = [h.word for h in lex.type_nouns.find(before) if h.end == len(before)]
    words += [w for w in lex.open_names.zh_product_heads if before.endswith(w)]
    return (max(words, key=len),) if words else ()


def _kind_word_before(kind: Named, named: Named) -> bool:
    """空气炸锅 found as a name right before 美的KZE5004: a kind word, all Chinese, said right before a
    name with a model number; the two are one thing, named by the model."""
    return (
        kind.span[1] == named.span[0]
        and kind.source == "open"
        and kind.types == named.types
        and all(_CJK_CHAR.match(c) for c in kind.entity)
        and any(c.isdigit() for c in named.entity)
    )


_CODE_LINK = re.compile(r"-[A-Za-z0-9]")


def _in_code(text: str, span: tuple[int, int]) -> bool:
    """Whether an ASCII word at `span` is one part of a hyphen-joined code (DB in DB-FIN-02, MQ in X-MQ-3)."""
    return bool(_CODE_LINK.match(text, span[1])) or (
        span[0] >= 2 and bool(re.fullmatch(r"[A-Za-z0-9]-", text[span[0] - 2 : span[0]]))
    )


def _head_type(text: str, span: tuple[int, int], lex: CorefLexicon) -> tuple[str, ...]:
    """The type of the type noun said right after a capitalised name (Chase Sapphire card, Globex
    account): the name is one of that kind."""
    after = text[span[1] : span[1] + 16]
    hit = next((h for h in lex.type_nouns.find(after) if h.start <= 1), None)
    if hit is None or not hit.word.isascii() or after[hit.end : hit.end + 1].isalpha() or unnamed_type(lex, hit.value):
        return ()  # my Uber Eats order: the name is no order
    return (str(hit.value),)


def _lead_type(named: Named, lex: CorefLexicon) -> tuple[str, ...]:
    """A capitalised name opened by a type word (Hotel Marlowe, Museum of Flight, Bank of the West)."""
    first = named.surface.split()[0]
    return lex.type_suffixes.get(first, ()) if first.isascii() and len(named.surface.split()) >= 2 else ()


def _appositions(text: str, found: list[Named], lex: CorefLexicon) -> list[Named]:
    """My router, a Netgear Nighthawk R7000 / 我的路由器是网件R7000: one thing; the name stays, with
    the product word said before it as its kind (and its type, when that is software)."""
    out: list[Named] = []
    for named in found:
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev.source == "open"
            and named.source in ("open", "proper")
            and any(h.word.lower() == prev.entity.lower().split()[-1] for h in lex.type_nouns.find(prev.entity[-12:]))
            and _APPOSITION.match(text[prev.span[1] : named.span[0]])
        ):
            kind = prev.entity.lower().split()[-1]
            types = prev.types if "software" in prev.types else named.types
            out[-1] = Named(
                named.surface,
                named.entity,
                types,
                named.span,
                named.source,
                named.confidence,
                named.descriptors,
                named.dictionary,
                tuple(dict.fromkeys((*named.kinds, kind))),
            )
            continue
        out.append(named)
    return out


def _titled(named: Named, lex: CorefLexicon, text: str = "") -> Named | None:
    """约王师傅, 骑手李师傅, 皮肤科孙医生, 财务部张总: a person named by a title is the surname and the title;
    a full name before the title (派单给李建国师傅, 更换为马俊老师) is the person, without the title."""
    if named.types != ("person",) or named.source not in ("suffix", "frame", "list") or not named.surface.isalnum():
        return named
    ends = [s for s in lex.type_suffixes if named.surface.endswith(s) and "person" in lex.type_suffixes[s]]
    title = max(ends, key=len, default="")
    if title and len(named.surface) - len(title) == 1 and lex.surnames and named.surface[0] not in lex.surnames:
        return None  # 再约师傅上门: a verb and the title, no person
    if not title or len(named.surface) - len(title) <= 1 or not re.fullmatch(r"[\u4e00-\u9fff]+", named.surface):
        return named
    full = _full_name_before(text, named.span[1] - len(title), lex) if text else None
    if full is not None and full[0] >= named.span[0]:
        return replace(named, surface=text[full[0] : full[1]], entity=text[full[0] : full[1]], span=full)
    # 张总, 李工: a one-character title follows the surname alone (那台扫地机器人总是…: no person)
    cut = len(named.surface) - len(title) - 1
    name = named.surface[cut:]
    if lex.surnames and name[0] not in lex.surnames:
        return None  # 理财经理: a job, not a person (财经理 is no surname and title)
    span = (named.span[0] + cut, named.span[1])
    if len(name) == 2 and text and _one_word(text, span):
        return None  # 卫生间施工: a surname and a one-character title that the tagger reads as one word
    if text and _inside_word(text, span[0]):
        return None  # 下周主任: the surname is the end of a word said before it
    return replace(named, surface=name, entity=name, span=(named.span[0] + cut, named.span[1]))


def _one_word(text: str, span: tuple[int, int]) -> bool:
    """Whether the tagger reads `span` as one word that is no person's name (施工, 汇总)."""
    return any(t.start == span[0] and t.end == span[1] and not t.tag.startswith("nr") for t in zh_tokens(text))


def _inside_word(text: str, at: int) -> bool:
    """Whether the tagger's word holding the character at `at` starts before it (下周|主任: 周)."""
    return any(t.start < at < t.end for t in zh_tokens(text))


def _full_name_before(text: str, at: int, lex: CorefLexicon) -> tuple[int, int] | None:
    """The span of a person's full name (a surname and one or two characters, a word jieba tags as a
    person's name) ending at `at`, where a title starts."""
    for token in zh_tokens(text):
        if token.end == at and token.tag.startswith("nr") and 2 <= len(token.text) <= 3:
            return (token.start, token.end) if token.text[0] in lex.surnames else None
    return None


def extract_mentions(text: str, lex: CorefLexicon, *, focus: str | None = None) -> list[Named]:
    """Entity mentions in one sentence, in text order.

    >>> from state.coref.lexicon import load_coref_lexicon
    >>> lex = load_coref_lexicon().get()
    >>> [(m.surface, m.types) for m in extract_mentions("推荐您去人均消费68元的讲礼驴肉馆用餐。", lex)]
    [('讲礼驴肉馆', ('restaurant',))]
    >>> [(m.surface, m.entity, m.source) for m in extract_mentions("请在测试环境验证后再同步到生产环境。", lex)]
    [('测试环境', '测试环境', 'dictionary'), ('生产环境', '生产环境', 'dictionary')]
    """
    taken: list[tuple[int, int]] = []
    found: list[Named] = []
    for hit in lex.entities.find(text):
        entity: DictEntity = hit.value
        span = (hit.start, hit.end)
        if hit.word.isascii() and _in_code(text, span):
            continue  # the alias DB inside the server name DB-FIN-02: part of another token
        if _EDITION_AFTER.match(text, span[1]):
            continue  # CRM in 云帆CRM企业版: part of an edition's name (a software suffix)
        found.append(Named(hit.word, entity.name, (entity.type,), span, "dictionary", 1.0, dictionary=True))
        taken.append(span)
    for pattern_type, pattern in lex.identifiers:
        for m in pattern.finditer(text):
            span = m.span(1)
            type_name = _keyword_type(text, span[0], lex) if pattern_type == BARE_IDENTIFIER else pattern_type
            if not overlaps(span, taken):
                found.append(Named(m.group(1), m.group(1), (type_name,), span, "identifier", 0.95))
                taken.append(span)
            at = span[1]
            while (more := _MORE_IDS.match(text, at)) is not None:  # 订单号A1和A2: both orders
                at = more.end(1)
                if not overlaps(more.span(1), taken):
                    found.append(Named(more.group(1), more.group(1), (type_name,), more.span(1), "identifier", 0.9))
                    taken.append(more.span(1))
    for m in _QUOTED.finditer(text):
        group = next(i for i in range(1, 6) if m.group(i))
        span = m.span(group)
        if not overlaps(span, taken) and m.group(group) not in lex.name_stop:
            found.append(Named(m.group(group), m.group(group), suffix_types(m.group(group), lex), span, "quote", 0.7))
            taken.append(span)
    found.extend(zh_people(text, lex, taken))
    found.extend(called_names(text, taken))
    found.extend(chinese_names(text, lex, taken))
    found.extend(_english_suffix_names(text, lex, taken))
    found.extend(open_names(text, lex, taken))
    found.extend(_english_proper_names(text, taken))
    for m in _CAPS_NAME.finditer(text):  # CORP-SECURE or CORP-GUEST: a network, a queue, a plan code
        if not overlaps(m.span(), taken):
            found.append(Named(m.group(), m.group(), (), m.span(), "proper", 0.6))
            taken.append(m.span())
    found = [_with_letter_prefix(text, n) for n in found]
    out = []
    phrases = full_phrases(text, sorted(found, key=lambda n: n.span), lex.open_names.en_not_products)
    phrases = [e for e in (_edition(text, n) for n in phrases) if e is not None]
    for named in (_edges(text, _role_opened(_issued(text, n, lex), lex), lex) for n in phrases):
        types = named.types
        used_as = (
            None if named.dictionary or named.source in ("open", "identifier") else _used_as(text, named.span, lex)
        )
        if used_as is not None and used_as not in types:
            types = (used_as,)  # 去钓鱼台国宾馆尝尝: a place to eat, whatever its name's suffix says
        elif focus is not None and _widen_to_focus(named, types, focus, lex):
            types = (*types, focus)  # 推荐您去汉拿山 when a restaurant was asked for: 山 does not decide
        if not types and named.source == "proper" and _after_person_word(text, named.span[0], lex):
            types = ("person",)  # my mentor Daniel Cho, crew lead Hector Ruiz
        elif named.source == "proper" and _given_name(named.entity, lex):
            types = ("person",)  # I'm Marcus with card services: a person, whatever type word is near
        elif not types and named.source == "proper" and _WHO.match(text, named.span[1]):
            types = ("person",)  # Jordan Blake, who focuses on strength
        if not types and named.source == "proper":
            types = _head_type(text, named.span, lex) or _lead_type(named, lex)  # Chase Sapphire card; Hotel Marlowe
        if len(types) != 1 and not named.dictionary:
            in_focus = focus if not types and named.source != "proper" else None  # Shanghai is no parcel
            hint = _nearest_type(text, named.span, lex) or in_focus
            if hint is not None and (not types or hint in types):
                types = (hint,)
        category = category_nouns(named.entity, lex)
        kinds = tuple(dict.fromkeys((*named.kinds, *_kinds(text, named, lex), *category)))
        if types == ("person",) and not named.dictionary and category:
            types = ()  # Confluence, a Tesla: a brand or product line the tagger took for a person
        descriptors = _descriptors(text, named.span, lex)
        out.append(
            Named(
                named.surface,
                named.entity,
                types,
                named.span,
                named.source,
                named.confidence,
                descriptors,
                named.dictionary,
                kinds,
            )
        )
    for i in range(len(out) - 1, 0, -1):
        kind, named = out[i - 1], out[i]
        if _kind_word_before(kind, named):
            out[i - 1 : i + 1] = [replace(named, kinds=tuple(dict.fromkeys((*named.kinds, kind.entity))))]
    return _appositions(text, [t for t in (_titled(n, lex, text) for n in out) if t is not None], lex)


_CJK_CHAR = re.compile(r"[\u4e00-\u9fff]")
_TITLE_END = re.compile(r"\b(Dr|Mr|Mrs|Ms|Prof)\.\s*$")
_TITLED_NAME = re.compile(r"^\s*([A-Z][a-z'\-]+(?:\s+[A-Z][a-z'\-]+)?)")


def titled_start(previous: str | None, text: str, found: list[Named]) -> list[Named]:
    """A sentence split after a title (…with Dr. | Hernandez on Friday): the capitalised words that open
    it are the person the title names (entity "Dr. Hernandez"); what was found there is replaced."""
    title = _TITLE_END.search(previous or "")
    name = _TITLED_NAME.match(text)
    if title is None or name is None or name.group(1).split()[0] in _EN_NOT_NAMES:
        return found
    said = re.sub(r"['’]s$", "", name.group(1))  # Dr. | Patel's next opening: Dr. Patel
    span = (name.start(1), name.start(1) + len(said))
    person = Named(said, f"{title.group(1)}. {said}", ("person",), span, "open", 0.6)
    return sorted([n for n in found if not overlaps(n.span, [span])] + [person], key=lambda n: n.span)
