"""Coreference with dynamic windows (docs/design.md#coreference): per-session mention window and its pure transition.

State: `CorefState` per session — the last mentions of entities (`state.coref.window.Mention`, at
most `wide_window`, 80), the type the conversation is about (`focus`), the last event time, the
session's last sentences, and the end of the session if one was announced. Each turn: entity
mentions are found (`state.coref.mentions`) and entities of the window said again
(`state.coref.said_again`), anaphors (`state.coref.anaphora`) are resolved against the last
`window` mentions (50), or `wide_window` (80) when the turn holds a back-reference cue (上一轮, 刚才,
上次, 之前, earlier, last time), plus the mentions earlier in the same turn; the most recent
type-compatible mention wins, a weak reference (那个蓝色的盒子, the blue one) binds to the entity its
descriptor was said with (`state.coref.choice`, `state.coref.cues`), an ordinal to the listed entity
(`state.coref.ordinals`), a pick by price to the option (`state.coref.prices`), a noun the window does
not hold to a phrase found again in the last sentences (`state.coref.found_again`). Names listed in
passing or said as background keep the focus (`state.coref.salience`). The guess is explicit
(`state.coref.anchors`): every chosen referent fills `antecedent_span` (offsets in
`context_window`), `antecedent_turn_id` and `context_window` (the sentence where the antecedent was
last named). Questions whose verb is 问/咨询/确认 go to review: `needs_human_review`, and the referent
of the questioner (a person, or anything before the verb) is cleared, not guessed.

This module holds the turn transition itself, `resolve_turn`: the order the finders run in, and
what a turn writes back to the window (new mentions, refreshed referents, the types and topics
they learned).

Discarded: on SessionEnd (`end_session` marks it; the operator drops it after a grace period so
a turn still in flight resolves the same), and by the operator's idle timer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime

from schemas.memory import CorefAnchor
from state.core.language import Sentence
from state.coref.agreement import agreeing, pronoun_gender, title_gender
from state.coref.anaphora import (
    BUSINESS,
    RECORD,
    Anaphor,
    classifier_type,
    find_anaphors,
    has_backref_cue,
    question_rule_applies,
    zero_anaphor,
)
from state.coref.anchors import anaphor_anchor, entity_anchor, under_question_rule
from state.coref.choice import choose, pronoun_hint
from state.coref.cues import bound_by_cue, modifier_cues, one_references
from state.coref.found_again import found_again, other_of_pair
from state.coref.heads import Pointer, pointers, the_other
from state.coref.leads import lead_words
from state.coref.lexicon import CorefLexicon, open_names_on
from state.coref.mentions import extract_mentions, titled_start
from state.coref.names import Named, overlaps
from state.coref.people import full_name_of
from state.coref.prices import by_price, compared_spans, price_comparison
from state.coref.said_again import bridged, short_forms, shortened, tail_references
from state.coref.salience import after_recommendation, background_ranges, said_as_landmark
from state.coref.window import Mention, compatibility, identifier

__all__ = ["CorefConfig", "CorefState", "CorefTurn", "Mention", "end_session", "resolve_turn"]

_RECENT = 12  # sentences kept for antecedents found again by their head noun or as listed items
_TOPIC_PRONOUNS = frozenset({"it", "its", "they", "them", "he", "she", "him", "her", "它", "他", "她"})


@dataclass(frozen=True, slots=True)
class CorefConfig:
    window: int = 50
    wide_window: int = 80


@dataclass(frozen=True, slots=True)
class CorefState:
    mentions: tuple[Mention, ...] = ()
    seq: int = 0
    focus: str | None = None
    last_ts: datetime | None = None
    ended_at: datetime | None = None
    recent: tuple[tuple[str, str], ...] = ()  # (turn id, sentence) of the last sentences, oldest first


@dataclass(frozen=True, slots=True)
class CorefTurn:
    """What the resolver needs of a turn."""

    turn_id: str
    ts: datetime
    sentences: tuple[Sentence, ...]


def _topic_setter(anaphor: Anaphor) -> bool:
    """A reference that makes its referent the sentence's topic: a pronoun, or an English definite
    (the package had my charger in it)."""
    return anaphor.text.lower() in _TOPIC_PRONOUNS or (anaphor.text.isascii() and anaphor.kind == "anaphor")


_FORMER = re.compile(r"(?:之前|以前|原来|上一任|前任)的?$|\b(?:former|previous|old)\s+$")
_SHE_IS = re.compile(r"她(?:叫|是)$")


def _gender(text: str, named: Named, lex: CorefLexicon) -> str | None:
    """A person's gender from a title or given name (Ms. Lee, Beth), or from 她叫/她是 right before the
    name (她叫陈秀兰: 她 is said of women only)."""
    if "person" not in named.types:
        return None
    return title_gender(named.entity, lex.given_genders) or ("f" if _SHE_IS.search(text, 0, named.span[0]) else None)


def _one_reference(text: str, span: tuple[int, int], only: bool, lex: CorefLexicon) -> Anaphor:
    """The home one, the auto policy (a reference only when its cue binds), the upstairs guy (a person:
    with no cue bound, the person in focus)."""
    person = _person_or_none(text[span[0] : span[1]].split()[-1], lex)
    descriptors = ("cue",) if only and person is None else ()
    return Anaphor(text[span[0] : span[1]], span, "weak", person, None, descriptors, 0.6)


def _person_or_none(said: str, lex: CorefLexicon) -> str | None:
    """The other trainer, 另一位师傅: a person, counted among the people of the last pair; else untyped."""
    return "person" if any(h.value == "person" for h in lex.type_nouns.find(said.lower())) else None


_ZH_ORIGINAL = re.compile(r"(?:原来|原先|原本|以前|现在|目前)(?:用)?的?$")
_EN_ORIGINAL = re.compile(r"\b(?:original|current|existing|old)\b|^\s+(?:I|we)(?:'ve| have|'re| are) (?:now|on)\b")


def _first_said(text: str, anaphor: Anaphor, earlier: list[Mention], lex: CorefLexicon) -> Mention | None:
    """原来那个套餐, 现在这个版本, the plan I have now, the original flight: the customer's own one, said
    before the options that followed it: the first-said entity of the type asked for (None: no such cue,
    or the reference is untyped)."""
    noun = next((h.value for h in lex.type_nouns.find(anaphor.text.lower())), None)
    asked = anaphor.type or noun or classifier_type(anaphor.text)
    if asked is None or asked == BUSINESS or (anaphor.text.isascii() and asked in lex.thing_types):
        return None  # the original box: in English a thing's own packaging or part as often as the thing
    said = anaphor.text if anaphor.text.isascii() else ""
    after = text[anaphor.span[1] : anaphor.span[1] + 16] if said else ""
    cue = (
        _EN_ORIGINAL.search(said) or _EN_ORIGINAL.match(after) if said else _ZH_ORIGINAL.search(text[: anaphor.span[0]])
    )
    if cue is None:
        return None
    typed = [m for m in earlier if compatibility(asked, m.types, lex) == 2]
    return min(typed, key=lambda m: m.seq) if len({m.entity for m in typed}) >= 2 else None


def _title_of_name(text: str, anaphor: Anaphor, named: list[Named]) -> bool:
    """吕晓曼医生, 冯涛医生和…, the Samsung WW90T washer: a bare type noun right after a name is that
    name's title or kind word, not a reference to someone or something said before. Only a name the
    finders read in the sentence counts: one found again by its spelling alone may be part of a longer
    word (任课老师)."""
    if anaphor.head is None or anaphor.text != anaphor.head:
        return False
    return any(
        n.source != "known" and 0 <= anaphor.span[0] - n.span[1] <= 1 and not text[n.span[1] : anaphor.span[0]].strip()
        for n in named
    )


def _pointer_at(anaphor: Anaphor, found: list[Pointer]) -> Pointer | None:
    return next((p for p in found if overlaps(anaphor.span, [p.span])), None)


def _learned_types(chosen: Mention, anaphor: Anaphor) -> tuple[str, ...]:
    """An untyped name a typed reference bound to (Microsoft Teams … the app) is of that type from now on."""
    if chosen.types or anaphor.type in (None, BUSINESS, RECORD) or anaphor.kind == "contrast":
        return chosen.types
    return (anaphor.type,)


def _lead_start(named: list[Named], start: int) -> int:
    """Where the words said with a name starting at `start` begin: after the name said before it in the
    sentence, unless that one runs into it (Dispute reference DSP-88213-K: the words read as a name
    label the identifier)."""
    before = [n.span for n in named if n.span[1] <= start]
    if not before:
        return 0
    last = max(before, key=lambda span: span[1])
    if start - last[1] <= 1:
        return max((b for _, b in before if b < last[0]), default=0)
    return last[1]


def end_session(state: CorefState | None, ts: datetime) -> CorefState | None:
    """A SessionEnd at `ts`: keep the window for turns still in flight, mark where the session ended."""
    return None if state is None else replace(state, ended_at=ts)


def resolve_turn(
    state: CorefState | None, turn: CorefTurn, config: CorefConfig, lex: CorefLexicon
) -> tuple[CorefState, tuple[CorefAnchor, ...]]:
    """Resolve one turn's references; returns the new state and the turn's anchors, in text order.

    >>> from datetime import UTC, datetime
    >>> from state.coref.lexicon import load_coref_lexicon
    >>> from state.core.language import split_sentences
    >>> lex, cfg, ts = load_coref_lexicon().get(), CorefConfig(), datetime(2026, 1, 1, tzinfo=UTC)
    >>> s, _ = resolve_turn(None, CorefTurn("t1", ts, split_sentences("推荐您去人均68元的讲礼驴肉馆用餐。")), cfg, lex)
    >>> s, anchors = resolve_turn(s, CorefTurn("t2", ts, split_sentences("这家餐馆的地址在哪？")), cfg, lex)
    >>> anchors[0].mention, anchors[0].resolved_entity, anchors[0].antecedent_turn_id
    ('这家餐馆', '讲礼驴肉馆', 't1')
    """
    if state is None or (state.ended_at is not None and turn.ts > state.ended_at):
        state = CorefState()
    text = " ".join(s.text for s in turn.sentences)
    size = config.wide_window if has_backref_cue(text, lex) else config.window
    window = list(state.mentions[-size:])
    recent = list(state.recent)
    seq = state.seq
    new: list[Mention] = []
    anchors: list[CorefAnchor] = []
    focus = state.focus
    referred = False
    landmarks: set[int] = set()  # refreshed referents said as a landmark (酒店附近)
    previous: str | None = None
    for sentence in turn.sentences:
        named = titled_start(previous, sentence.text, extract_mentions(sentence.text, lex, focus=state.focus))
        previous = sentence.text
        named = sorted(named + short_forms(sentence.text, window + new, named, lex), key=lambda n: n.span)
        tails = tail_references(sentence.text, window + new, [n.span for n in named], lex)
        tails |= bridged(sentence.text, window + new, [n.span for n in named] + list(tails), lex)
        anaphors = find_anaphors(sentence.text, lex, [n.span for n in named] + list(tails))
        pointed = pointers(sentence.text) if open_names_on(lex) else []  # the taggers stay off without it
        taken = [n.span for n in named] + [a.span for a in anaphors] + list(tails)
        tagged_only = [
            Anaphor(sentence.text[p.span[0] : p.span[1]], p.span, "anaphor", None, p.head, confidence=0.6)
            for p in pointed
            if not overlaps(p.span, taken)
        ]  # 这盒葡萄, that store: kept only when found again below
        anaphors += tagged_only
        taken += [a.span for a in tagged_only]
        contrasts = [a.span for a in anaphors if a.kind == "contrast"]  # the other card: one of a pair
        others = [
            Anaphor(sentence.text[a:b], (a, b), "weak", _person_or_none(sentence.text[a:b], lex), None, ("other",), 0.6)
            for a, b in the_other(sentence.text)
            if not overlaps((a, b), [t for t in taken if t not in contrasts])
        ]
        anaphors = [a for a in anaphors if not any(overlaps(a.span, [o.span]) for o in others)] + others
        taken += [o.span for o in others]
        anaphors += [  # the home one, the cancelled one, the auto policy: bound by the word said with it
            _one_reference(sentence.text, (a, b), only, lex) for (a, b), _, only in one_references(sentence.text, taken)
        ]
        taken += [a.span for a in anaphors]
        anaphors += [  # 做便宜的吧: a pick by price that no other finder took
            Anaphor(sentence.text[a:b], (a, b), "weak", None, None, ("price",), 0.6)
            for a, b in compared_spans(sentence.text, taken)
        ]
        anaphors = sorted(anaphors + [a for a, _ in tails.values()], key=lambda a: a.span)
        anaphors = [a for a in anaphors if not _title_of_name(sentence.text, a, named)]
        spoken = [*recent, *((turn.turn_id, s.text) for s in turn.sentences[: turn.sentences.index(sentence)])]
        events: list[tuple[int, Named | Anaphor]] = [(n.span[0], n) for n in named] + [(a.span[0], a) for a in anaphors]
        listed = len({n.entity for n in named if not n.dictionary and n.source not in ("frame", "open")}) >= 2
        background = background_ranges(sentence.text, lex)
        for _, item in sorted(events, key=lambda e: e[0]):
            seq += 1
            if isinstance(item, Named):
                known = shortened(item, window + new)
                if known is not None:
                    item = replace(item, entity=known.entity, types=known.types)
                elif item.types == ("person",):
                    people = [m.entity for m in window + new if "person" in m.types]
                    item = replace(item, entity=full_name_of(item.entity, people, lex) or item.entity)
                anchors.append(entity_anchor(item, sentence, turn.turn_id))
                recommended = after_recommendation(sentence.text, item.span, lex)
                salient = (recommended or not listed) and not any(a <= item.span[0] < b for a, b in background)
                if "person" in item.types and _FORMER.search(sentence.text, 0, item.span[0]):
                    salient = False  # 现在是刘老师带，之前的何老师调走了: the former one is not who is meant next
                new.append(
                    Mention(
                        item.entity,
                        item.surface,
                        item.types,
                        turn.turn_id,
                        sentence.text,
                        item.span,
                        item.descriptors,
                        seq,
                        salient,
                        item.kinds,
                        gender=_gender(sentence.text, item, lex),
                        lead=lead_words(
                            sentence.text,
                            item.span,
                            identifier=identifier(item.entity, item.types, lex),
                            since=_lead_start(named, item.span[0]),
                        ),
                    )
                )
                continue
            chosen: Mention | None
            direction = price_comparison(sentence.text, item.span)
            priced = None
            if direction is not None:
                priced = by_price(direction, [m for m in window + new if m.sentence != sentence.text])
            original = _first_said(sentence.text, item, [m for m in window + new if m.sentence != sentence.text], lex)
            if priced is not None:
                chosen, confidence = priced, 0.7
            elif original is not None:
                chosen, confidence = original, 0.6
            elif "price" in item.descriptors:
                continue  # a price compared with no priced options said: no reference
            elif item.span in tails and tails[item.span][0] is item:
                chosen, confidence = tails[item.span][1], item.confidence
            elif "other" in item.descriptors:
                chosen, confidence = other_of_pair(item, window + new, spoken, lex), 0.6
            else:
                pool = agreeing(pronoun_gender(item.text), window + new)
                chosen, confidence = choose(item, pool, lex, pronoun_hint(sentence.text, item, lex))
                pointer = _pointer_at(item, pointed)
                head = pointer.head if pointer is not None else None
                earlier = [m for m in window + new if m.sentence != sentence.text]
                cues = modifier_cues(sentence.text, item.span, head or item.head)
                cued = bound_by_cue(cues, earlier, people=item.type == "person") if cues else None
                if cued is None and cues and item.type is None:
                    # the husky after "a husky named Blizzard": a pet or thing the finders typed a person
                    cued = bound_by_cue(cues, earlier, people=True)
                if cued is None and "cue" in item.descriptors:
                    continue  # the X Y with no X said beside anything: no reference
                again = None if cued is not None else found_again(item, head, chosen, spoken, window + new, lex)
                if again is not None and item.type == "person" and "person" not in again.types:
                    again = None  # the upstairs guy: a person, never the flat said with "upstairs"
                if cued is None and again is None and (head or item.head) and chosen is None:
                    cued = bound_by_cue((head or item.head or "",), earlier, people=item.type == "person")
                if cued is not None:
                    chosen, confidence = cued, 0.7
                elif again is not None:
                    chosen, confidence = replace(again, seq=seq), 0.6
                elif (
                    item.head is not None
                    and any(item is a for a in tagged_only)
                    and (chosen is None or (item.head not in chosen.entity.lower() and item.head not in chosen.kinds))
                ):
                    continue  # a pointer and a noun found by the tags alone, with nothing found again
            if (
                chosen is not None
                and item.head is not None
                and item.head == item.text
                and item.type in lex.thing_types
                and item.head.lower() not in chosen.entity.lower()
                and item.head.lower() not in chosen.kinds
            ):
                chosen = None  # 手机可以 after a MacBook and a Wi-Fi name: a bare product noun is the customer's own
            if chosen is None and (item.head == item.text or item.kind == "contrast"):
                continue  # a bare type noun (酒店有么？) or a contrast with nothing of its type said: no reference
            anchors.append(anaphor_anchor(item, sentence, chosen, confidence))
            referred = True
            if chosen is not None:  # the entity is back in focus: refresh its recency, keep where it was named
                if said_as_landmark(sentence.text, item.span, lex):
                    landmarks.add(len(new))
                new.append(
                    replace(
                        chosen,
                        descriptors=tuple(dict.fromkeys(chosen.descriptors + item.descriptors)),
                        seq=seq,
                        salient=True,
                        types=_learned_types(chosen, item),
                        topic_in=sentence.text if _topic_setter(item) else chosen.topic_in,
                        gender=(pronoun_gender(item.text) if "person" in chosen.types else None) or chosen.gender,
                    )
                )
        if not named and not referred:
            zero = zero_anaphor(sentence.text, lex)
            if zero is not None:
                chosen, confidence = choose(zero, window + new, lex)
                anchors.append(anaphor_anchor(zero, sentence, chosen, confidence))
                referred = True
        type_words = [h.value for h in lex.type_nouns.find(sentence.text)]
        if type_words:
            focus = type_words[-1]
        clause = question_rule_applies(sentence.text, lex)
        if clause is not None:
            for i, anchor in enumerate(anchors):
                if anchor.mention_span and sentence.start <= anchor.mention_span[0] < sentence.end:
                    anchors[i] = under_question_rule(anchor, sentence, clause)
    if any(m.salient and m.turn_id == turn.turn_id for m in new):
        # 去中国动物博物馆吧，在酒店附近: the hotel is a landmark for the place named, not the focus
        new = [replace(m, salient=False) if i in landmarks else m for i, m in enumerate(new)]
    mentions = (state.mentions + tuple(new))[-config.wide_window :]
    said = (*state.recent, *((turn.turn_id, s.text) for s in turn.sentences))[-_RECENT:]
    return CorefState(mentions, seq, focus, turn.ts, state.ended_at, said), tuple(anchors)
