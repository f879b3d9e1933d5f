"""Embed memory units for the store.

Input: `MemoryUnit`. Output: `EmbeddedUnit`. State: none. Works on whole batches so a
model that gains from batching gets them; the embedder is injected (never built here).
Each unit is embedded as its whole turn (`MemoryUnit.embedding_text`): the units of one turn
share the text, so a turn costs one store embedding however it was cut, and the units' trained
heads read the same vector (the batch prefetch has usually embedded it already).
"""

from __future__ import annotations

from dataclasses import dataclass

import bytewax.operators as op
from bytewax.dataflow import Stream, operator

from schemas.memory import EmbeddedUnit, MemoryUnit
from state.core.embedding import Embedder


@dataclass(frozen=True)
class EmbedConfig:
    batch_size: int = 32


def embed_batch(units: list[MemoryUnit], embedder: Embedder, batch_size: int) -> list[EmbeddedUnit]:
    out: list[EmbeddedUnit] = []
    for start in range(0, len(units), batch_size):
        chunk = units[start : start + batch_size]
        texts = [u.embedding_text for u in chunk]
        distinct = list(dict.fromkeys(texts))
        rows = dict(zip(distinct, embedder.passage(distinct), strict=True))
        vectors = [rows[t] for t in texts]
        out.extend(EmbeddedUnit(u, v) for u, v in zip(chunk, vectors, strict=True))
    return out


@operator
def embed_units(
    step_id: str, up: Stream[MemoryUnit], config: EmbedConfig, *, embedder: Embedder
) -> Stream[EmbeddedUnit]:
    return op.flat_map_batch("embed_batch", up, lambda batch: embed_batch(batch, embedder, config.batch_size))
