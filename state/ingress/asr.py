"""ASR transcript → ConversationEvents (modality "asr"), as pure functions.

Input: a `Transcript` (segments with word timings and probabilities, as a speech model
returns them). Output: `ConversationEvent`s: consecutive words are one event until a
silence of at least `turn_gap_ms`; inside an event, a gap of at least `pause_ms` between
two words is an `AsrPause` after the character that ends the first word. Confidence is
the mean word probability. Event ids are derived from the audio name and start offset,
so transcribing the same file twice gives the same events (and the same memory ids).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from schemas.events import AsrInfo, AsrPause, AsrWord, ConversationEvent, MetaValue, SpeakerRole


@dataclass(frozen=True, slots=True)
class Word:
    text: str  # as the model gives it, leading space included for space-delimited languages
    start_ms: int
    end_ms: int
    probability: float


@dataclass(frozen=True, slots=True)
class Segment:
    start_ms: int
    end_ms: int
    text: str
    words: tuple[Word, ...]
    avg_logprob: float


@dataclass(frozen=True, slots=True)
class Transcript:
    language: str
    language_probability: float
    duration_ms: int
    segments: tuple[Segment, ...]


@dataclass(frozen=True, slots=True)
class AsrLayout:
    pause_ms: int = 300
    turn_gap_ms: int = 1500


def utterances(transcript: Transcript, layout: AsrLayout) -> list[list[Word]]:
    """Words grouped into utterances split at silences of at least `turn_gap_ms`.

    >>> w = lambda t, s, e: Word(t, s, e, 0.9)
    >>> seg = Segment(0, 4000, "", (w(" a", 0, 100), w(" b", 200, 300), w(" c", 2000, 2100)), -0.1)
    >>> [[x.text for x in u] for u in utterances(Transcript("en", 1.0, 4000, (seg,)), AsrLayout())]
    [[' a', ' b'], [' c']]
    """
    groups: list[list[Word]] = []
    for segment in transcript.segments:
        words = segment.words or (Word(segment.text, segment.start_ms, segment.end_ms, math.exp(segment.avg_logprob)),)
        for word in words:
            if not word.text.strip():
                continue
            if groups and word.start_ms - groups[-1][-1].end_ms < layout.turn_gap_ms:
                groups[-1].append(word)
            else:
                groups.append([word])
    return groups


def layout_text(words: Sequence[Word], pause_ms: int) -> tuple[str, tuple[AsrPause, ...]]:
    """The utterance text and its pauses (`after_char` counts characters of that text).

    >>> text, pauses = layout_text([Word("我们", 0, 400, 1), Word("下周二", 1600, 2000, 1)], 300)
    >>> text, pauses
    ('我们下周二', (AsrPause(after_char=2, duration_ms=1200),))
    """
    text = ""
    pauses: list[AsrPause] = []
    for i, word in enumerate(words):
        text += word.text.lstrip() if i == 0 else word.text
        if i + 1 < len(words):
            gap = words[i + 1].start_ms - word.end_ms
            if gap >= pause_ms:
                pauses.append(AsrPause(after_char=len(text), duration_ms=gap))
    return text, tuple(pauses)


def segments_to_events(
    transcript: Transcript,
    layout: AsrLayout,
    *,
    session_id: str,
    source: str,
    started_at: datetime,
    speaker: str | None = None,
    speaker_role: SpeakerRole = "customer",
    tenant_id: str = "default",
    user_id: str | None = None,
) -> list[ConversationEvent]:
    """One ASR ConversationEvent per utterance, `ts` = `started_at` + the utterance's start."""
    events = []
    for words in utterances(transcript, layout):
        text, pauses = layout_text(words, layout.pause_ms)
        start_ms, end_ms = words[0].start_ms, max(w.end_ms for w in words)
        confidence = min(1.0, max(0.0, sum(w.probability for w in words) / len(words)))
        event_id = f"asr:{source}:{start_ms}"
        meta: dict[str, MetaValue] = {
            "audio": source,
            "asr_language": transcript.language,
            "asr_language_probability": round(transcript.language_probability, 4),
        }
        events.append(
            ConversationEvent(
                event_id=event_id,
                session_id=session_id,
                tenant_id=tenant_id,
                user_id=user_id,
                turn_id=event_id,
                ts=started_at + timedelta(milliseconds=start_ms),
                speaker=speaker,
                speaker_role=speaker_role,
                modality="asr",
                text=text,
                lang=transcript.language,
                asr=AsrInfo(
                    confidence=confidence,
                    start_ms=start_ms,
                    end_ms=end_ms,
                    pauses=pauses,
                    words=tuple(
                        AsrWord(
                            word=w.text.strip(),
                            start_ms=w.start_ms,
                            end_ms=w.end_ms,
                            probability=min(1.0, max(0.0, w.probability)),
                        )
                        for w in words
                    ),
                ),
                meta=meta,
            )
        )
    return events
