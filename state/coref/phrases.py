"""The full noun phrase of an English name: what the customer called the thing, not the part a finder matched.

A finder matches the part of a name it recognises (a brand, a model, capitalised words); the thing
is the noun phrase that part heads or modifies: `Lodge` → `Lodge cast iron skillet`, `OXO salad` →
`OXO salad spinner`, `Oak Park` → `Oak Park CVS`, `Honda CR-` → `Honda CR-V`, `Sony WH-1000XM5` →
`Sony WH-1000XM5 headphones`. From spaCy's part-of-speech tags (`state.coref.taggers`): the name
grows to the right over proper nouns, common nouns and numbers, over a word joined to it without a
space (CR-V, 241-OL, 7-in-1), and over one modifier when a noun follows it (cast iron skillet); it
never grows into another name, and a possessive `'s` is cut (Dr. Patel's → Dr. Patel). Identifiers
and dictionary entries keep their span: they are already exact.

Later references then find the thing by any word of the phrase (the skillet, the spinner), and the
entity recorded is the name as a person would write it down.

Pure functions over one sentence; the tags are cached per text.
"""

from __future__ import annotations

import re
from dataclasses import replace

from state.coref.names import Named, overlaps
from state.coref.taggers import Token, en_tokens

_NOUNISH = frozenset({"PROPN", "NOUN", "NUM"})
_MODIFIER = frozenset({"VERB", "ADJ"})  # cast iron skillet, salad spinner: a word before the head noun
_POSSESSIVE = re.compile(r"['’]s$")
_CJK = re.compile(r"[\u4e00-\u9fff]")
# what a service is sold or kept as, not a word of the thing's name (ReCharge app, Unlimited Plus plan)
_NOT_NAME_NOUNS = frozenset(
    {"app", "apps", "application", "software", "plan", "plans", "card", "account", "accounts", "subscription"}
    | {"membership", "policy", "order", "orders", "menu", "station", "hotel", "store", "shop", "branch"}
    | {"instance", "site", "website", "page", "portal", "service", "team"}
)
_STOP_WORDS = frozenset({"i", "it", "its", "this", "that", "these", "those"})


_TIME_WORDS = frozenset(
    {"today", "tonight", "yesterday", "tomorrow", "morning", "afternoon", "evening", "night", "week", "month"}
    | {"year", "weekend"}
)


def _right_edge(
    text: str,
    tokens: tuple[Token, ...],
    end: int,
    others: list[tuple[int, int]],
    *,
    brand: bool,
    not_things: frozenset[str],
) -> int:
    """Where the noun phrase that a name ending at `end` belongs to ends: joined words and capitalised
    proper nouns always; for a brand said without a model (no digit), the common nouns of the thing
    (Lodge cast iron skillet), unless the last is no product (an account, an app, a plan) or a time."""
    k = next((i for i, t in enumerate(tokens) if t.start >= end), len(tokens))
    edge = end
    common_from: int | None = None  # where the run of lowercase words began
    while k < len(tokens):
        tok = tokens[k]
        if overlaps((tok.start, tok.end), others) or tok.text.lower() in _STOP_WORDS:
            break
        glued = tok.start == edge and (tok.text[:1].isalnum() or tok.text == "-") and text[edge - 1 : edge] != " "
        if common_from is None and (
            glued or (tok.text == "-" and k + 1 < len(tokens) and tokens[k + 1].start == tok.end == edge + 1)
        ):
            edge = tok.end
            k += 1
            continue
        if text[edge : tok.start] != " ":
            break
        if common_from is None and tok.tag == "PROPN" and tok.text[:1].isupper():
            edge = tok.end
            k += 1
            continue
        if not brand:
            break
        nxt = tokens[k + 1] if k + 1 < len(tokens) else None
        noun = tok.tag == "NOUN" and tok.text.isalpha() and tok.text.islower()
        modifier = (
            tok.tag in _MODIFIER
            and tok.text.isalpha()
            and tok.text.islower()
            and nxt is not None
            and nxt.tag == "NOUN"
            and text[tok.end : nxt.start] == " "
        )
        if not (noun or modifier) or tok.text.lower() in _TIME_WORDS:
            break
        if noun and nxt is not None and any(c.isdigit() for c in nxt.text):
            break  # FedEx tracking 773022914458: the noun labels the number said after it
        common_from = edge if common_from is None else common_from
        edge = tok.end
        k += 1
    if common_from is not None:
        last = text[:edge].rsplit(" ", 1)[-1].lower()
        if last in not_things or last in _NOT_NAME_NOUNS or last in _TIME_WORDS or tokens_tag(tokens, edge) != "NOUN":
            edge = common_from
    while edge > end and text[edge - 1] == "-":
        edge -= 1
    return edge


def tokens_tag(tokens: tuple[Token, ...], end: int) -> str | None:
    """The tag of the token ending at `end`."""
    return next((t.tag for t in tokens if t.end == end), None)


_NEXT_WORD = re.compile(r" ([A-Za-z][\w-]*)")
_FUNCTION_WORDS = frozenset(
    {"is", "was", "are", "were", "has", "had", "have", "to", "for", "on", "in", "at", "and", "or", "with", "from"}
    | {"by", "the", "a", "an", "my", "our", "your", "of", "as", "but", "that", "which", "who", "if", "so", "it"}
    | {"says", "said", "will", "can", "does", "did", "got", "be", "been", "not", "this", "about", "into", "yet"}
)


def _may_grow(text: str, named: Named) -> bool:
    """Whether a name could take a word after it: one joined to it, or a word that is no function word."""
    if named.dictionary or named.source == "identifier" or not named.surface.isascii():
        return False
    end = named.span[1]
    if text[end : end + 1].isalnum() or text[end : end + 1] == "-" or named.surface.endswith(("'s", "’s")):
        return True
    word = _NEXT_WORD.match(text, end)
    return word is not None and word.group(1).lower() not in _FUNCTION_WORDS


def full_phrases(text: str, found: list[Named], not_things: frozenset[str] = frozenset()) -> list[Named]:
    """English names widened to their noun phrase (see the module doc); other names unchanged."""
    if _CJK.search(text) or not found or not any(_may_grow(text, n) for n in found):
        return found  # the tagger runs only where a name may grow
    tokens = en_tokens(text)
    # Did the Garmin arrive?: in a question opened by an auxiliary with no verb tagged, the word after
    # the subject is its verb, whatever the tagger says; no common noun is added there
    inverted = bool(tokens) and tokens[0].tag == "AUX" and not any(t.tag == "VERB" for t in tokens)
    out: list[Named] = []
    for i, named in enumerate(found):
        if named.dictionary or named.source == "identifier" or not named.surface.isascii():
            out.append(named)
            continue
        others = [n.span for j, n in enumerate(found) if j != i]
        start, end = named.span
        brand = not inverted and not any(c.isdigit() for c in named.surface)  # a model's name ends with it
        edge = _right_edge(text, tokens, end, others, brand=brand, not_things=not_things)
        surface = text[start:edge]
        cut = _POSSESSIVE.search(surface)
        if cut is not None:
            surface = surface[: cut.start()]
        if surface == named.surface:
            out.append(named)
            continue
        if named.entity == named.surface:
            entity = surface
        elif surface.startswith(named.surface):
            entity = named.entity + surface[len(named.surface) :]
        else:
            entity = _POSSESSIVE.sub("", named.entity)
        out.append(replace(named, surface=surface, entity=entity, span=(start, start + len(surface))))
    return out
