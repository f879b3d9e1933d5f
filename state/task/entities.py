"""Progressive entity extraction for the task state (docs/design.md#task-state-machine).

Strong identifiers first (order ids, phone numbers, tracking numbers, amounts, SKUs, e-mails),
then names (a run of text ending in a head word: 讲礼驴肉馆, 北京天伦王朝酒店, Hilton Garden Inn),
then weak references ("这个订单", "那个蓝色的盒子", "the blue one") bound to entities already
known to the task. A weak reference that matches nothing yet stays unbound and is bound later,
when a strong entity of its kind appears. Patterns and lexicons are data
(`state/task/resources/entity_patterns.yaml`); everything here is a pure function.
"""

from __future__ import annotations

from dataclasses import dataclass

from schemas.session import CriticalEntity
from state.task.entity_config import EntityConfig, StrongPattern, parse_entity_config
from state.task.names import extract_names
from state.task.strong import extract_strong

__all__ = [
    "EntityConfig",
    "StrongPattern",
    "TurnEntities",
    "WeakRef",
    "bind_weak",
    "extract_names",
    "extract_strong",
    "extract_turn_entities",
    "find_weak_refs",
    "parse_entity_config",
    "rebind_pending",
]


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
