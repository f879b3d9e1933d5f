"""Prefetch and one vector per text: what reaches the model, in how many calls, in which mode."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from bytewax.testing import TestingSink, run_main

from flows.build import build_flow
from flows.io import OutputSpec, file_input
from flows.runtime import embedder_over
from flows.settings import Settings
from operators.prefetch import PrefetchConfig, wanted_texts
from schemas.events import ConversationEvent
from schemas.memory import EmbeddedUnit
from sinks.models.embedders import load_embedder
from state.core.embedding import Matrix
from state.normalise.turn import NormaliseConfig, normalise_turn, segmented
from tests.conftest import event_dict

STATIC = load_embedder("static")
TEXTS = [
    ("customer", "我的订单 A123 还没到，什么时候发货？"),
    ("agent", "您好，我帮您查一下物流。"),
    ("customer", "Can I get a refund for the blue jacket?"),
    ("agent", "Sure, I have started the refund."),
    ("customer", "退款多久到账？"),
    ("customer", "Thanks, that's all."),
]


class Counting:
    """The static model, keeping every (mode, call size, text) it is asked for."""

    def __init__(self) -> None:
        self.name, self.dim = STATIC.name, STATIC.dim
        self.calls: list[tuple[str, list[str]]] = []

    def passage(self, texts: Sequence[str]) -> Matrix:
        self.calls.append(("passage", list(texts)))
        return STATIC.passage(texts)

    def query(self, texts: Sequence[str]) -> Matrix:
        self.calls.append(("query", list(texts)))
        return STATIC.query(texts)


def _archive(tmp_path: Path) -> Path:
    path = tmp_path / "events.jsonl"
    rows = [
        event_dict(event_id=f"e{i}", session_id=f"s{i % 2}", ts=f"2026-01-01T08:00:{i:02d}Z", speaker_role=role, text=t)
        for i, (role, t) in enumerate(TEXTS)
    ]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _run(tmp_path: Path, clock: Callable[[], datetime], **embedder: object) -> tuple[Counting, list[EmbeddedUnit]]:
    settings = Settings(embedder=embedder, tagging={"head": "none"})  # type: ignore[arg-type]
    model = Counting()
    points: list[EmbeddedUnit] = []
    outputs = OutputSpec(deadletters=[], memory_points=[TestingSink(points)])
    flow = build_flow(settings, file_input(_archive(tmp_path)), outputs, embedder=embedder_over(settings, model))
    run_main(flow)
    return model, points


def test_wanted_texts_are_the_turns_in_the_memory_mode_and_customer_turns_as_queries() -> None:
    turns = [
        normalise_turn(ConversationEvent.model_validate(event_dict(speaker_role=r, text=t)), NormaliseConfig())
        for r, t in TEXTS[:2]
    ]
    memory = [turn.event.text for turn in turns]  # one store text per turn, which the units' heads read too
    assert wanted_texts(turns, PrefetchConfig()) == {"passage": memory, "query": [TEXTS[0][1]]}
    assert wanted_texts(turns, PrefetchConfig(memory_prefix="query", anchor_roles=())) == {"query": memory}


@pytest.mark.parametrize("prefix", ["passage", "query"])
def test_each_text_reaches_the_model_once_a_mode_and_in_batches(
    tmp_path: Path, clock: Callable[[], datetime], prefix: str
) -> None:
    model, points = _run(tmp_path, clock, memory_prefix=prefix)
    asked = [(mode, t) for mode, texts in model.calls for t in texts]
    assert len(points) >= len(TEXTS)
    assert len(asked) == len(set(asked))  # the memo serves every second request
    assert max(len(texts) for _, texts in model.calls) > 1  # the prefetch asks for a batch at once
    if prefix == "query":
        assert {mode for mode, _ in model.calls} == {"query"}  # one vector per text for store, anchoring, recall
    for point in points:
        text = point.unit.embedding_text  # the whole turn
        expected = STATIC.query([text]) if prefix == "query" else STATIC.passage([text])
        np.testing.assert_allclose(point.vector, expected[0], atol=1e-6)


def test_without_prefetch_the_rows_stored_are_the_same(tmp_path: Path, clock: Callable[[], datetime]) -> None:
    prefetched, with_prefetch = _run(tmp_path, clock)
    plain, without = _run(tmp_path, clock, prefetch=False)
    rows = {p.unit.memory_id: p.vector for p in with_prefetch}
    assert rows.keys() == {p.unit.memory_id for p in without}
    for point in without:
        np.testing.assert_allclose(point.vector, rows[point.unit.memory_id], atol=1e-6)
    assert len(prefetched.calls) <= len(plain.calls)  # the anchoring texts come in the prefetch's batch


def test_a_batchs_segments_reach_the_model_in_one_call_and_read_back_as_single_calls_would() -> None:
    from operators.prefetch import prefetch_segments
    from sinks.models.embedding_memo import MemoEmbedder
    from state.core.closing import SessionClosed

    turns = [
        normalise_turn(ConversationEvent.model_validate(event_dict(speaker_role=r, text=t)), NormaliseConfig())
        for r, t in TEXTS
    ]
    model = Counting()
    memo = MemoEmbedder(model)
    batch: list[tuple[str, object]] = [("s", t) for t in turns]
    batch.append(("s", SessionClosed("s", turns[0].event.ts)))  # passes through untouched
    assert prefetch_segments(batch, memo) is batch
    assert len(model.calls) == 1
    for turn in turns:  # what the entropy stage then asks for, one turn at a time
        texts = [s.text for s in segmented(turn).segments]
        np.testing.assert_allclose(memo.passage(texts), STATIC.passage(texts), atol=1e-6)
    assert len(model.calls) == 1  # every read served by the memo
