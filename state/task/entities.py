"""Progressive entity extraction for the task state (docs/design.md#task-state-machine).

Strong identifiers first (order ids, phone numbers, tracking numbers, amounts, SKUs, e-mails),
then names (a run of text ending in a head word: 讲礼驴肉馆, 北京天伦王朝酒店, Hilton Garden Inn),
then weak references ("这个订单", "那个蓝色的盒子", "the blue one") bound to entities already
known to the task. A weak reference that matches nothing yet stays unbound and is bound later,
when a strong entity of its kind appears. Patterns and lexicons are data
(`state/task/resources/entity_patterns.yaml`); everything here is a pure function.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from schemas.session import CriticalEntity

_CLAUSE = re.compile(r"[^，。！？；;,.!?\n]+")
_PAREN = re.compile(r"[（(][^（）()]{1,20}[)）]")
_NAME_CHAR = re.compile(r"[\u4e00-\u9fffA-Za-z0-9·&\-]")


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


def _clause_at(text: str, pos: int) -> str:
    for m in _CLAUSE.finditer(text):
        if m.start() <= pos < m.end():
            return m.group(0).strip()[:60]
    return ""


def _overlaps(span: tuple[int, int], claimed: list[tuple[int, int]]) -> bool:
    return any(span[0] < e and s < span[1] for s, e in claimed)


def extract_strong(text: str, turn_id: str, cfg: EntityConfig) -> tuple[list[CriticalEntity], list[tuple[int, int]]]:
    """Strong identifiers in pattern order; a span is claimed once.

    >>> from state.core.datafiles import packaged, read_data
    >>> cfg = parse_entity_config(read_data(packaged("entity_patterns.yaml")))
    >>> [(e.kind, e.value) for e in extract_strong("订单DD20261130001的快递单号SF1234567890", "t", cfg)[0]]
    [('order_id', 'DD20261130001'), ('tracking_number', 'SF1234567890')]
    """
    found: list[CriticalEntity] = []
    claimed: list[tuple[int, int]] = []
    for pat in cfg.strong:
        for m in pat.regex.finditer(text):
            span = m.span(pat.group)
            if _overlaps(span, claimed):
                continue
            value = re.sub(r"\s+", "", m.group(pat.group)) if pat.kind != "amount" else m.group(pat.group).strip()
            claimed.append(span)
            found.append(CriticalEntity(kind=pat.kind, value=value, turn_id=turn_id, context=_clause_at(text, span[0])))
    order = {id(e): i for i, e in enumerate(found)}
    spans = dict(zip((id(e) for e in found), claimed, strict=True))
    found.sort(key=lambda e: (spans[id(e)][0], order[id(e)]))
    return found, claimed


def _run_start(text: str, pos: int) -> int:
    """Where the run of name characters (and bracket groups) that ends at `pos` begins."""
    i = pos
    while i > 0:
        ch = text[i - 1]
        if _NAME_CHAR.match(ch):
            i -= 1
            continue
        if ch in ")）":
            j = max(text.rfind("(", 0, i - 1), text.rfind("（", 0, i - 1))
            if j >= 0 and i - j <= 22:
                i = j
                continue
        break
    return i


def _cut_start(text: str, start: int, head_start: int, cfg: EntityConfig, head_len: int = 2) -> int | None:
    """The start of a name: just after the rightmost left cut in text[start:head_start]; None
    when that leaves too little before the head ("去山水…": 山 alone is no name)."""
    keep = [
        (m.start(), m.end()) for k in cfg.keep_together for m in re.finditer(re.escape(k), text[start : head_start + 8])
    ]
    keep = [(s + start, e + start) for s, e in keep]
    keep += [m.span() for m in cfg.head_regex.finditer(text, start, head_start) if m.end() - m.start() > 1]
    min_prefix = 1 if head_len > 1 else 2
    ends: list[int] = []
    for m in cfg.left_cut_regex.finditer(text, start, head_start):
        end = m.start() + len(m.group(1))
        if not _overlaps((m.start(), end), keep):
            ends.append(end)
    last = max(ends, default=start)
    return last if head_start - last >= min_prefix else None


def _trim_measure(text: str, start: int | None, cfg: EntityConfig) -> int | None:
    if cfg.measure_prefix is None or start is None:
        return start
    m = cfg.measure_prefix.match(text, start)
    return m.end() if m else start


def _generic(name: str, cfg: EntityConfig) -> bool:
    core = _PAREN.sub("", name)
    if name in cfg.generic or core in cfg.generic or len(core) < 2:
        return True
    if any(p.search(core) for p in cfg.generic_patterns):
        return True
    return bool(re.fullmatch(r"[\d\W_]+", core))


def _span_to_stop(text: str, start: int, cfg: EntityConfig) -> int:
    """End of a name that starts at `start`: the first right stop outside brackets."""
    i = start
    while i < len(text):
        paren = _PAREN.match(text, i)
        if paren:
            i = paren.end()
            continue
        if i > start and cfg.right_stops.match(text, i):
            break
        i += 1
    return i


def _introduced(text: str, cfg: EntityConfig) -> list[tuple[int, int, str]]:
    """Names after an introducer ("推荐您去X", "名叫X的") and items of lists ("餐馆有A、B和C")."""
    out: list[tuple[int, int, str]] = []
    if cfg.introducers is not None:
        for m in cfg.introducers.finditer(text):
            start = m.end()
            while (again := cfg.introducers.match(text, start)) is not None:
                start = again.end()
            end = _span_to_stop(text, start, cfg)
            desc = cfg.intro_description.match(text[start:end]) if cfg.intro_description is not None else None
            if desc is not None:
                start += desc.end()
            out.append((start, end, "introduced"))
    if cfg.list_introducers is not None:
        for m in cfg.list_introducers.finditer(text):
            stop = re.search(r"[。；;！？!?\n]", text[m.end() :])
            seg_end = m.end() + stop.start() if stop else len(text)
            pos = m.end()
            for sep in [*cfg.list_separators.finditer(text, m.end(), seg_end), None]:
                end = sep.start() if sep is not None else seg_end
                if _PAREN.search(text, pos, end) is None and sep is not None and text[sep.start() : sep.end()] in "(（":
                    continue
                out.append((pos, end, "listed"))
                pos = sep.end() if sep is not None else seg_end
    return out


def extract_names(
    text: str, turn_id: str, cfg: EntityConfig, claimed: list[tuple[int, int]] | None = None
) -> list[CriticalEntity]:
    """Names: a run ending in a head word, cut on the left at the last cue word.

    >>> from state.core.datafiles import packaged, read_data
    >>> cfg = parse_entity_config(read_data(packaged("entity_patterns.yaml")))
    >>> [e.value for e in extract_names("推荐您去人均消费68元的讲礼驴肉馆用餐。", "t", cfg)]
    ['讲礼驴肉馆']
    >>> [e.value for e in extract_names("可以去和颐酒店北京财满街店住", "t", cfg)]
    ['和颐酒店北京财满街店']
    """
    claimed = list(claimed or [])
    cands: list[tuple[int, int, str]] = []
    parens = [p.span() for p in _PAREN.finditer(text)]
    for m in cfg.head_regex.finditer(text):
        head = m.group(0)
        if _overlaps(m.span(), parens) or (len(head) == 1 and text.startswith(cfg.head_blockers, m.start())):
            continue
        end = m.end()
        paren = _PAREN.match(text, end)
        if paren:
            end = paren.end()
        start = _trim_measure(text, _cut_start(text, _run_start(text, m.start()), m.start(), cfg, len(head)), cfg)
        if start is None:
            continue
        name = text[start:end].strip()
        if not (cfg.min_length <= len(name) <= cfg.max_length) or _generic(name, cfg):
            continue
        if _overlaps((start, end), claimed):
            continue
        category = next(cat for h, cat in cfg.heads if h == head)
        cands.append((start, end, category))
    # A branch in brackets marks a name even without a head word: 呷哺呷哺(百联清城店).
    for ps, pe in parens:
        if any(e == pe for _, e, _ in cands) or ps == 0 or not _NAME_CHAR.match(text[ps - 1]):
            continue
        start = _trim_measure(text, _cut_start(text, _run_start(text, ps), ps, cfg), cfg)
        if start is None:
            continue
        name = text[start:pe]
        if (
            ps - start >= 2
            and len(name) <= cfg.max_length
            and not _generic(name, cfg)
            and not _overlaps((start, pe), claimed)
        ):
            cands.append((start, pe, "branch"))
    head_ends = {(c[0], c[1]) for c in cands}
    for start, end, how in _introduced(text, cfg):
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        name = text[start:end]
        if not (2 <= len(name) <= cfg.max_length) or _generic(name, cfg) or _overlaps((start, end), claimed):
            continue
        # A head-based name that starts or ends where the span does is the better cut.
        if any((s > start and e == end) or s == start for s, e in head_ends):
            continue
        cands.append((start, end, how))
    if cfg.english_name is not None:
        for m in cfg.english_name.finditer(text):
            span = m.span(1)
            if not _overlaps(span, claimed):
                cands.append((span[0], span[1], "place"))
    # Of candidates that share a start, the longest wins (和颐酒店 ⊂ 和颐酒店北京财满街店).
    cands.sort(key=lambda c: (c[0], -(c[1] - c[0])))
    out: list[CriticalEntity] = []
    taken: list[tuple[int, int]] = []
    for start, end, category in cands:
        if _overlaps((start, end), taken):
            continue
        taken.append((start, end))
        out.append(
            CriticalEntity(
                kind="name", value=text[start:end], turn_id=turn_id, category=category, context=_clause_at(text, start)
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class WeakRef:
    mention: str
    head: str
    modifier: str
    start: int


def find_weak_refs(text: str, cfg: EntityConfig) -> list[WeakRef]:
    """Weak references: determiner + optional modifier + a head noun of a known entity kind.

    >>> from state.core.datafiles import packaged, read_data
    >>> cfg = parse_entity_config(read_data(packaged("entity_patterns.yaml")))
    >>> [(w.mention, w.head, w.modifier) for w in find_weak_refs("那个蓝色的盒子还没到，the blue one", cfg)]
    [('那个蓝色的盒子', '盒子', '蓝色'), ('the blue one', 'one', 'blue')]
    """
    refs = [
        WeakRef(m.group(0), m.group("head"), m.group("mod").strip(), m.start())
        for rx in (cfg.weak_zh, cfg.weak_en)
        for m in rx.finditer(text)
    ]
    return sorted(refs, key=lambda r: r.start)


def _specs(head: str, cfg: EntityConfig) -> tuple[str, ...]:
    return cfg.weak_heads.get(head) or cfg.weak_heads.get(head.lower(), ())


def _satisfies(entity: CriticalEntity, spec: str) -> bool:
    kind, _, category = spec.partition(":")
    return entity.kind == kind and (not category or entity.category == category)


def _modifier_tokens(modifier: str, cfg: EntityConfig) -> list[str]:
    mod = modifier.lower().replace("的", "").strip()
    if not mod:
        return []
    tokens = {mod}
    for key, alts in cfg.aliases.items():
        if key in mod:
            tokens.add(key)
            tokens.update(alts)
    return [t for t in tokens if t]


def bind_weak(ref: WeakRef, known: list[CriticalEntity], turn_id: str, cfg: EntityConfig) -> CriticalEntity | None:
    """Bind a weak reference to the best known entity, or return it unbound (None if no head).

    Type first (the head's allowed kinds, in order), then a modifier match against the
    entity's value or the clause it came from, then recency. A modifier that matches no
    candidate leaves the reference unbound rather than guessing.
    """
    specs = _specs(ref.head, cfg)
    if not specs:
        return None
    tokens = _modifier_tokens(ref.modifier, cfg)
    best: tuple[tuple[int, int, int], CriticalEntity] | None = None
    for pos, ent in enumerate(known):
        if ent.strength != "strong" or not ent.bound:
            continue
        rank = next((i for i, spec in enumerate(specs) if _satisfies(ent, spec)), None)
        if rank is None:
            continue
        hay = f"{ent.value} {ent.context or ''}".lower()
        mod_hit = int(any(t in hay for t in tokens)) if tokens else 0
        if tokens and not mod_hit:
            continue
        key = (mod_hit, -rank, pos)
        if best is None or key > best[0]:
            best = (key, ent)
    if best is None:
        kind, _, _category = specs[0].partition(":")
        return CriticalEntity(
            kind=kind,
            value=ref.mention,
            turn_id=turn_id,
            strength="weak",
            category=ref.head,
            mention=ref.mention,
            bound=False,
        )
    target = best[1]
    return CriticalEntity(
        kind=target.kind,
        value=target.value,
        turn_id=turn_id,
        strength="weak",
        category=target.category,
        mention=ref.mention,
        context=target.context,
        bound=True,
    )


def rebind_pending(pending: CriticalEntity, new: list[CriticalEntity], cfg: EntityConfig) -> CriticalEntity:
    """Try to bind an unbound weak reference to entities that just appeared (progressive binding)."""
    refs = find_weak_refs(pending.mention or pending.value, cfg)
    if not refs:
        return pending
    bound = bind_weak(refs[0], new, pending.turn_id, cfg)
    return bound if bound is not None and bound.bound else pending


@dataclass(frozen=True, slots=True)
class TurnEntities:
    strong: tuple[CriticalEntity, ...]
    weak: tuple[CriticalEntity, ...]


def extract_turn_entities(text: str, turn_id: str, known: list[CriticalEntity], cfg: EntityConfig) -> TurnEntities:
    """Strong identifiers and names of this turn, then its weak references bound to what is known.

    >>> from state.core.datafiles import packaged, read_data
    >>> cfg = parse_entity_config(read_data(packaged("entity_patterns.yaml")))
    >>> first = extract_turn_entities("帮我查一下订单DD20261130001的物流", "t1", [], cfg)
    >>> then = extract_turn_entities("顺便帮我取消这个订单", "t2", list(first.strong), cfg)
    >>> [(w.mention, w.value) for w in then.weak]
    [('这个订单', 'DD20261130001')]
    """
    strong, claimed = extract_strong(text, turn_id, cfg)
    names = extract_names(text, turn_id, cfg, claimed)
    fresh = strong + names
    pool = [*known, *fresh]
    weak = []
    for ref in find_weak_refs(text, cfg):
        bound = bind_weak(ref, pool, turn_id, cfg)
        if bound is not None:
            weak.append(bound)
    return TurnEntities(tuple(fresh), tuple(weak))
