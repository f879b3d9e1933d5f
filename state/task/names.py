"""Names without a dictionary: a run of text ending in a head word (讲礼驴肉馆, 北京天伦王朝酒店,
Hilton Garden Inn), cut on the left at the last cue word; names after an introducer or in a list;
a branch in brackets."""

from __future__ import annotations

import re

from schemas.session import CriticalEntity
from state.task.entity_config import EntityConfig
from state.task.strong import clause_at, overlaps

_PAREN = re.compile(r"[（(][^（）()]{1,20}[)）]")
_NAME_CHAR = re.compile(r"[\u4e00-\u9fffA-Za-z0-9·&\-]")


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
        if not overlaps((m.start(), end), keep):
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
    >>> from state.task.entity_config import parse_entity_config
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
        if overlaps(m.span(), parens) or (len(head) == 1 and text.startswith(cfg.head_blockers, m.start())):
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
        if overlaps((start, end), claimed):
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
            and not overlaps((start, pe), claimed)
        ):
            cands.append((start, pe, "branch"))
    head_ends = {(c[0], c[1]) for c in cands}
    for start, end, how in _introduced(text, cfg):
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        name = text[start:end]
        if not (2 <= len(name) <= cfg.max_length) or _generic(name, cfg) or overlaps((start, end), claimed):
            continue
        # A head-based name that starts or ends where the span does is the better cut.
        if any((s > start and e == end) or s == start for s, e in head_ends):
            continue
        cands.append((start, end, how))
    if cfg.english_name is not None:
        for m in cfg.english_name.finditer(text):
            span = m.span(1)
            if not overlaps(span, claimed):
                cands.append((span[0], span[1], "place"))
    # Of candidates that share a start, the longest wins (和颐酒店 ⊂ 和颐酒店北京财满街店).
    cands.sort(key=lambda c: (c[0], -(c[1] - c[0])))
    out: list[CriticalEntity] = []
    taken: list[tuple[int, int]] = []
    for start, end, category in cands:
        if overlaps((start, end), taken):
            continue
        taken.append((start, end))
        out.append(
            CriticalEntity(
                kind="name", value=text[start:end], turn_id=turn_id, category=category, context=clause_at(text, start)
            )
        )
    return out
