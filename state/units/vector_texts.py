"""Which texts a memory unit's stored vector is made of: the sentences of its whole turn.

Input: a `MemoryUnit`. Output: the turn's sentence segments, split exactly as the write path
splits them (clean, sentence split, segment). State: none.

A unit cut from a turn ("两天内发到您的账户。") must be found by what the whole turn is about
(the promise it completes), so its vector is the normalised mean of its turn's sentence
vectors, not the vector of its own slice. Those sentences are the ones the entropy stage has
just embedded, so with the embedding memo the store's vectors cost no embedder call at all: the
write path does no more model work per turn than when each unit was embedded alone. The unit
text is still what a cue shows and what lexical relevance reads.
"""

from __future__ import annotations

from schemas.memory import MemoryUnit
from state.core.language import clean_text, language_mix, split_sentences
from state.normalise.segments import segment_sentences


def turn_segments(unit: MemoryUnit) -> list[str]:
    """The sentence segments of the unit's whole turn (the unit's own text when it has none).

    >>> from datetime import UTC, datetime
    >>> u = MemoryUnit(memory_id="m", unit_index=1, tenant_id="t", session_id="s", turn_id="e", event_id="e",
    ...                ts=datetime(2025, 6, 1, tzinfo=UTC), text="两天内发到您的账户。",
    ...                source_text="我们会补偿五十元优惠券。两天内发到您的账户。")
    >>> turn_segments(u)
    ['我们会补偿五十元优惠券。', '两天内发到您的账户。']
    """
    mix = language_mix(unit.source_text)
    text = clean_text(unit.source_text, mix)
    segments = [s.text for s in segment_sentences(split_sentences(text, ()), source=text) if s.text.strip()]
    return segments or [unit.text]
