"""ASR transcript → events: utterances split at silences, pauses from word gaps, deterministic ids."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from state.ingress.asr import AsrLayout, Segment, Transcript, Word, layout_text, segments_to_events

T0 = datetime(2026, 1, 1, 8, tzinfo=UTC)


def _transcript(*words: Word, language: str = "en") -> Transcript:
    return Transcript(language, 0.99, 10_000, (Segment(0, 10_000, "", tuple(words), -0.2),))


def test_events_split_at_long_silences_with_pauses_and_timings() -> None:
    words = (
        Word(" My", 0, 200, 0.9),
        Word(" order", 200, 500, 0.8),
        Word(" is", 1000, 1100, 0.7),  # 500 ms pause
        Word(" late.", 1100, 1500, 0.6),
        Word(" Thanks.", 4000, 4400, 1.0),  # 2.5 s silence: new event
    )
    events = segments_to_events(
        _transcript(*words),
        AsrLayout(pause_ms=300, turn_gap_ms=1500),
        session_id="s1",
        source="call.wav",
        started_at=T0,
        speaker="Li",
    )
    assert [e.text for e in events] == ["My order is late.", "Thanks."]
    first, second = events
    assert first.modality == "asr"
    assert first.asr is not None
    assert (first.asr.start_ms, first.asr.end_ms) == (0, 1500)
    assert [(p.after_char, p.duration_ms) for p in first.asr.pauses] == [(8, 500)]
    assert first.text[:8] == "My order"
    assert abs(first.asr.confidence - 0.75) < 1e-9
    assert [w.word for w in first.asr.words] == ["My", "order", "is", "late."]
    assert second.ts == datetime(2026, 1, 1, 8, 0, 4, tzinfo=UTC)
    assert (first.event_id, second.event_id) == ("asr:call.wav:0", "asr:call.wav:4000")
    assert first.speaker == "Li"
    assert first.lang == "en"


def test_chinese_words_join_without_spaces() -> None:
    words = (Word("我们", 0, 400, 0.9), Word("下周二", 1600, 2000, 0.9), Word("给到", 2000, 2300, 0.9))
    (event,) = segments_to_events(
        _transcript(*words, language="zh"),
        AsrLayout(pause_ms=1000, turn_gap_ms=5000),
        session_id="s",
        source="a.wav",
        started_at=T0,
    )
    assert event.text == "我们下周二给到"
    assert event.asr is not None
    assert [(p.after_char, p.duration_ms) for p in event.asr.pauses] == [(2, 1200)]


def test_segments_without_word_timings_still_become_events() -> None:
    transcript = Transcript("en", 0.9, 3000, (Segment(0, 3000, " hello there", (), -0.1),))
    (event,) = segments_to_events(transcript, AsrLayout(), session_id="s", source="a.wav", started_at=T0)
    assert event.text == "hello there"
    assert event.asr is not None
    assert 0.0 < event.asr.confidence <= 1.0


gaps = st.lists(
    st.tuples(st.integers(0, 3000), st.integers(1, 800), st.text("abc我们", min_size=1, max_size=4)),
    min_size=1,
    max_size=30,
)


@given(gaps, st.integers(0, 2000))
def test_pauses_point_inside_the_text_in_order(spec: list[tuple[int, int, str]], pause_ms: int) -> None:
    words, t = [], 0
    for gap, length, text in spec:
        words.append(Word(" " + text, t + gap, t + gap + length, 0.5))
        t += gap + length
    text, pauses = layout_text(words, pause_ms)
    offsets = [p.after_char for p in pauses]
    assert offsets == sorted(offsets)
    assert all(0 < o <= len(text) for o in offsets)
    assert all(p.duration_ms >= pause_ms for p in pauses)
