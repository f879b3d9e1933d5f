"""The unit-type evaluation on the project's own customer-service sets: the score the rules reach
on the set they were fixed on stays, and the role rule holds on every set."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.metrics import f1_table
from evals.unit_types import DEFAULT, FIXTURES, apology_pairs, evaluate

SETS = [DEFAULT, FIXTURES / "cs_unit_types_holdout.jsonl", FIXTURES / "cs_unit_types_third.jsonl"]


def test_the_first_set_keeps_its_score() -> None:
    rows = evaluate(DEFAULT)
    assert len(rows) >= 150
    assert {r.lang for r in rows} == {"zh", "en"}
    macro = f1_table([r.gold for r in rows], [r.pred for r in rows])["macro"]
    assert float(macro) >= 0.80  # type: ignore[arg-type]


@pytest.mark.parametrize("gold", SETS, ids=lambda p: p.name)
def test_no_agent_apology_outweighs_the_customer_turn_it_answers(gold: Path) -> None:
    pairs = apology_pairs(evaluate(gold))
    assert pairs
    assert all(agent.stress <= customer.stress + 1e-9 for customer, agent in pairs)


def test_the_seventh_set_keeps_its_tuned_score() -> None:
    rows = evaluate(FIXTURES / "cs_unit_types_seventh.jsonl")
    macro = f1_table([r.gold for r in rows], [r.pred for r in rows])["macro"]
    assert float(macro) >= 0.85  # type: ignore[arg-type]
    smalltalk = [r for r in rows if r.gold == "smalltalk"]
    assert sum(r.pred == "smalltalk" for r in smalltalk) >= len(smalltalk) - 1
