"""Category knowledge: what kind of thing a brand or product line is.

A customer names a thing once (MacBook Pro, 雷蛇黑寡妇V4, Confluence, 用友U8) and then calls it by
its kind (这台电脑, 键盘那单, the wiki, 这个系统). Nothing in the name says the kind, so the lexicon's
`categories` section lists, per kind, the category nouns that name it and the brand and product-line
words whose names are of that kind. A name holding one of those words takes the kind's nouns as its
own product words, exactly as if it had been said with them (MacBook Pro laptop).

A pure function over the entity name; the word index matches ASCII words on word boundaries.
"""

from __future__ import annotations

from state.coref.lexicon import CorefLexicon


def category_nouns(entity: str, lex: CorefLexicon) -> tuple[str, ...]:
    """The category nouns of every kind a brand or product-line word of `entity` belongs to, in
    lexicon order, without repeats (MacBook Pro → 电脑, 笔记本, laptop, computer …)."""
    nouns: dict[str, None] = {}
    for hit in lex.categories.find(entity):
        nouns.update(dict.fromkeys(hit.value))
    return tuple(nouns)
