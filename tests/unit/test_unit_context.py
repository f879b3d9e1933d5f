"""Each memory unit carries its session's previous turn (operators/context.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import bytewax.operators as op
from bytewax.dataflow import Dataflow
from bytewax.testing import TestingSink, TestingSource, run_main

from operators.context import ContextConfig, attach_context
from schemas.memory import MemoryUnit
from state.units.context import with_context
from tests.recall_support import unit


def _run(units: list[MemoryUnit]) -> list[MemoryUnit]:
    flow = Dataflow("context")
    keyed = op.key_on("key", op.input("in", flow, TestingSource(units)), lambda u: u.session_id)
    out: list[MemoryUnit] = []
    attached = attach_context("ctx", keyed, ContextConfig(idle_ttl=timedelta(hours=1)), clock=lambda: datetime.now(UTC))
    op.output("out", op.key_rm("rm", attached), TestingSink(out))
    run_main(flow)
    return out


def test_units_get_the_previous_turn_of_their_own_session() -> None:
    a = unit("我的快递三天没动了", n=1, speaker="客户")
    b = unit("已联系快递公司，今天发出", n=2, speaker="客服", speaker_role="agent")
    other = unit("hello", n=3, session="s-other", speaker="Amy")
    out = {u.text: u.context_prev for u in _run([a, other, b])}
    assert out == {"我的快递三天没动了": None, "hello": None, "已联系快递公司，今天发出": "客户: 我的快递三天没动了"}


def test_units_of_one_turn_share_its_context() -> None:
    first = unit("在吗", n=1, speaker="客户")
    state, _ = with_context(None, first)
    cut = unit("好的，两天内发到您的账户", n=2, speaker="客服")
    state, x = with_context(state, cut)
    state, y = with_context(state, cut.model_copy(update={"unit_index": 1, "text": "两天内发到您的账户"}))
    assert x.context_prev == y.context_prev == "客户: 在吗"
