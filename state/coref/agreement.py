"""Gender agreement for personal pronouns: he/him never binds to a person already referred to as she/her.

A person's gender is known from a title said with the name (Mr. Li, Ms. Alvarez, 王女士, 李先生) or
from a gendered pronoun that was resolved to them earlier (… reschedule with her → Dr. Patel is
she). A gendered pronoun then (1) skips people known to be of the other gender and (2) keeps the
person it continues: when someone of its gender was referred to in the last two turns, that person
is meant rather than a newcomer whose gender is unknown (centring: a pronoun continues the entity
the previous turn referred to by pronoun). English he/she/him/her and Chinese 她 carry a gender;
Chinese 他 is said of anyone and carries none.

Pure functions over the window's mentions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Protocol, TypeVar

_MALE = frozenset({"he", "him", "his", "himself"})
_FEMALE = frozenset({"she", "her", "hers", "herself", "她"})
_TITLE_MALE = re.compile(r"^(?:Mr\.?|Sir)\s|先生$")
_TITLE_FEMALE = re.compile(r"^(?:Mrs\.?|Ms\.?|Miss)\s|(?:女士|小姐)$")


class _Said(Protocol):
    @property
    def entity(self) -> str: ...
    @property
    def types(self) -> tuple[str, ...]: ...
    @property
    def turn_id(self) -> str: ...
    @property
    def gender(self) -> str | None: ...


def pronoun_gender(text: str) -> str | None:
    """'m' or 'f' for a gendered personal pronoun, else None."""
    word = text.lower()
    return "m" if word in _MALE else "f" if word in _FEMALE else None


def title_gender(name: str, given: Mapping[str, str] | None = None) -> str | None:
    """'m' or 'f' from a title said with a person's name, else from a common given name opening it
    (`given`: lower-cased name → gender; Andre Silva, Beth Nakamura).

    >>> title_gender("Ms. Lee"), title_gender("Beth Nakamura", {"beth": "f"}), title_gender("Lee")
    ('f', 'f', None)
    """
    if _TITLE_MALE.search(name):
        return "m"
    if _TITLE_FEMALE.search(name):
        return "f"
    first = name.split()[0].lower() if given and name.isascii() and name.strip() else ""
    return given.get(first) if given and first else None


def known_gender(entity: str, mentions: Sequence[_Said]) -> str | None:
    """The gender last learned for `entity` in the window."""
    return next((m.gender for m in reversed(mentions) if m.entity == entity and m.gender), None)


M = TypeVar("M", bound=_Said)


def agreeing(gender: str | None, candidates: list[M]) -> list[M]:
    """The candidates a pronoun of `gender` may take (see the module doc), in their order."""
    if gender is None:
        return candidates
    genders = {m.entity: known_gender(m.entity, candidates) for m in candidates}
    kept = [m for m in candidates if genders[m.entity] in (None, gender)]
    turns = list(dict.fromkeys(m.turn_id for m in kept))[-2:]
    continued = [m for m in kept if genders[m.entity] == gender and m.turn_id in turns and "person" in m.types]
    if continued:
        return [m for m in kept if "person" not in m.types or genders[m.entity] == gender]
    return kept
