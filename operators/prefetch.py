"""Embed, in one batch, every text the turns of a batch will ask the embedder for further on.

Input: keyed `Turn` (cut into units, before the task state machine). Output: the same turns,
unchanged and in order. State: none; the vectors land in the memo in front of the embedder
(`sinks/models/embedding_memo.py`), where goal anchoring (one customer turn at a time, inside
the task state machine), the store vector of each turn (`embed_units`: the whole turn, which the
units' emotion and type heads read too) and the recall query find them.

Why: anchoring asks for one text at a time, which an engine that parallelises across the
texts of a call cannot spread over cores; asked here, a batch's texts go out in one round, the
modes side by side, split over the embedder's threads. With the memory vectors in `query` mode (setting
`embedder.memory_prefix`) a customer turn whose unit is the whole turn is one text in one mode:
one embedding serves the memory vector, anchoring and the recall query.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import bytewax.operators as op
from bytewax.dataflow import operator
from bytewax.operators import KeyedStream

from schemas.memory import turn_embedding_text
from state.core.embedding import Embedder, embed_modes
from state.normalise.turn import Turn, segmented


@dataclass(frozen=True)
class PrefetchConfig:
    memory_prefix: Literal["passage", "query"] = "passage"
    anchor_roles: tuple[str, ...] = ("customer",)


def wanted_texts(turns: list[Turn], config: PrefetchConfig) -> dict[str, list[str]]:
    """mode → distinct texts (in first-seen order) the turns' units and goal anchoring will embed."""
    wanted: dict[str, dict[str, None]] = {"passage": {}, "query": {}}
    for turn in turns:
        # the store's vector of the turn's units (`MemoryUnit.embedding_text`), which their heads read too
        wanted[config.memory_prefix][turn_embedding_text(turn.event.text)] = None
        if turn.event.speaker_role in config.anchor_roles:
            wanted["query"][turn.text] = None
    return {mode: list(texts) for mode, texts in wanted.items() if texts}


def prefetch_batch(batch: list[tuple[str, Turn]], embedder: Embedder, config: PrefetchConfig) -> list[tuple[str, Turn]]:
    embed_modes(embedder, wanted_texts([turn for _, turn in batch], config))
    return batch


def prefetch_segments(batch: list[tuple[str, Any]], embedder: Embedder) -> list[tuple[str, Any]]:
    """Embed every segment of a batch's turns in one call (the entropy stage reads them one turn
    at a time; a call per turn costs the static model ~3x more per text than one per batch)."""
    texts = dict.fromkeys(s.text for _, item in batch if isinstance(item, Turn) for s in segmented(item).segments)
    if texts:
        embedder.passage(list(texts))
    return batch


@operator
def prefetch_segment_vectors(step_id: str, up: KeyedStream[Any], *, embedder: Embedder) -> KeyedStream[Any]:
    """Pass turns (and anything else on the stream) on after embedding their segments (the embedder
    must be a memo, which the entropy stage reads)."""
    return op.flat_map_batch("prefetch_segments", up, lambda batch: prefetch_segments(batch, embedder))


@operator
def prefetch_vectors(
    step_id: str, up: KeyedStream[Turn], config: PrefetchConfig, *, embedder: Embedder
) -> KeyedStream[Turn]:
    """Pass the turns on after embedding what they will need (the embedder must be a memo)."""
    return op.flat_map_batch("prefetch_batch", up, lambda batch: prefetch_batch(batch, embedder, config))
