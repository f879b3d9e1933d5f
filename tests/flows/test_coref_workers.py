"""Coreference state is keyed by session: two workers give the same anchors as one."""

from __future__ import annotations

from bytewax.testing import TestingSink, TestingSource, cluster_main

from flows.build import build_flow
from flows.io import OutputSpec, SourceInput
from flows.settings import Settings
from schemas.memory import MemoryUnit
from sinks.models.embedders import load_embedder
from tests.flows.support import raw, run_records, turn

RECORDS = [
    rec
    for s in ("a", "b", "c", "d")
    for rec in (
        turn(s, 0, f"推荐您去{s.upper()}记驴肉馆用餐。"),
        turn(s, 1, "这家餐馆的地址在哪？"),
        turn(s, 2, "它家几点营业？"),
    )
]


def test_two_workers_resolve_like_one() -> None:
    units: list[MemoryUnit] = []
    spec = OutputSpec(deadletters=[], memory_points=[], memory_units=[TestingSink(units)])
    # the processing clock stays the real one: idle timers are processing time and must not fire mid-test
    flow = build_flow(Settings(), SourceInput(TestingSource(raw(RECORDS))), spec, embedder=load_embedder("static"))
    cluster_main(flow, [], 0, worker_count_per_proc=2)
    two = {u.turn_id: [a.resolved_entity for a in u.coref] for u in units}
    one = {u.turn_id: [a.resolved_entity for a in u.coref] for u in run_records(RECORDS).units}
    assert two == one
    assert two["c-t2"] == ["C记驴肉馆"]
