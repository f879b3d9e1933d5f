"""Emotion of each memory unit from the trained head (SPEC §5.4), after the entropy cut.

Input: keyed `Turn` with its unit cut. Output: the same turn with `unit_emotion` filled (the
lexicon's emotion of each unit mixed with the head's, read from the unit text's vector). State:
none. Key: session id. The head reads vectors through the store's shared cache
(flows/tagging_stage.py), so the store embedding of these units is a cache hit, not a second call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import bytewax.operators as op
from bytewax.dataflow import operator
from bytewax.operators import KeyedStream

from state.tag_lexicon import TagLexicon
from state.tagging import IntentHead
from state.turn import Turn
from state.units import blend_unit_emotion, unit_texts


@dataclass(frozen=True)
class UnitEmotionConfig:
    weight: float = 0.5  # 0 = lexicon only, 1 = head only


def with_unit_emotion(turn: Turn, head: IntentHead, config: UnitEmotionConfig, lexicon: TagLexicon) -> Turn:
    texts = unit_texts(turn)
    _, emotion = head.predict(texts, [None] * len(texts))
    return blend_unit_emotion(turn, emotion, config.weight, lexicon.apology_threshold)


@operator
def unit_emotion(
    step_id: str,
    up: KeyedStream[Turn],
    config: UnitEmotionConfig,
    *,
    head: IntentHead,
    lexicon: Callable[[], TagLexicon],
) -> KeyedStream[Turn]:
    return op.map_value("unit_emotion_map", up, lambda turn: with_unit_emotion(turn, head, config, lexicon()))
