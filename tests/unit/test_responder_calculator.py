"""The calculator route: numeric questions are computed by rule, never by the model or eval."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemas.errors import CalculationError
from sinks.respond.runner import answer_all
from state.respond.calculator import calculate, evaluate, find_quantities
from state.respond.tables import decision_tables
from tests.fakes.fake_openai import FakeOpenAI
from tests.fakes.responder_factories import make_request, make_responder

TABLE = decision_tables().get().calculator


@pytest.fixture
def server():
    srv = FakeOpenAI().start()
    yield srv
    srv.stop()


def test_salary_minus_mortgage_goes_to_the_calculator_without_asking_the_model(server: FakeOpenAI) -> None:
    [outcome] = answer_all(make_responder(server.base_url), [make_request("月薪15000房贷8000每月能存多少")])
    r = outcome.response
    assert r.decisions is not None
    assert r.decisions.route == "calculator"
    assert r.decisions.calculation is not None
    assert r.decisions.calculation.result == 7000
    assert r.decisions.calculation.operation == "remainder"
    assert "7000" in r.text
    assert r.model == "calculator"
    assert not r.fallback
    assert server.calls == 0


@pytest.mark.parametrize(
    ("question", "result"),
    [
        ("月薪1.5万房贷8千车贷2000每月还剩多少", 5000),
        ("15000-8000等于多少", 7000),
        ("What is 12 * (3 + 4)?", 84),
        ("I earn 5000 and rent is 2000, how much is left?", 3000),
        ("3件衣服每件120元一共多少", 360),
        ("工资 12,000 加 奖金 3,000 一共多少", 15000),
        ("100 ÷ 8 是多少", 12.5),
    ],
)
def test_numeric_questions(question: str, result: float) -> None:
    calc = calculate(question, TABLE)
    assert calc is not None
    assert calc.result == pytest.approx(result)


@pytest.mark.parametrize(
    "question",
    [
        "我的订单 88231 什么时候到",  # an id is not a quantity
        "我2024-05-15下的订单什么时候到",  # a date is not an expression
        "明天下午3点到，一共2件",  # a clock time is not an amount
        "订单号 88231 和 77812 一共几件",
        "call 13812345678 about order A-123",
        "我想要两个",
    ],
)
def test_not_numeric_questions(question: str) -> None:
    assert calculate(question, TABLE) is None


def test_quantities_skip_dates_ids_and_phones() -> None:
    values = [q.value for q in find_quantities("月薪1.5万，房贷8k，订单号 88231 在 5月3日，电话13812345678", TABLE)]
    assert values == [15000, 8000]


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("10 / 0", "division by zero"),
        ("10 % 0", "division by zero"),
        ("(1 + 2 (3)", "unbalanced"),
        ("(1 + 2", "ends early"),
        ("1 + ", "ends early"),
        ("1 + + 2", "unexpected"),
        ("__import__('os')", "unexpected"),
        ("2 ** 8", "unexpected"),
        ("9" * 20 + " * " + "9" * 20, "out of range"),
        ("1 + 2" * 100, "longer than"),
        ("(" * 20 + "1" + ")" * 20, "nested too deeply"),
        ("   ", "empty"),
        ("1 2", "unexpected"),
    ],
)
def test_unsafe_or_impossible_expressions_raise(expression: str, message: str) -> None:
    with pytest.raises(CalculationError, match=message):
        evaluate(expression, TABLE)


def test_operation_phrase_division_by_zero_and_overflow_raise() -> None:
    with pytest.raises(CalculationError, match="division by zero"):
        calculate("100 除以 0", TABLE)
    with pytest.raises(CalculationError, match="out of range"):
        calculate("9999999999亿 乘以 9999999亿", TABLE)


def test_uncomputable_numeric_question_is_left_to_the_model(server: FakeOpenAI) -> None:
    [outcome] = answer_all(make_responder(server.base_url), [make_request("100 ÷ 0 是多少")])
    assert outcome.response.decisions is not None
    assert outcome.response.decisions.route == "llm"
    assert "not computable" in outcome.response.decisions.route_reason
    assert server.calls == 1


@given(
    a=st.integers(min_value=-(10**6), max_value=10**6),
    b=st.integers(min_value=1, max_value=10**6),
    c=st.integers(min_value=-(10**6), max_value=10**6),
    op=st.sampled_from(["+", "-", "*", "/"]),
)
def test_evaluate_agrees_with_arithmetic(a: int, b: int, c: int, op: str) -> None:
    expected = {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[op] - c
    assert evaluate(f"({a}) {op} {b} - ({c})", TABLE) == pytest.approx(expected)
