"""Embed memory units for the store.

Input: `MemoryUnit`. Output: `EmbeddedUnit`. State: none. Works on whole batches so a
model that gains from batching gets them; the embedder is injected (never built here).
A unit's vector is the normalised mean of its whole turn's sentence vectors
(`state.units.vector_texts`): the sentences the entropy stage already embedded, so through the
embedding memo this costs no extra embedder call.
"""

from __future__ import annotations

from dataclasses import dataclass

import bytewax.operators as op
import numpy as np
from bytewax.dataflow import Stream, operator

from schemas.memory import EmbeddedUnit, MemoryUnit
from state.core.embedding import Embedder, normalise_rows
from state.units.vector_texts import turn_segments


@dataclass(frozen=True)
class EmbedConfig:
    batch_size: int = 32


def embed_batch(units: list[MemoryUnit], embedder: Embedder, batch_size: int) -> list[EmbeddedUnit]:
    out: list[EmbeddedUnit] = []
    for start in range(0, len(units), batch_size):
        chunk = units[start : start + batch_size]
        segments = [turn_segments(u) for u in chunk]
        distinct = list(dict.fromkeys(t for seg in segments for t in seg))
        rows = dict(zip(distinct, embedder.passage(distinct), strict=True))
        vectors = normalise_rows(np.vstack([np.mean([rows[t] for t in seg], axis=0) for seg in segments]))
        out.extend(EmbeddedUnit(u, v) for u, v in zip(chunk, vectors, strict=True))
    return out


@operator
def embed_units(
    step_id: str, up: Stream[MemoryUnit], config: EmbedConfig, *, embedder: Embedder
) -> Stream[EmbeddedUnit]:
    return op.flat_map_batch("embed_batch", up, lambda batch: embed_batch(batch, embedder, config.batch_size))
