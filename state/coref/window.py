"""The session window's record, `Mention`, and whether a reference's type agrees with one.

A `Mention` is an entity as last named in the session: what an anaphor can resolve to. The
resolver (`state.coref.resolver`) keeps the last ones per session; every finder and chooser of a
referent reads them. `compatibility` grades how a reference's asked type agrees with a mention's
types (2 agree, 1 untyped, 0 disagree); `identifier` tells a record's number or code, which a
pronoun takes only when nothing else fits.

Pure functions over typed records.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from state.coref.anaphora import BUSINESS, RECORD
from state.coref.leads import NO_LEAD, Lead
from state.coref.lexicon import CorefLexicon, unnamed_type
from state.coref.mentions import BARE_IDENTIFIER

# 4th, 12th, 五楼, 3楼, Dr.: a floor, a day of the month or a bare title that a finder took for a name
_NO_REFERENT = re.compile(
    r"\d{1,2}(?:st|nd|rd|th)|[一二三四五六七八九十\d]{1,3}楼|(?:Dr|Mr|Mrs|Ms|Prof)\.?", re.IGNORECASE
)
_CODE = re.compile(r"(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9]+(?:-[A-Z0-9]+)+")  # WRK-99, RMA-55X-9031


@dataclass(frozen=True, slots=True)
class Mention:
    """An entity as last named in the session: what an anaphor can resolve to."""

    entity: str
    surface: str
    types: tuple[str, ...]
    turn_id: str
    sentence: str
    span: tuple[int, int]  # of `surface` in `sentence`
    descriptors: tuple[str, ...]
    seq: int
    salient: bool = True  # False for names listed in passing (周边有A、B): the focus stays where it was
    kinds: tuple[str, ...] = ()  # product words said with the name (headphones, router)
    topic_in: str | None = None  # the sentence that last referred back to it (it is covered under X)
    gender: str | None = None  # a person's, from a title or a gendered pronoun resolved to them
    lead: Lead = NO_LEAD  # kind words its introducing clause tied to it (炖盅是…, booking code …)


def compatibility(anaphor_type: str | None, types: tuple[str, ...], lex: CorefLexicon) -> int:
    """2: the types agree; 1: the mention is untyped; 0: they disagree."""
    if anaphor_type == RECORD:  # 这单: an order, a booking, a ticket or a bare number, never a name
        return 2 if types == (BARE_IDENTIFIER,) or set(types) & lex.record_types else 0
    if not types:  # an untyped name (Beijing, Okta) may be anything but a record: the ticket is no name
        return 0 if unnamed_type(lex, anaphor_type) else 1
    if types == (BARE_IDENTIFIER,):  # 418830 for that case, 这个号码; for 它 only when nothing else fits
        return 1 if anaphor_type is None else 2 if anaphor_type in lex.record_types else 0
    if anaphor_type is None:
        if types == ("person",):
            return 0
        return 1 if set(types) <= lex.pronoun_weak_types else 2
    if anaphor_type == BUSINESS:
        return 2 if set(types) & lex.business_types else 0
    return 2 if anaphor_type in types else 0


def identifier(entity: str, types: tuple[str, ...], lex: CorefLexicon) -> bool:
    """A record's number, or a hyphenated code in capitals and digits whatever a finder typed it
    (campaign WRK-99 read as a product model)."""
    return types == (BARE_IDENTIFIER,) or bool(set(types) & lex.record_types) or _CODE.fullmatch(entity) is not None


def no_referent(entity: str) -> bool:
    """A floor, a day of the month or a bare title (the Ricoh on the 3rd floor, 在五楼, Dr.): said
    beside what is meant, never itself what a pronoun or pointer takes.

    >>> no_referent("4th"), no_referent("五楼"), no_referent("Dr."), no_referent("Dr. Grant"), no_referent("5B")
    (True, True, True, False, False)
    """
    return _NO_REFERENT.fullmatch(entity.strip()) is not None
