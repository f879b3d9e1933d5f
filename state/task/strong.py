"""Strong identifiers (order ids, phone numbers, tracking numbers, amounts, SKUs, e-mails) found by
the patterns of the entity document, each span claimed once."""

from __future__ import annotations

import re

from schemas.session import CriticalEntity
from state.task.entity_config import EntityConfig

_CLAUSE = re.compile(r"[^，。！？；;,.!?\n]+")


def clause_at(text: str, pos: int) -> str:
    for m in _CLAUSE.finditer(text):
        if m.start() <= pos < m.end():
            return m.group(0).strip()[:60]
    return ""


def overlaps(span: tuple[int, int], claimed: list[tuple[int, int]]) -> bool:
    return any(span[0] < e and s < span[1] for s, e in claimed)


def extract_strong(text: str, turn_id: str, cfg: EntityConfig) -> tuple[list[CriticalEntity], list[tuple[int, int]]]:
    """Strong identifiers in pattern order; a span is claimed once.

    >>> from state.core.datafiles import packaged, read_data
    >>> from state.task.entity_config import parse_entity_config
    >>> cfg = parse_entity_config(read_data(packaged("entity_patterns.yaml")))
    >>> [(e.kind, e.value) for e in extract_strong("订单DD20261130001的快递单号SF1234567890", "t", cfg)[0]]
    [('order_id', 'DD20261130001'), ('tracking_number', 'SF1234567890')]
    """
    found: list[CriticalEntity] = []
    claimed: list[tuple[int, int]] = []
    for pat in cfg.strong:
        for m in pat.regex.finditer(text):
            span = m.span(pat.group)
            if overlaps(span, claimed):
                continue
            value = re.sub(r"\s+", "", m.group(pat.group)) if pat.kind != "amount" else m.group(pat.group).strip()
            claimed.append(span)
            found.append(CriticalEntity(kind=pat.kind, value=value, turn_id=turn_id, context=clause_at(text, span[0])))
    order = {id(e): i for i, e in enumerate(found)}
    spans = dict(zip((id(e) for e in found), claimed, strict=True))
    found.sort(key=lambda e: (spans[id(e)][0], order[id(e)]))
    return found, claimed
