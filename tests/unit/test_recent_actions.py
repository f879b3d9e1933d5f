from datetime import timedelta

import bytewax.operators as op
from bytewax.dataflow import Dataflow
from bytewax.testing import TestingSource, run_main

from sinks.store.recent_actions import InMemoryRecentActions, RecentActionsSink
from tests.recall_support import T0, unit


def test_newest_first_within_seven_days_per_user() -> None:
    store = InMemoryRecentActions()
    old = unit("old", n=1, ts=T0 - timedelta(days=8), unit_type="action_request")
    a = unit("a", n=2, ts=T0 - timedelta(days=1), unit_type="action_request")
    b = unit("b", n=3, ts=T0 - timedelta(hours=1), unit_type="complaint")
    other = unit("other user", n=4, user="u2", ts=T0, unit_type="complaint")
    store.write([old, a, b, other, unit("no user", n=5, user=None)])  # type: ignore[arg-type]
    assert [u.text for u in store.read("t1", "u1", T0)] == ["b", "a"]
    assert [u.text for u in store.read("t1", "u1", T0, limit=1)] == ["b"]
    assert store.read("t1", "u1", T0 - timedelta(days=2)) == []  # nothing said before then that is still in the window
    assert store.read("t2", "u1", T0) == []


def test_window_trims_on_write() -> None:
    store = InMemoryRecentActions(window_s=3600)
    store.write([unit("a", n=1, ts=T0)])
    store.write([unit("b", n=2, ts=T0 + timedelta(hours=2))])
    assert [u.text for u in store.read("t1", "u1", T0 + timedelta(hours=2))] == ["b"]


def test_sink_keeps_actions_only() -> None:
    store = InMemoryRecentActions()
    flow = Dataflow("recent")
    items = [
        unit("do it", n=1, unit_type="action_request"),
        unit("hi", n=2, unit_type="smalltalk"),
        unit("boss says", n=3, priority_flag=True),
        unit("charged twice again", n=4, unit_type="repeat_complaint"),
        unit("the courier said he would come", n=5, unit_type="third_party_commitment"),
        unit("it works now", n=6, unit_type="resolution_confirmation"),
    ]
    op.output("out", op.input("in", flow, TestingSource(items)), RecentActionsSink(store))
    run_main(flow)
    assert sorted(u.text for u in store.read("t1", "u1", T0 + timedelta(days=1))) == [
        "boss says",
        "charged twice again",
        "do it",
        "it works now",
        "the courier said he would come",
    ]
