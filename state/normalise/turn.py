"""A conversation turn as it moves through the write path, and its normalisation (docs/design.md#time).

`Turn` is the slotted record passed between write-path operators; each operator fills its
own fields with `dataclasses.replace` and leaves the rest alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

from schemas.events import ConversationEvent
from schemas.memory import CorefAnchor, TimeExpression
from schemas.session import TaskAnnotation
from state.core.language import LangMix, Sentence, clean_text, language_mix, split_sentences
from state.normalise.segments import Segment, SegmentTags, UnitSpan, segment_sentences
from state.terms.whitelist import SentenceNote
from state.time.extract import normalise_times


@dataclass(frozen=True, slots=True)
class Turn:
    event: ConversationEvent
    lang: LangMix
    text: str
    sentences: tuple[Sentence, ...]
    times: tuple[TimeExpression, ...]
    task_id: str | None = None

    # -- write-time filters I (coreference, terms, authority): fields written by coref and terms --
    coref: tuple[CorefAnchor, ...] = ()  # anchors of the whole turn, in text order
    terms: tuple[str, ...] = ()  # whitelisted terms of the turn, first occurrence order
    sentence_notes: tuple[SentenceNote, ...] = ()  # one per sentence: terms, entropy shortcut, authority
    priority_flag: bool = False  # any sentence holds an authority word

    # -- write-time filters II (intent/emotion tags, entropy): fields written by tagging and entropy --
    # Read by the entropy cut, written upstream by the term/authority filter; aligned
    # with `sentences`, missing entries mean the defaults (no priority, no override):
    #   sentence_priority[i]          authority sentence: priority_flag, entropy >= 0.5, never merged
    #   sentence_entropy_override[i]  e.g. 0.1 for a short sentence holding a whitelisted term (skips entropy)
    sentence_priority: tuple[bool, ...] = ()
    sentence_entropy_override: tuple[float | None, ...] = ()
    # Written by tagging (operators/tagging.py) and the entropy cut (operators/entropy.py):
    segments: tuple[Segment, ...] = ()  # clause-level segments of the sentences
    tags: tuple[SegmentTags, ...] = ()  # aligned with segments
    turn_intent: tuple[float, ...] = ()  # the turn's main intent, 6 probabilities (CLASSES order)
    turn_intent_label: str = "neutral"
    segment_entropy: tuple[float, ...] = ()  # aligned with segments, 0–1
    unit_cut: tuple[UnitSpan, ...] = ()  # the memory units: atomic segments and merged low-entropy runs
    unit_emotion: tuple[tuple[float, float, float, float], ...] = ()  # per unit, lexicon + head (stress … cooperation)

    # -- task state machine and validity: fields written by the task state machine --
    # The task state machine's verdict on this turn (stage, transition, goal anchor with a
    # clarification question, entities it named or referred to, commitments it looked back at).
    # `task_id` above is set to the task the turn belongs to.
    task: TaskAnnotation | None = None

    # -- unit types: written by the unit-emotion stage where the unit-type head ran --
    # (last, so that a turn held in a snapshot taken before it existed restores field by field)
    unit_kinds: tuple[str, ...] = ()  # per unit, rules and head together; empty: the segments' types decide

    def __setstate__(self, state: Sequence[object]) -> None:
        # A turn snapshotted before a trailing field existed restores with that field's default.
        values = [*state, *(f.default for f in fields(self)[len(state) :])]
        for f, value in zip(fields(self), values, strict=False):
            object.__setattr__(self, f.name, value)


@dataclass(frozen=True, slots=True)
class NormaliseConfig:
    timezone: str = "UTC"
    pause_split_ms: int = 700


def normalise_turn(event: ConversationEvent, config: NormaliseConfig) -> Turn:
    """Clean, split and time-normalise one turn against the event's own timestamp.

    >>> from datetime import UTC, datetime
    >>> ev = ConversationEvent(event_id="e", session_id="s", ts=datetime(2026, 1, 1, 8, tzinfo=UTC),
    ...                        text="明天下午三点开会")
    >>> normalise_turn(ev, NormaliseConfig()).times[0].start.isoformat()
    '2026-01-02T15:00:00+00:00'
    """
    mix = language_mix(event.text)
    text = clean_text(event.text, mix)
    pauses = event.asr.pauses if event.asr is not None else ()
    sentences = split_sentences(text, pauses, pause_split_ms=config.pause_split_ms)
    times = normalise_times(text, event.ts, mix, timezone=event.tz or config.timezone)
    return Turn(event=event, lang=mix, text=text, sentences=sentences, times=times)


def segmented(turn: Turn) -> Turn:
    """The turn with its segments (tagging cuts them; without tagging, cut here the same way)."""
    return turn if turn.segments else replace(turn, segments=segment_sentences(turn.sentences, source=turn.text))
