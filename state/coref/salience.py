"""Salience: whether a name said this turn takes the conversation's focus.

Names listed in passing (周边有A、B、C) or said as background (from 周边, 附近, nearby to the end of the
clause) keep the focus where it was; a name right after a recommendation (推荐您去A, I recommend the
A) is in focus even inside a list; a referent said as where something is (酒店附近, 它周边) is a
landmark for the place named beside it, not the focus. The cue words are the lexicon's
`focus_triggers` and `background_cues`.

Pure functions over a sentence's text.
"""

from __future__ import annotations

import re

from state.coref.lexicon import CorefLexicon

CLAUSE_BREAK = re.compile(r"[，。；;！？!?]")  # where a clause ends: a comma or a stop, zh or en


def after_recommendation(text: str, span: tuple[int, int], lex: CorefLexicon) -> bool:
    """A name right after a recommendation (推荐您去A, I recommend the A): in focus even in a list."""
    lead = max(0, span[0] - 16)
    return any(0 <= span[0] - (lead + h.end) <= 5 for h in lex.focus_triggers.find(text[lead : span[0]]))


def said_as_landmark(text: str, span: tuple[int, int], lex: CorefLexicon) -> bool:
    """A reference said as where something is (酒店附近, 它周边): a background cue right after it."""
    return any(h.start <= 1 for h in lex.background_cues.find(text[span[1] : span[1] + 4]))


def background_ranges(text: str, lex: CorefLexicon) -> list[tuple[int, int]]:
    """Where names are background: from a cue (周边, 附近) to the end of its clause or the next
    recommendation (周边餐馆都不符合，A也不错 / 周边没有，推荐您去A: A is in focus). A list inside the
    clause (周边有A, B、C) stays background."""
    stops = sorted([h.start for h in lex.focus_triggers.find(text)] + [m.start() for m in CLAUSE_BREAK.finditer(text)])
    ranges = []
    for hit in lex.background_cues.find(text):
        end = next((at for at in stops if at >= hit.end), len(text))
        ranges.append((hit.end, end))
    return ranges
