"""How firmly something is said: hedges and commitment strength, both languages.

Two hedge rules, data in `state/tagging/resources/tagging.yaml` (`hedge`):

* the narrow one — a promise with an effort adverb (尽力, 尽量, 争取; try to, do our best) about a
  negotiable object (价格, 工期; price, deadline) is a request for room, not a promise (`hedged`);
* the general one — a hedge marker (应该, 估计, 可能, 大概, 也许, sentence-final 吧; maybe, probably,
  I think, should be, might …) makes what is said uncertain, and a hedged promise (a commitment, or
  `promise_shape`: the speaker undertaking something) is a weak one (`hedge_marker`); in a real
  question or a polite request (`politeness`) a hedge is politeness and changes nothing.

Commitment strength is the first matching tier of the strength table. Pure functions.
"""

from __future__ import annotations

from state.tagging.lexicon import TagLexicon
from state.tagging.rules import cue_langs


def _has_any(text: str, words: tuple[str, ...]) -> bool:
    return any(w in text for w in words)


def hedged(text: str, lex: TagLexicon) -> bool:
    """Hedge adverb and negotiable object in the same segment (either language).

    >>> from state.tagging.lexicon import load_lexicon
    >>> hedged("这个价格我们尽力争取", load_lexicon()), hedged("价格已确认", load_lexicon())
    (True, False)
    """
    h = lex.hedge
    for lang in cue_langs(text):
        if lang != "any" and _has_any(text, h.adverbs.get(lang, ())) and _has_any(text, h.objects.get(lang, ())):
            return True
    return False


def hedge_marker(text: str, lex: TagLexicon) -> str | None:
    """The first hedge marker in the segment (应该, 估计, 可能, 大概, 也许, 吧; maybe, probably, I think …).

    >>> from state.tagging.lexicon import load_lexicon
    >>> lex = load_lexicon()
    >>> hedge_marker("应该可以吧", lex), hedge_marker("it should be there tomorrow", lex), hedge_marker("已发货", lex)
    ('应该', 'should be', None)
    """
    for lang in cue_langs(text):
        pattern = lex.hedge.markers.get(lang)
        m = pattern.search(text) if pattern is not None and lang != "any" else None
        if m is not None:
            return m.group(0)
    return None


def politeness(text: str, label: str, lex: TagLexicon) -> bool:
    """A real question or a polite request: a hedge in it is politeness, not doubt.

    >>> from state.tagging.lexicon import load_lexicon
    >>> lex = load_lexicon()
    >>> politeness("could you maybe check?", "request", lex), politeness("我不太确定是不是这个订单", "question", lex)
    (True, False)
    """
    if label not in ("question", "clarify", "request"):
        return False
    langs = cue_langs(text)
    return any(p.search(text) for lang, p in lex.hedge.polite.items() if lang in langs)


def promise_shape(text: str, lex: TagLexicon) -> bool:
    """The speaker undertaking something (我们…能发货, we'll … ship): hedged, it is a weak promise.

    >>> from state.tagging.lexicon import load_lexicon
    >>> promise_shape("我们明天应该能发货", load_lexicon()), promise_shape("可能是快递的问题", load_lexicon())
    (True, False)
    """
    langs = cue_langs(text)
    return any(p.search(text) for lang, p in lex.hedge.promise.items() if lang in langs)


def commitment_strength(text: str, lex: TagLexicon) -> float:
    """The first matching tier of the strength table (try 0.3 before promise 1.0 before will 0.7)."""
    langs = cue_langs(text)
    for rule in lex.strength_rules:
        if rule.lang in langs and rule.regex.search(text):
            return rule.strength
    return 0.0
