"""The entity pattern document compiled: strong identifier patterns, name head words and cuts,
weak-reference determiners and heads (`state/task/resources/entity_patterns.yaml`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class StrongPattern:
    kind: str
    regex: re.Pattern[str]
    group: int


@dataclass(frozen=True)
class EntityConfig:
    strong: tuple[StrongPattern, ...]
    heads: tuple[tuple[str, str], ...]  # (head, category), longest head first
    head_regex: re.Pattern[str]
    english_name: re.Pattern[str] | None
    left_cuts: tuple[str, ...]
    left_cut_regex: re.Pattern[str]
    keep_together: tuple[str, ...]
    generic: frozenset[str]
    generic_patterns: tuple[re.Pattern[str], ...]
    introducers: re.Pattern[str] | None
    right_stops: re.Pattern[str]
    list_introducers: re.Pattern[str] | None
    list_separators: re.Pattern[str]
    measure_prefix: re.Pattern[str] | None
    intro_description: re.Pattern[str] | None
    head_blockers: tuple[str, ...]
    min_length: int
    max_length: int
    weak_heads: dict[str, tuple[str, ...]]
    weak_zh: re.Pattern[str]
    weak_en: re.Pattern[str]
    aliases: dict[str, tuple[str, ...]]


def _alternation(words: list[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))


def parse_entity_config(raw: Any) -> EntityConfig:
    """Compile the entity pattern document (bad regexes raise `re.error`, a ValueError)."""
    strong = tuple(
        StrongPattern(str(p["kind"]), re.compile(str(p["pattern"]), re.IGNORECASE), int(p.get("group", 0)))
        for p in raw["strong"]
    )
    names = raw["names"]
    heads = sorted(
        ((str(h), str(cat)) for cat, hs in names["heads"].items() for h in hs), key=lambda hc: len(hc[0]), reverse=True
    )
    eng = names.get("english_pattern")
    weak = raw["weak"]
    weak_heads = {str(k): tuple(str(x) for x in v) for k, v in weak["heads"].items()}
    zh_heads = [h for h in weak_heads if not h.isascii()]
    en_heads = [h for h in weak_heads if h.isascii()]
    weak_zh = re.compile(
        rf"(?P<det>{_alternation([str(d) for d in weak['determiners']])})"
        rf"(?P<mod>[\u4e00-\u9fffA-Za-z0-9]{{0,8}}?)的?(?P<head>{_alternation(zh_heads)})"
    )
    weak_en = re.compile(
        rf"\b(?P<det>{_alternation([str(d) for d in weak['english_determiners']])})\s+"
        rf"(?P<mod>(?:[a-z0-9-]+\s+){{0,2}}?)(?P<head>{_alternation(en_heads)})s?\b",
        re.IGNORECASE,
    )
    aliases = {str(k).lower(): tuple(str(a).lower() for a in v) for k, v in (weak.get("aliases") or {}).items()}
    return EntityConfig(
        strong=strong,
        heads=tuple(heads),
        head_regex=re.compile(_alternation([h for h, _ in heads])),
        english_name=re.compile(str(eng)) if eng else _DEFAULT_ENGLISH_NAME,
        left_cuts=tuple(sorted({str(c) for c in names["left_cuts"]}, key=len, reverse=True)),
        # A lookahead finds, at every position, the longest cut starting there (cuts may overlap).
        left_cut_regex=re.compile(f"(?=({_alternation([str(c) for c in names['left_cuts']])}))"),
        keep_together=tuple(str(k) for k in names.get("keep_together") or ()),
        generic=frozenset(str(g) for g in names.get("generic") or ()),
        generic_patterns=tuple(re.compile(str(p)) for p in names.get("generic_patterns") or ()),
        introducers=re.compile(_alternation([str(i) for i in intro])) if (intro := names.get("introducers")) else None,
        right_stops=re.compile(
            r"[，。！？；;,.!?\s]|" + _alternation([str(r) for r in names.get("right_stops") or ()])
        ),
        list_introducers=re.compile(str(li)) if (li := names.get("list_introducers")) else None,
        list_separators=re.compile(str(names.get("list_separators", "[、，,]"))),
        measure_prefix=re.compile(str(mp)) if (mp := names.get("measure_prefix")) else None,
        intro_description=re.compile(str(idp)) if (idp := names.get("intro_description")) else None,
        head_blockers=tuple(str(b) for b in names.get("head_blockers") or ()),
        min_length=int(names.get("min_length", 3)),
        max_length=int(names.get("max_length", 24)),
        weak_heads=weak_heads,
        weak_zh=weak_zh,
        weak_en=weak_en,
        aliases=aliases,
    )


_DEFAULT_ENGLISH_NAME = re.compile(
    r"\b((?:[A-Z][\w'&-]*\s+){1,4}(?:Hotel|Inn|Hostel|Restaurant|Cafe|Café|Bar|Bistro|Grill|Museum|Park|Gardens?|"
    r"Station|Airport|Mall|Center|Centre|Square|Street|Road|Avenue|Bridge|Tower|Temple|Palace|Gallery|Theatre|"
    r"Theater|Hospital|University|Bank|Store|Shop|Market|Zoo))\b"
)
