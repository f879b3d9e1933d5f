"""The coreference lexicon and the typed entity dictionary, parsed from YAML data files.

`state/coref/resources/coref_lexicon.yaml` holds the words (types with their head nouns, name
suffixes, hint verbs and attributes; anaphors; back-reference cues; the question rule;
descriptors for weak references; name triggers) and `state/coref/resources/entities.yaml` the typed
entity dictionary with aliases. `load_coref_lexicon` returns a `HotFile` whose `get()` gives
the current `CorefLexicon`: editing either file changes the next turn's result, no restart.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from schemas.errors import LexiconError
from state.core.datafiles import text_loader
from state.core.hotfile import HotFile
from state.core.word_index import Hit, WordIndex

RESOURCES = Path(__file__).resolve().parent / "resources"
DEFAULT_LEXICON = RESOURCES / "coref_lexicon.yaml"
DEFAULT_ENTITIES = RESOURCES / "entities.yaml"
__all__ = ["CorefLexicon", "DictEntity", "Hit", "OpenNames", "WordIndex", "load_coref_lexicon", "parse_coref_lexicon"]


@dataclass(frozen=True, slots=True)
class DictEntity:
    name: str
    type: str
    cls: str | None


def _alternation(words: Iterable[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True) if w)


_NONE: frozenset[str] = frozenset()
_NEVER = re.compile(r"(?!)")  # matches nothing


@dataclass(frozen=True)
class OpenNames:
    """Words for finding entities no dictionary lists (see `state.coref.open_names`); each field's
    default finds nothing, so `OpenNames()` is the empty set of words."""

    zh_gate: re.Pattern[str] = _NEVER  # a sentence without any of these holds no such entity: jieba is not run
    en_gate: re.Pattern[str] = _NEVER  # … spaCy is not run for products
    model_words: frozenset[str] = _NONE  # Pro, Max, Plus …: part of a model name after it
    zh_product_heads: frozenset[str] = _NONE  # 吹风机, 冰箱, 电脑 …: what a brand word before makes a product
    zh_product_chars: frozenset[str] = _NONE  # 机, 器, 衣 …: a noun ending in one is a product word too
    zh_org_words: frozenset[str] = _NONE  # 快递, 客服, 公司 …: the name before one is an organisation
    zh_brand_tags: frozenset[str] = _NONE  # jieba flags a brand word may carry
    zh_not_brands: frozenset[str] = _NONE
    zh_purchase: tuple[str, ...] = ()  # 买了, 我的 …: a product word after one is a product said
    zh_fillers: frozenset[str] = _NONE
    zh_person_titles: frozenset[str] = _NONE  # 经理, 客服, 司机 …: a person's name (jieba nr) after one is a person
    zh_code_cues: frozenset[str] = _NONE  # 报, 提示 …: the code after one is an error, not a model
    zh_person_cues: frozenset[str] = _NONE  # 说, 答应 …: a person's name right before one is a person
    units: re.Pattern[str] = _NEVER  # 60G, 5000mAh: a number with a unit is no model
    en_product_heads: frozenset[str] = _NONE
    en_purchase: frozenset[str] = _NONE
    en_possessives: frozenset[str] = _NONE
    en_fillers: frozenset[str] = _NONE
    en_not_products: frozenset[str] = _NONE
    en_not_brands: frozenset[str] = _NONE
    en_run_breaks: frozenset[str] = _NONE  # a purchased thing's words stop here (a blender | last week)
    en_person_before: frozenset[str] = _NONE  # Mr, told, asked …: a proper noun after one is a person
    en_person_after: frozenset[str] = _NONE  # from, said, promised …: a proper noun before one is a person
    en_shop_before: frozenset[str] = _NONE  # order, bought …: a proper noun after "<one> from" is a shop
    en_org_words: frozenset[str] = _NONE  # support, store, bank …: a proper noun before one is an organisation
    en_common: frozenset[str] = _NONE  # capitalised words that are no names (This, There, What …)
    sw_zh_heads: frozenset[str] = _NONE  # 软件, 客户端 …: the name before one is software
    sw_zh_verbs: frozenset[str] = _NONE  # 卸载, 登录 …: the name after one is software
    sw_zh_failures: re.Pattern[str] = _NEVER  # 闪退, 打不开 …: their clause's subject is software
    sw_zh_not: frozenset[str] = _NONE  # 文件, 网页 …: what a failure verb takes that is no software
    sw_en_heads: frozenset[str] = _NONE
    sw_en_verbs: frozenset[str] = _NONE
    sw_en_failures: re.Pattern[str] = _NEVER


_NO_OPEN_NAMES = OpenNames()


@dataclass(frozen=True)
class CorefLexicon:
    """Everything the coreference resolver knows about words, compiled for speed."""

    entities: WordIndex  # alias → DictEntity
    type_nouns: WordIndex  # head noun → type
    type_suffixes: dict[str, tuple[str, ...]]  # name suffix → possible types
    suffix_pattern: re.Pattern[str]
    type_cues: WordIndex  # verb/attribute/noun → type (context hints)
    type_verbs: frozenset[str]  # the verbs among them (用餐, 住宿, 游玩): what a place is used as
    attributes: WordIndex  # attribute → type or None (generic)
    business_types: frozenset[str]
    place_types: frozenset[str]
    zh_demonstratives: tuple[str, ...]
    zh_classifiers: tuple[str, ...]
    zh_pronouns: dict[str, str | None]
    zh_backref_phrases: tuple[str, ...]
    zh_not_anaphora: tuple[str, ...]
    zh_indefinite: tuple[str, ...]
    en_pronouns: dict[str, str | None]
    en_demonstratives: tuple[str, ...]
    en_pleonastic: tuple[str, ...]
    en_backref_phrases: tuple[str, ...]
    backref_cues: WordIndex
    background_cues: WordIndex
    focus_triggers: WordIndex
    question_markers: tuple[str, ...]
    clause_breaks: tuple[str, ...]
    question_verbs: WordIndex
    question_words: WordIndex
    descriptors: WordIndex
    name_boundaries: tuple[str, ...]
    name_conjunctions: tuple[str, ...]
    generic_bodies: tuple[re.Pattern[str], ...]
    name_triggers: re.Pattern[str]
    name_weak_triggers: re.Pattern[str]
    name_terminators: re.Pattern[str]
    not_in_names: re.Pattern[str]
    name_stop: frozenset[str]
    name_min: int
    name_followers: re.Pattern[str]
    name_max: int
    standalone_names: frozenset[str]
    identifiers: tuple[tuple[str, re.Pattern[str]], ...]
    type_names: frozenset[str] = field(default_factory=frozenset)
    open_names: OpenNames = _NO_OPEN_NAMES
    issued_types: frozenset[str] = field(default_factory=frozenset)  # 招商银行|信用卡: a card, not the bank
    record_types: frozenset[str] = field(default_factory=frozenset)  # what a bare identifier may be (order, booking …)
    priced_types: frozenset[str] = field(default_factory=frozenset)  # 星卡19元套餐: a price inside the name
    thing_types: frozenset[str] = field(default_factory=frozenset)  # machines: one may stand for another
    surnames: frozenset[str] = field(default_factory=frozenset)  # 王, 李 …: a person named by a title starts with one
    given_genders: dict[str, str] = field(default_factory=dict)  # andre → m, beth → f: English given names
    question_not_verbs: WordIndex = field(default_factory=lambda: WordIndex({}))  # 问题: holds 问, asks nothing
    pronoun_weak_types: frozenset[str] = field(default_factory=frozenset)  # 它 binds to these only as a last resort
    pronoun_hints: WordIndex = field(default_factory=lambda: WordIndex({}))  # 闪退 → software: what a pronoun does
    ordinals: dict[str, int] = field(default_factory=dict)  # descriptor → position (第二个 → 2, last → -1)
    categories: WordIndex = field(default_factory=lambda: WordIndex({}))  # brand word → its kind's nouns
    zh_demonstrative_re: re.Pattern[str] = re.compile(r"(?!)")
    zh_not_anaphora_re: re.Pattern[str] = re.compile(r"(?!)")
    zh_pronoun_re: re.Pattern[str] = re.compile(r"(?!)")
    en_np_re: re.Pattern[str] = re.compile(r"(?!)")
    en_pronoun_re: re.Pattern[str] = re.compile(r"(?!)")
    en_pleonastic_re: re.Pattern[str] = re.compile(r"(?!)")
    en_backref_re: re.Pattern[str] = re.compile(r"(?!)")
    zh_contrast_re: re.Pattern[str] = re.compile(r"(?!)")
    en_contrast_re: re.Pattern[str] = re.compile(r"(?!)")


def unnamed_type(lex: CorefLexicon, type_: str | None) -> bool:
    """Whether things of a type are only ever numbers, never names (an order, a booking); a card or
    an account, which a bank issues, may carry a name (Chase Sapphire card)."""
    return type_ in lex.record_types and type_ not in lex.issued_types


def _words(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise LexiconError(f"{where}: expected a list of strings")
    return value


def parse_coref_lexicon(texts: list[str]) -> CorefLexicon:
    """Parse [lexicon YAML, entity dictionary YAML] into a `CorefLexicon`."""
    try:
        lex = yaml.safe_load(texts[0]) or {}
        ents = yaml.safe_load(texts[1]) or {}
    except yaml.YAMLError as exc:
        raise LexiconError(f"coreference lexicon is not valid YAML: {exc}") from exc
    try:
        return _build(lex, ents)
    except (KeyError, TypeError, AttributeError, re.error) as exc:
        raise LexiconError(f"coreference lexicon is malformed: {exc!r}") from exc


def _lower(words: list[str]) -> frozenset[str]:
    return frozenset(w.lower() for w in words)


def _open_names(spec: dict[str, Any]) -> OpenNames:
    zh, en = spec.get("zh") or {}, spec.get("en") or {}
    heads_zh = _words(zh.get("product_heads"), "open_names.zh.product_heads")
    org_zh = _words(zh.get("org_words"), "open_names.zh.org_words")
    purchase_zh = _words(zh.get("purchase"), "open_names.zh.purchase")
    titles = _words(zh.get("person_titles"), "open_names.zh.person_titles")
    cues = _words(zh.get("person_cues"), "open_names.zh.person_cues")
    en_heads = _words(en.get("product_heads"), "open_names.en.product_heads")
    en_purchase = _words(en.get("purchase"), "open_names.en.purchase")
    en_org = _words(en.get("org_words"), "open_names.en.org_words")
    sw = spec.get("software") or {}
    sw_zh_heads = _words(sw.get("zh_heads"), "open_names.software.zh_heads")
    sw_zh_verbs = _words(sw.get("zh_verbs"), "open_names.software.zh_verbs")
    sw_zh_failures = _words(sw.get("zh_failures"), "open_names.software.zh_failures")
    sw_en_heads = _words(sw.get("en_heads"), "open_names.software.en_heads")
    sw_en_verbs = _words(sw.get("en_verbs"), "open_names.software.en_verbs")
    sw_en_failures = _words(sw.get("en_failures"), "open_names.software.en_failures")
    en_gate_words = en_heads + en_purchase + en_org + sw_en_heads + sw_en_verbs + sw_en_failures
    en_gate = rf"\b(?:{_alternation(en_gate_words) or '(?!)'})\b"
    zh_gate_words = heads_zh + org_zh + purchase_zh + titles + sw_zh_heads + sw_zh_verbs + sw_zh_failures
    return OpenNames(
        zh_gate=re.compile(rf"[A-Za-z]|{_alternation(zh_gate_words) or '(?!)'}"),
        en_gate=re.compile(en_gate, re.IGNORECASE),
        model_words=_lower(_words(spec.get("model_words"), "open_names.model_words")),
        zh_product_heads=frozenset(heads_zh),
        zh_product_chars=frozenset(_words(zh.get("product_chars"), "open_names.zh.product_chars")),
        zh_org_words=frozenset(org_zh),
        zh_brand_tags=frozenset(_words(zh.get("brand_tags"), "open_names.zh.brand_tags")),
        zh_not_brands=frozenset(_words(zh.get("not_brands"), "open_names.zh.not_brands")),
        zh_purchase=tuple(purchase_zh),
        zh_fillers=frozenset(_words(zh.get("fillers"), "open_names.zh.fillers")),
        zh_person_titles=frozenset(titles),
        zh_person_cues=frozenset(cues),
        zh_code_cues=frozenset(_words(zh.get("code_cues"), "open_names.zh.code_cues")),
        units=re.compile(
            rf"^\d+(?:\.\d+)?(?:{_alternation(_words(spec.get('units'), 'open_names.units')) or '(?!)'})$",
            re.IGNORECASE,
        ),
        en_product_heads=_lower(en_heads),
        en_purchase=_lower(en_purchase),
        en_possessives=_lower(_words(en.get("possessives"), "open_names.en.possessives")),
        en_fillers=_lower(_words(en.get("fillers"), "open_names.en.fillers")),
        en_not_products=_lower(_words(en.get("not_products"), "open_names.en.not_products")),
        en_not_brands=_lower(_words(en.get("not_brands"), "open_names.en.not_brands")),
        en_run_breaks=_lower(_words(en.get("run_breaks"), "open_names.en.run_breaks")),
        en_person_before=_lower(_words(en.get("person_before"), "open_names.en.person_before")),
        en_person_after=_lower(_words(en.get("person_after"), "open_names.en.person_after")),
        en_org_words=_lower(en_org),
        en_shop_before=_lower(_words(en.get("shop_before"), "open_names.en.shop_before")),
        en_common=_lower(_words(en.get("common"), "open_names.en.common")),
        sw_zh_heads=frozenset(sw_zh_heads),
        sw_zh_verbs=frozenset(sw_zh_verbs),
        sw_zh_failures=re.compile(_alternation(sw_zh_failures) or r"(?!)"),
        sw_zh_not=frozenset(_words(sw.get("zh_not_software"), "open_names.software.zh_not_software")),
        sw_en_heads=_lower(sw_en_heads),
        sw_en_verbs=_lower(sw_en_verbs),
        sw_en_failures=re.compile(rf"^\s*(?:{_alternation(sw_en_failures) or '(?!)'})\b", re.IGNORECASE),
    )


def _build(lex: dict[str, Any], ents: dict[str, Any]) -> CorefLexicon:
    aliases: dict[str, DictEntity] = {}
    for row in ents.get("entities") or []:
        entity = DictEntity(str(row["name"]), str(row["type"]), row.get("class"))
        for alias in [entity.name, *_words(row.get("aliases"), f"entity {entity.name} aliases")]:
            aliases[alias] = entity
    nouns: dict[str, str] = {}
    suffixes: dict[str, list[str]] = {}
    cues: dict[str, str] = {}
    verbs: set[str] = set()
    attributes: dict[str, str | None] = {}
    for type_name, spec in (lex.get("types") or {}).items():
        for noun in _words(spec.get("nouns"), f"types.{type_name}.nouns"):
            nouns.setdefault(noun, type_name)
            cues.setdefault(noun, type_name)
        for suffix in _words(spec.get("suffixes"), f"types.{type_name}.suffixes"):
            suffixes.setdefault(suffix, []).append(type_name)
        for verb in _words(spec.get("verbs"), f"types.{type_name}.verbs"):
            cues.setdefault(verb, type_name)
            verbs.add(verb)
        for attribute in _words(spec.get("attributes"), f"types.{type_name}.attributes"):
            cues.setdefault(attribute, type_name)
            attributes.setdefault(attribute, type_name)
    open_spec = lex.get("open_names") or {}
    for lang in ("zh", "en"):  # product words are heads of references too (这台电饭煲, the laptop)
        for head in _words((open_spec.get(lang) or {}).get("product_heads"), f"open_names.{lang}.product_heads"):
            nouns.setdefault(head, "product")
    for attribute in _words(lex.get("generic_attributes"), "generic_attributes"):
        attributes.setdefault(attribute, None)
    ana = lex.get("anaphora") or {}
    zh, en = ana.get("zh") or {}, ana.get("en") or {}
    names = lex.get("names") or {}
    question = lex.get("question_rule") or {}
    descriptors = lex.get("descriptors") or {}
    identifiers = tuple(
        (str(row["type"]), re.compile(str(row["pattern"]), re.IGNORECASE)) for row in lex.get("identifiers") or []
    )
    en_nouns = [n.lower() for n in nouns if n.isascii()]
    en_descriptors = [d.lower() for d in _words(descriptors.get("en"), "descriptors.en")]
    en_dem = _words(en.get("demonstratives"), "anaphora.en.demonstratives")
    en_np = (
        rf"\b(?P<det>{_alternation(en_dem)}|the)\s+(?:(?P<desc>{_alternation(en_descriptors) or '(?!)'})\s+|"
        rf"[a-z]{{3,}}(?:ed|ing)\s+)?"  # the cancelled flight, the missing parcel
        rf"(?P<head>{_alternation(en_nouns) or '(?!)'}|ones?)\b"
    )
    en_pron = dict(en.get("pronouns") or {})
    en_contrast = _words(en.get("contrast"), "anaphora.en.contrast")
    return CorefLexicon(
        zh_contrast_re=re.compile(_alternation(_words(zh.get("contrast"), "anaphora.zh.contrast")) or r"(?!)"),
        en_contrast_re=re.compile(
            rf"\b(?:{_alternation(en_contrast)})\s+(?P<head>{_alternation(en_nouns) or '(?!)'})s?\b"
            if en_contrast
            else r"(?!)"
        ),
        zh_demonstrative_re=re.compile(_alternation(_words(zh.get("demonstratives"), "d")) or r"(?!)"),
        zh_not_anaphora_re=re.compile(_alternation(_words(zh.get("not_anaphora"), "n")) or r"(?!)"),
        zh_pronoun_re=re.compile(_alternation(list((zh.get("pronouns") or {}).keys())) or r"(?!)"),
        en_np_re=re.compile(en_np),
        en_pronoun_re=re.compile(rf"\b(?:{_alternation(list(en_pron))})\b" if en_pron else r"(?!)"),
        en_pleonastic_re=_pleonastic_re(_words(en.get("pleonastic"), "p")),
        en_backref_re=re.compile(
            rf"\b(?:{_alternation(_words(en.get('backref_phrases'), 'b'))})\b" if en.get("backref_phrases") else r"(?!)"
        ),
        entities=WordIndex(aliases),
        type_nouns=WordIndex(nouns),
        type_suffixes={k: tuple(v) for k, v in suffixes.items()},
        suffix_pattern=re.compile(_alternation(suffixes) or r"(?!)"),
        type_cues=WordIndex(cues),
        type_verbs=frozenset(verbs),
        attributes=WordIndex(attributes),
        business_types=frozenset(_words(lex.get("business_types"), "business_types")),
        place_types=frozenset(_words(lex.get("place_types"), "place_types")),
        zh_demonstratives=tuple(_words(zh.get("demonstratives"), "anaphora.zh.demonstratives")),
        zh_classifiers=tuple(_words(zh.get("classifiers"), "anaphora.zh.classifiers")),
        zh_pronouns=dict(zh.get("pronouns") or {}),
        zh_backref_phrases=tuple(_words(zh.get("backref_phrases"), "anaphora.zh.backref_phrases")),
        zh_not_anaphora=tuple(_words(zh.get("not_anaphora"), "anaphora.zh.not_anaphora")),
        zh_indefinite=tuple(sorted(_words(zh.get("indefinite"), "anaphora.zh.indefinite"), key=len, reverse=True)),
        en_pronouns=dict(en.get("pronouns") or {}),
        en_demonstratives=tuple(_words(en.get("demonstratives"), "anaphora.en.demonstratives")),
        en_pleonastic=tuple(_words(en.get("pleonastic"), "anaphora.en.pleonastic")),
        en_backref_phrases=tuple(_words(en.get("backref_phrases"), "anaphora.en.backref_phrases")),
        backref_cues=WordIndex({c: True for c in _words(lex.get("backref_cues"), "backref_cues")}),
        background_cues=WordIndex({c: True for c in _words(lex.get("background_cues"), "background_cues")}),
        focus_triggers=WordIndex({c: True for c in _words(lex.get("focus_triggers"), "focus_triggers")}),
        question_markers=tuple(_words(question.get("markers"), "question_rule.markers")),
        clause_breaks=tuple(_words(question.get("clause_breaks"), "question_rule.clause_breaks")),
        question_verbs=WordIndex({v: True for v in _words(question.get("verbs"), "question_rule.verbs")}),
        question_not_verbs=WordIndex({v: True for v in _words(question.get("not_verbs"), "question_rule.not_verbs")}),
        question_words=WordIndex({w: True for w in _words(lex.get("question_words"), "question_words")}),
        descriptors=WordIndex(
            {
                d: d
                for d in _words(descriptors.get("zh"), "descriptors.zh")
                + _words(descriptors.get("en"), "descriptors.en")
            }
        ),
        name_boundaries=tuple(
            sorted(
                set(_words(names.get("boundaries"), "names.boundaries"))
                | set(_words(names.get("not_in_names"), "names.not_in_names")),
                key=len,
                reverse=True,
            )
        ),
        standalone_names=frozenset(_words(names.get("standalone"), "names.standalone")),
        name_conjunctions=tuple(_words(names.get("conjunctions"), "names.conjunctions")),
        generic_bodies=tuple(re.compile(p) for p in _words(names.get("generic_bodies"), "names.generic_bodies")),
        name_triggers=re.compile(_alternation(_words(names.get("triggers"), "names.triggers")) or r"(?!)"),
        name_weak_triggers=re.compile(
            _alternation(_words(names.get("weak_triggers"), "names.weak_triggers")) or r"(?!)"
        ),
        name_terminators=re.compile(_alternation(_words(names.get("terminators"), "names.terminators")) or r"(?!)"),
        not_in_names=re.compile(_alternation(_words(names.get("not_in_names"), "names.not_in_names")) or r"(?!)"),
        name_stop=frozenset(_words(names.get("stop"), "names.stop"))
        | frozenset(nouns)
        | frozenset((zh.get("pronouns") or {}).keys()),
        name_min=int(names.get("min_chars", 2)),
        name_followers=re.compile(str(lex.get("name_followers") or r"[\s\S]")),
        name_max=int(names.get("max_chars", 20)),
        identifiers=identifiers,
        type_names=frozenset((lex.get("types") or {}).keys()),
        open_names=_open_names(open_spec),
        pronoun_weak_types=frozenset(_words(lex.get("pronoun_weak_types"), "pronoun_weak_types")),
        pronoun_hints=WordIndex(
            {
                w.lower(): type_name
                for type_name, words in (lex.get("pronoun_hints") or {}).items()
                for w in _words(words, f"pronoun_hints.{type_name}")
            }
        ),
        ordinals={str(k): int(v) for k, v in (lex.get("ordinals") or {}).items()}
        | {f"#{n}": n for n in (*range(1, 21), -1)},
        issued_types=frozenset(_words(lex.get("issued_types"), "issued_types")),
        record_types=frozenset(_words(lex.get("record_types"), "record_types")),
        surnames=frozenset(str(names.get("surnames") or "")),
        given_genders={
            **{w.lower(): "m" for w in _words(names.get("given_male"), "names.given_male")},
            **{w.lower(): "f" for w in _words(names.get("given_female"), "names.given_female")},
        },
        thing_types=frozenset(_words(lex.get("thing_types"), "thing_types")),
        priced_types=frozenset(_words(lex.get("priced_types"), "priced_types")),
        categories=_categories(lex.get("categories")),
    )


def _categories(spec: Any) -> WordIndex:
    """Brand and product-line word → the category nouns of every kind it is listed under."""
    if spec is None:
        return WordIndex({})
    if not isinstance(spec, list) or not all(isinstance(c, dict) for c in spec):
        raise LexiconError("categories: expected a list of {nouns, names}")
    out: dict[str, tuple[str, ...]] = {}
    for i, kind in enumerate(spec):
        nouns = tuple(n.lower() for n in _words(kind.get("nouns"), f"categories[{i}].nouns"))
        if not nouns:
            raise LexiconError(f"categories[{i}]: no nouns")
        for name in _words(kind.get("names"), f"categories[{i}].names"):
            key = name.lower()
            out[key] = tuple(dict.fromkeys((*out.get(key, ()), *nouns)))
    return WordIndex(out)


def open_names_on(lex: CorefLexicon) -> bool:
    """Whether names no dictionary lists are looked for (the word taggers run): off in a lexicon
    without an `open_names` section."""
    return lex.open_names is not _NO_OPEN_NAMES


def _pleonastic_re(phrases: list[str]) -> re.Pattern[str]:
    """Phrases where "it" points at nothing. One ending in "it" (got it, i see it) only where its clause
    ends: "I got it ten days ago" refers, "Got it, thanks" does not."""
    if not phrases:
        return re.compile(r"(?!)")
    closed = [p for p in phrases if p.endswith(" it")]
    open_ = [p for p in phrases if not p.endswith(" it")]
    parts = []
    if open_:
        parts.append(rf"\b(?:{_alternation(open_)})\b")
    if closed:
        parts.append(rf"\b(?:{_alternation(closed)})\b(?=\s*(?:[.,!?;:]|$))")
    return re.compile("|".join(parts))


def load_coref_lexicon(
    lexicon_path: Path | str = DEFAULT_LEXICON,
    entities_path: Path | str = DEFAULT_ENTITIES,
    *,
    check_every_s: float = 1.0,
) -> HotFile[CorefLexicon]:
    """A hot-reloading handle on the lexicon and entity dictionary (raises LexiconError if unreadable)."""
    load = text_loader(parse_coref_lexicon, error=LexiconError)
    return HotFile([lexicon_path, entities_path], load, check_every_s=check_every_s)
