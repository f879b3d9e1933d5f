"""Entities no dictionary lists: products and models, organisations and people, found from word tags.

The typed dictionary knows a project's own things (环境, 接口 …); a customer names what they bought
(华为Mate60, iPhone 15 Pro, 戴森吹风机, the blender I ordered), the shop or carrier (京东, Amazon) and
people (Maria from sales). These are found from the words' tags (`state.coref.taggers`: jieba for
Chinese, spaCy's small English pipeline) plus a few patterns, all words from the lexicon's
`open_names` section:

* a model: a run of Latin words and numbers holding a digit or an inner capital (Mate60, 14 Pro,
  ThinkPad X1 Carbon), with the brand word right before it (华为, 小米, Dell): a product;
* a brand and a product word (戴森|吹风机, 海尔|冰箱, Bose headphones): a product;
* what was bought or is owned (买了一件羽绒服, 我的电脑, I ordered a blender, my laptop): the
  product word itself;
* an organisation: a word jieba tags as one, or a name before an organisation word (顺丰|快递,
  小米|客服, Amazon support); a person: proper nouns beside a person cue (Maria from sales,
  told Maria, Mr Chen; a Chinese person is found by the name rules: 张经理, 小王).

The taggers run only on sentences that may hold such a name (a model-like word, a product,
purchase or organisation word, a capitalised word beside a person cue): most turns cost nothing.

Found names are `Named` with source `open`; they never overlap a span taken by a more trusted finder.
Pure functions over one sentence; the taggers cache per text.
"""

from __future__ import annotations

import re

from state.coref.lexicon import CorefLexicon, OpenNames
from state.coref.names import Named, overlaps
from state.coref.taggers import Token, en_tokens, zh_tokens

_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")
_LATIN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9+\-]*")
_DIGIT = re.compile(r"\d")
_CUE_NAME = re.compile(r"\b(?P<name>[A-Z][a-z]+)(?:\s+[A-Z][a-z]+)*\b")
_CODE = re.compile(r"[A-Z]+-?\d+[A-Z0-9]*")  # FS-02, R7000
_MODEL_TOKEN = re.compile(
    r"\b(?=[A-Za-z-]*\d)(?=[\d-]*[A-Za-z])[A-Za-z0-9\-]{2,}\b"  # hyphens allowed: NAS-04
    r"|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*|\b[A-Z][A-Za-z]+ \d+\b"
)
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]|^[A-Z]{2,}[a-z]|^[A-Z][A-Za-z]*\d|\d[A-Za-z]")


def _model_like(words: list[str], lex: OpenNames) -> bool:
    """Whether a run of Latin words reads as a model: a digit or a camel-case word (iPhone, MacBook)."""
    real = [w for w in words if w.lower() not in lex.model_words and not lex.units.match(w)]
    if lex.units.match("".join(words)):
        return False  # 60|G: a quantity split in two
    if not real or not any(_LATIN.search(w) for w in words):
        return False  # 7天: a number alone is no model
    return any(_DIGIT.search(w) or _INNER_CAPITAL.search(w) for w in real)


def _named(text: str, span: tuple[int, int], type_: str, confidence: float) -> Named:
    surface = text[span[0] : span[1]]
    return Named(surface, surface, (type_,), span, "open", confidence)


def _latin_runs(tokens: tuple[Token, ...], text: str) -> list[tuple[int, int, list[str]]]:
    """Maximal runs of Latin words and numbers (single spaces or hyphens between them): (first, last
    token, words)."""
    runs: list[tuple[int, int, list[str]]] = []
    i = 0
    while i < len(tokens):
        if not _LATIN_WORD.fullmatch(tokens[i].text):
            i += 1
            continue
        j = i
        while j + 1 < len(tokens):
            nxt = tokens[j + 1]
            if _LATIN_WORD.fullmatch(nxt.text) and nxt.start - tokens[j].end <= 1:
                j += 1
            elif nxt.text in (" ", "-") and j + 2 < len(tokens) and _LATIN_WORD.fullmatch(tokens[j + 2].text):
                j += 2
            else:
                break
        words = [t.text for t in tokens[i : j + 1] if t.text.strip() and t.text != "-"]
        runs.append((i, j, words))
        i = j + 1
    return runs


def _counted_line(tokens: tuple[Token, ...], first: int, last: int, words: list[str]) -> bool:
    """One word in capitals right after a count and right before a Chinese noun (一个PAX衣柜): the
    name of a product line said with its kind."""
    counted = first > 0 and tokens[first - 1].tag in ("m", "q", "mq")
    noun = last + 1 < len(tokens) and tokens[last + 1].tag == "n" and len(tokens[last + 1].text) >= 2
    glued = noun and tokens[last + 1].start == tokens[last].end
    return counted and glued and len(words) == 1 and words[0].isupper() and words[0].isalpha() and len(words[0]) >= 3


def _zh_brand(tokens: tuple[Token, ...], i: int, lex: OpenNames, stop: frozenset[str]) -> int | None:
    """The index of a brand word right before token `i` (华为 before Mate60, 戴森 before 吹风机)."""
    if i == 0:
        return None
    prev = tokens[i - 1]
    if prev.end != tokens[i].start or not _CJK.match(prev.text) or len(prev.text) < 2:
        return None
    counted = i >= 2 and tokens[i - 2].tag in ("m", "q", "mq")  # 一件|安踏|卫衣: whatever jieba calls the brand
    if (prev.tag not in lex.zh_brand_tags and not (counted and prev.tag in ("v", "a", "nr"))) or prev.text in stop:
        return None
    return None if _zh_head(prev, lex, stop) else i - 1


def _zh_brand_run(tokens: tuple[Token, ...], i: int, lex: OpenNames, stop: frozenset[str]) -> int | None:
    """The brand before a product word, allowing one one-character noun between them (苏泊尔|电|压力锅):
    jieba splits a compound product word and leaves its first character alone."""
    brand = _zh_brand(tokens, i, lex, stop)
    if brand is not None or i < 2:
        return brand
    glue = tokens[i - 1]
    if len(glue.text) != 1 or not _CJK.match(glue.text) or not glue.tag.startswith("n") or glue.end != tokens[i].start:
        return None
    return _zh_brand(tokens, i - 1, lex, stop)


def _zh(text: str, lex: CorefLexicon, taken: list[tuple[int, int]]) -> list[Named]:
    ol = lex.open_names
    tokens = zh_tokens(text)
    out: list[Named] = []
    stop = lex.name_stop | ol.zh_not_brands

    def add(span: tuple[int, int], type_: str, confidence: float) -> None:
        if span[1] > span[0] and not overlaps(span, taken):
            out.append(_named(text, span, type_, confidence))
            taken.append(span)

    for first, last, words in _latin_runs(tokens, text):
        if _counted_line(tokens, first, last, words):  # 一个PAX衣柜, 一张MALM床架: a product line and its noun
            add((tokens[first].start, tokens[last + 1].end), "product", 0.7)
            continue
        if not _model_like(words, ol) or (first > 0 and tokens[first - 1].text in ol.zh_code_cues):
            continue  # 报E15, 提示0x80070005: an error code, not a model
        start = first
        if first > 0 and _zh_head(tokens[first - 1], ol, stop):  # 兄弟打印机|HL-2260, 小天才电话手表|Z9
            start = first - 1
        # 苏泊尔|电|压力锅|CYSB50: the brand before a product word jieba split, as for a product word alone
        brand = _zh_brand_run(tokens, start, ol, stop) if start < first else _zh_brand(tokens, start, ol, stop)
        start = start if brand is None else brand
        after = lex.type_nouns.find(tokens[last + 1].text) if last + 1 < len(tokens) else []
        typed = after[0].value if after and after[0].word == tokens[last + 1].text else "product"  # 金蝶K3|系统
        add((tokens[start].start, tokens[last].end), typed, 0.8)
    for i, token in enumerate(tokens):
        if _zh_head(token, ol, stop):
            brand = _zh_brand_run(tokens, i, ol, stop)
            if brand is not None:
                add((tokens[brand].start, token.end), "product", 0.75)
            elif _zh_owned(tokens, i, ol):
                add((token.start, token.end), "product", 0.6)
        elif _fused_brand(token, ol, stop):
            add((token.start, token.end), "product", 0.7)  # 格力空调 as one word
        elif token.text in ol.zh_org_words:
            run_start = _zh_noun_run(tokens, i, ol, stop)  # 顺丰|快递, 老乡|鸡|外卖: the nouns before it
            if run_start is not None:
                add((tokens[run_start].start, tokens[i - 1].end), "organization", 0.7)
        elif token.tag == "nt" and len(token.text) >= 2 and token.text not in stop:
            add((token.start, token.end), "organization", 0.6)
        elif token.tag == "nr" and 2 <= len(token.text) <= 3 and _zh_person(tokens, i, ol):
            add((token.start, token.end), "person", 0.7)
    return out


def _zh_head(token: Token, lex: OpenNames, stop: frozenset[str]) -> bool:
    """A product word: listed (吹风机, 冰箱), or a noun ending in a thing's character (豆浆机, 卫衣, 运动裤)."""
    if token.text in lex.zh_product_heads:
        return True
    return (
        token.tag.startswith("n")
        and 2 <= len(token.text) <= 4
        and token.text[-1] in lex.zh_product_chars
        and token.text not in stop
    )


_ZH_NAME_PART_TAGS = frozenset({"z", "vn"})  # 麻辣烫 is a "status word" to jieba, inside 杨国福麻辣烫


def _zh_noun_run(tokens: tuple[Token, ...], i: int, lex: OpenNames, stop: frozenset[str]) -> int | None:
    """The first of up to three nouns right before token `i`, together two characters or more, none a
    stop word (老乡|鸡 before 外卖); None when there is none."""
    first = None
    j = i - 1
    while (
        j >= 0
        and i - j <= 3
        and tokens[j].end == tokens[j + 1].start
        and (tokens[j].tag in lex.zh_brand_tags or tokens[j].tag in _ZH_NAME_PART_TAGS)
        and _CJK.match(tokens[j].text)
        and tokens[j].text not in stop
    ):
        first = j
        j -= 1
    if first is None or tokens[i - 1].end - tokens[first].start < 2:
        return None
    return first


def _fused_brand(token: Token, lex: OpenNames, stop: frozenset[str]) -> bool:
    """A word that is a brand and a product word in one (格力空调, 华为手机)."""
    if token.tag not in lex.zh_brand_tags or token.tag == "eng" or len(token.text) < 4 or token.text in stop:
        return False
    heads = [h for h in lex.zh_product_heads if token.text.endswith(h) and len(token.text) - len(h) >= 2]
    return bool(heads) and token.text[: -max(map(len, heads))] not in stop


def _zh_person(tokens: tuple[Token, ...], i: int, lex: OpenNames) -> bool:
    """客户经理|王丽, 王丽|说: a name jieba tags as a person's, with a title before it or a cue after it."""
    before = tokens[i - 1].text if i > 0 else ""
    after = tokens[i + 1].text if i + 1 < len(tokens) else ""
    return any(before.endswith(t) for t in lex.zh_person_titles) or after in lex.zh_person_cues


_ZH_ROLE_END = "员人师官长任理问"  # 信贷员, 代理人, 规划师, 专员, 主任, 经理, 顾问: the end of a role word
_ZH_PERSON_TAGS = frozenset({"nr", "nrfg", "nrt"})


def _zh_role_people(text: str, lex: CorefLexicon, taken: list[tuple[int, int]]) -> list[Named]:
    """信贷员刘欣, 保险代理人吴芳: a name jieba tags as a person's, opening with a surname, right after a
    word that ends like a role. The pattern runs first; jieba only where it matches."""
    out: list[Named] = []
    starts = [i for i in range(1, len(text)) if text[i - 1] in _ZH_ROLE_END and text[i] in lex.surnames]
    if not starts:
        return out
    for token in zh_tokens(text):
        if token.start in starts and token.tag in _ZH_PERSON_TAGS and 2 <= len(token.text) <= 3:
            span = (token.start, token.end)
            if not overlaps(span, taken):
                out.append(_named(text, span, "person", 0.7))
                taken.append(span)
    return out


def _zh_owned(tokens: tuple[Token, ...], i: int, lex: OpenNames) -> bool:
    """买了一件|羽绒服, 我的|电脑: a product word after a purchase or a possessive (a classifier between)."""
    j = i - 1
    while j >= 0 and (tokens[j].tag in ("m", "q", "mq") or tokens[j].text in lex.zh_fillers):
        j -= 1
    before = "".join(t.text for t in tokens[max(0, j - 1) : j + 1])
    return j >= 0 and any(before.endswith(cue) for cue in lex.zh_purchase)


def _en(text: str, lex: CorefLexicon, taken: list[tuple[int, int]]) -> list[Named]:
    ol = lex.open_names
    tokens = en_tokens(text)
    out: list[Named] = []

    def add(span: tuple[int, int], type_: str, confidence: float) -> None:
        if span[1] > span[0] and not overlaps(span, taken):
            out.append(_named(text, span, type_, confidence))
            taken.append(span)

    i = 0
    while i < len(tokens):  # brand + model (+ product word): iPhone 15 Pro, Dell XPS 13, Bose headphones
        tok = tokens[i]
        coded = _LATIN_WORD.fullmatch(tok.text) and (_INNER_CAPITAL.search(tok.text) or _CODE.fullmatch(tok.text))
        quantity = i > 0 and bool(ol.units.match(tokens[i - 1].text + tok.text))  # 5 GHz: a unit, no brand
        if (tok.tag != "PROPN" and not coded) or quantity or _shop_called(tokens, i, lex):
            i += 1
            continue
        j = i
        while j + 1 < len(tokens) and (
            tokens[j + 1].tag in ("PROPN", "NUM", "X")
            or tokens[j + 1].text.lower() in ol.model_words
            or (_LATIN_WORD.fullmatch(tokens[j + 1].text) and _DIGIT.search(tokens[j + 1].text))
            or (tokens[j + 1].start == tokens[j].end and tokens[j + 1].text.isalnum())  # 85|t: one word
        ):
            j += 1
        words = [t.text for t in tokens[i : j + 1]]
        if tok.text.lower() in ol.en_not_brands:
            i = j + 1
            continue  # Version 9.12, Build 2201: a release, not a product
        nxt = tokens[j + 1] if j + 1 < len(tokens) else None
        software = nxt is not None and nxt.text.lower() in ol.sw_en_heads  # the GlobalProtect client
        head = nxt is not None and (
            nxt.text.lower() in ol.en_product_heads
            or (
                nxt.tag == "NOUN" and nxt.text.lower() not in ol.en_not_products | ol.en_org_words | ol.en_run_breaks
            )  # Taco Loco tonight: a time word is no product word
        )
        if _model_like(words, ol):
            before = tokens[i - 1].text.lower() if i > 0 else ""
            kind = lex.type_nouns.find(before)  # the file server FS-02: a server
            typed = kind[0].value if kind and kind[0].word.lower() == before else "product"
            add((tok.start, tokens[j].end), "software" if software else typed, 0.8)
        elif software and not all(w.isupper() and len(w) <= 4 for w in words):  # the VPN client: a kind
            add((tok.start, tokens[j].end), "software", 0.75)
        elif head and tok.text.lower() not in ol.en_not_brands:
            add((tok.start, tokens[j + 1].end), "product", 0.75)
        i = j + 1
    for k, tok in enumerate(tokens):  # what was bought or is owned: I ordered a blender, my laptop
        if tok.text.lower() not in ol.en_purchase and tok.text.lower() not in ol.en_possessives:
            continue
        j = k + 1
        while j < len(tokens) and tokens[j].text.lower() in ol.en_fillers:
            j += 1
        last = None
        while (
            j < len(tokens)
            and tokens[j].tag in ("ADJ", "NOUN", "PROPN", "NUM")
            and tokens[j].text.lower() not in ol.en_run_breaks
        ):
            if tokens[j].tag in ("NOUN", "PROPN"):
                last = j
            j += 1
        if last is None or tokens[last].text.lower() in ol.en_not_products:
            continue
        owned = tok.text.lower() in ol.en_possessives
        if owned and tokens[last].text.lower() not in ol.en_product_heads:
            continue  # my order, my account: a possessive alone only makes a product of a product word
        start = next(t for t in range(k + 1, last + 1) if tokens[t].tag in ("ADJ", "NOUN", "PROPN", "NUM"))
        while start < last and tokens[start].tag == "ADJ" and tokens[start].text.lower() in ol.en_not_products:
            start += 1
        add((tokens[start].start, tokens[last].end), "product", 0.6)
    return out


_ZH_SW_TAGS = frozenset({"n", "nz", "nr", "nrt", "nrfg", "nt", "ns", "j", "eng", "x", "v", "vn", "l"})
_ZH_SW_PROPER = frozenset({"nz", "nr", "nrt", "nrfg", "nt", "ns", "j", "eng", "x"})
_ZH_LOCATIVE = frozenset("上下里中内外前后边旁")
_ZH_SW_LEAD = re.compile(r"[，。；！？,;!?]")


def _zh_software_word(token: Token, lex: CorefLexicon, stop: frozenset[str]) -> bool:
    """A word that may be part of a software name: a noun, verb or Latin word that is no product,
    type, organisation or function word (钉|钉, 企业|微信, 腾讯|会议)."""
    ol, text = lex.open_names, token.text
    if token.tag not in _ZH_SW_TAGS or not (_CJK.match(text) or _LATIN_WORD.fullmatch(text)):
        return False
    if len(text) == 1 and (token.tag not in ("v", "eng", "ns", "n") or text in _ZH_LOCATIVE):
        return False  # 上, 里: a place word after the name
    if (
        text in stop
        or text in ol.sw_zh_not
        or text in ol.sw_zh_verbs
        or text in ol.sw_zh_heads
        or text in lex.name_boundaries
    ):
        return False
    if ol.sw_zh_failures.search(text) or text in ol.zh_org_words or _zh_head(token, ol, stop):
        return False
    return not any(h.word == text for h in lex.type_nouns.find(text))


def _zh_software(text: str, lex: CorefLexicon, taken: list[tuple[int, int]]) -> list[Named]:
    """钉钉一直闪退, 公司的企业微信收不到消息 (the subject of a software failure), 卸载腾讯会议 (after a
    verb done to software), 飞书客户端 (before a software word): software."""
    ol = lex.open_names
    tokens = zh_tokens(text)
    stop = lex.name_stop | ol.zh_not_brands
    out: list[Named] = []

    def run(first: int, step: int, limit: int) -> list[int]:
        found: list[int] = []
        i = first
        while 0 <= i < len(tokens) and len(found) < 3 and _zh_software_word(tokens[i], lex, stop):
            if found and tokens[min(i, found[-1])].end != tokens[max(i, found[-1])].start:
                break
            found.append(i)
            i += step
        found = sorted(found)
        if found and (tokens[found[0]].start < limit if step < 0 else False):
            return []
        return found

    def add(indices: list[int], proper_needed: bool) -> None:
        if not indices:
            return
        span = (tokens[indices[0]].start, tokens[indices[-1]].end)
        if span[1] - span[0] < 2 or overlaps(span, taken):
            return
        if proper_needed and len(indices) < 2 and tokens[indices[0]].tag not in _ZH_SW_PROPER:
            return  # 聊天软件, 更新固件: a common word, not a name
        out.append(_named(text, span, "software", 0.7))
        taken.append(span)

    for i, token in enumerate(tokens):
        if token.text in ol.sw_zh_heads:
            add(run(i - 1, -1, 0), True)
        elif token.text in ol.sw_zh_verbs:
            add(run(i + 1, 1, 0), True)
    for failure in ol.sw_zh_failures.finditer(text):
        start = max((m.end() for m in _ZH_SW_LEAD.finditer(text, 0, failure.start())), default=0)
        inside = [i for i, t in enumerate(tokens) if start <= t.start and t.end <= failure.start()]
        possessive = [i for i in inside[:4] if tokens[i].text == "的"]
        subject: list[int] = []
        # after 的 first (新装的|飞书, 公司的|企业微信: the owner or a modifier comes before), else the clause's start
        for first in [i + 1 for i in possessive[:1] if i + 1 in inside] + ([inside[0]] if inside else []):
            subject = run(first, 1, 0)  # the clause's start, else after 的 (公司的|企业微信, 荣耀X50上装的|剪映)
            if subject and not overlaps((tokens[subject[0]].start, tokens[subject[-1]].end), taken):
                break
            subject = []
        if subject and not (subject[-1] + 1 < len(tokens) and tokens[subject[-1] + 1].text in ol.sw_zh_heads):
            add(subject, False)  # 聊天软件打不开: the software word's own rule decides
    return out


def _en_software(text: str, lex: CorefLexicon, taken: list[tuple[int, int]]) -> list[Named]:
    """Outlook keeps crashing, reinstall Zoom, the Slack app: software."""
    ol = lex.open_names
    tokens = en_tokens(text)
    out: list[Named] = []

    def name_word(tok: Token) -> bool:
        word = tok.text
        return (
            bool(_LATIN_WORD.fullmatch(word))
            and (word[0].isupper() or bool(_INNER_CAPITAL.search(word)))
            and word.lower() not in ol.en_common
            and word.lower() not in ol.en_not_brands
            and tok.tag not in ("PRON", "DET", "ADP", "AUX", "CCONJ", "SCONJ", "PART", "PUNCT")
        )

    k = 0
    while k < len(tokens):
        if not name_word(tokens[k]):
            k += 1
            continue
        end = k
        while end + 1 < len(tokens) and name_word(tokens[end + 1]):
            end += 1
        words = [t.text for t in tokens[k : end + 1]]
        before = tokens[k - 1].text.lower() if k > 0 else ""
        after = tokens[end + 1].text.lower() if end + 1 < len(tokens) else ""
        span = (tokens[k].start, tokens[end].end)
        acronyms = all(w.isupper() and len(w) <= 4 for w in words)  # VPN, PDF: a kind, not a name
        failing = bool(ol.sw_en_failures.match(text[span[1] :])) and before not in ol.en_possessives
        cued = (
            after in ol.sw_en_heads
            or before in ol.sw_en_verbs
            or (failing and not any(_DIGIT.search(w) for w in words))  # my iPhone, Pixel 8 freezes: a device
        )
        if cued and not acronyms and not overlaps(span, taken):
            out.append(_named(text, span, "software", 0.7))
            taken.append(span)
        k = end + 1
    return out


def _shop_called(tokens: tuple[Token, ...], k: int, lex: CorefLexicon) -> bool:
    """A seller called CaseCraft, a shop named Bloom & Co: the name after called/named is the
    organisation the noun before names."""
    if k < 2 or tokens[k - 1].text.lower() not in ("called", "named"):
        return False
    noun = tokens[k - 2].text.lower()
    hit = next(iter(lex.type_nouns.find(noun)), None)
    return noun in lex.open_names.en_org_words or (hit is not None and hit.value == "organization" and hit.word == noun)


def _en_people(text: str, lex: CorefLexicon, taken: list[tuple[int, int]]) -> list[Named]:
    """People and organisations: a run of proper nouns with a person cue beside it (Maria from sales,
    Mr Chen, told Maria) or an organisation word after it (Amazon support, Chase Bank)."""
    ol = lex.open_names
    tokens = en_tokens(text)
    out: list[Named] = []
    k = 0
    while k < len(tokens):
        if tokens[k].tag != "PROPN" or tokens[k].text.lower() in ol.en_not_brands:
            k += 1
            continue
        end = k
        while end + 1 < len(tokens) and tokens[end + 1].tag == "PROPN":
            end += 1
        b = k - 2 if k >= 2 and tokens[k - 1].text == "," else k - 1  # my advisor, Daniel Okafor
        before = tokens[b].text.lower().rstrip(".") if b >= 0 else ""
        after = tokens[end + 1].text.lower() if end + 1 < len(tokens) else ""
        span = (tokens[k].start, tokens[end].end)
        type_ = None
        bought = before == "from" and b >= 1 and tokens[b - 1].text.lower() in ol.en_shop_before
        if _shop_called(tokens, k, lex):  # a seller called CaseCraft
            type_ = "organization"
        elif before in ol.en_person_before or after in ol.en_person_after:
            type_ = "person"
        elif after in ol.en_org_words or bought:  # Amazon support; an order from Shake Shack: a shop
            type_ = "organization"
        if type_ is not None and not overlaps(span, taken):
            out.append(_named(text, span, type_, 0.6))
            taken.append(span)
        k = end + 1
    return out


def _people_cue(text: str, lex: OpenNames) -> bool:
    """Whether a capitalised word that is no common word stands beside a person or organisation cue."""
    for m in _CUE_NAME.finditer(text):
        word = m.group("name")
        if word.lower() in lex.en_common:
            continue
        before = text[: m.start()].split()[-1:] if m.start() else []
        after = text[m.end() :].split()[:1]
        shop = text[: m.start()].split()[-2:]
        if (
            (before and before[0].lower().rstrip(".,") in lex.en_person_before)
            or (len(shop) == 2 and shop[1].lower() == "from" and shop[0].lower() in lex.en_shop_before)
            or (after and after[0].lower().strip(".,!?") in lex.en_person_after | lex.en_org_words)
        ):
            return True
    return False


def open_names(
    text: str, lex: CorefLexicon, taken: list[tuple[int, int]], *, products: bool = True, people: bool = True
) -> list[Named]:
    """Products, organisations and people in `text` that overlap no span in `taken` (extended).

    English people and organisations (`people`) are typed spaCy entities; the extraction runs them
    after the capitalised-name rule, which keeps a name like Morton's Steakhouse whole.

    >>> from state.coref.lexicon import load_coref_lexicon
    >>> lex = load_coref_lexicon().get()
    >>> [(n.surface, n.types) for n in open_names("上个月我在你们这买了一台华为Mate60，屏幕有一条绿线。", lex, [])]
    [('华为Mate60', ('product',))]
    >>> [(n.surface, n.types) for n in open_names("I bought an iPhone 15 Pro last month.", lex, [])]
    [('iPhone 15 Pro', ('product',))]
    """
    found: list[Named] = []
    ol = lex.open_names
    if _CJK.search(text):
        if products and ol.zh_gate.search(text):
            found.extend(_zh(text, lex, taken))  # 索尼A7M4相机报错: a product first
            found.extend(_zh_software(text, lex, taken))
        if people:
            found.extend(_zh_role_people(text, lex, taken))
    elif _LATIN.search(text):
        if products and (ol.en_gate.search(text) or _MODEL_TOKEN.search(text)):
            found.extend(_en_software(text, lex, taken))
            found.extend(_en(text, lex, taken))
        if people and _people_cue(text, ol):
            found.extend(_en_people(text, lex, taken))
    return sorted(found, key=lambda n: n.span)
