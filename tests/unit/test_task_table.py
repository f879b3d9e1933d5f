"""The declarative transition table: loading, validation errors, resolution, detection."""

from __future__ import annotations

from copy import deepcopy
from pathlib import Path
from typing import Any

import pytest

from schemas.errors import ResourceFileError, TransitionTableError
from state.core.datafiles import packaged, read_data
from state.task.table import Rule, load_table, parse_table

SHIPPED = packaged("task_table.customer_service.yaml")
TRAVEL = Path(__file__).resolve().parents[2] / "docs" / "examples" / "task_table.travel.yaml"


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    doc = read_data(SHIPPED)
    assert isinstance(doc, dict)
    return doc


def test_shipped_table_covers_the_customer_service_stages(raw: dict[str, Any]) -> None:
    table = parse_table(raw)
    assert set(table.stages) >= {
        "order_lookup",
        "logistics",
        "cancellation",
        "refund",
        "complaint",
        "compensation",
        "account",
        "promotion",
    }
    assert table.resolve("logistics", "cancel_order") == Rule("deepen", "cancellation")
    assert table.resolve("logistics", "track_logistics") == Rule("stay", "logistics")
    assert table.resolve("account", "ask_promotion") == Rule("new_task", "promotion")
    assert table.resolve("idle", "complain") == Rule("new_task", "complaint")
    assert table.resolve("general", "request_refund") == Rule("deepen", "refund")  # "*" → @start


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("顺便帮我取消这个订单", "cancel_order"),
        ("帮我查一下订单DD1的物流到哪了", "track_logistics"),
        ("我的订单一直没发货，我要投诉", "complain"),
        ("上次说要给我补偿，现在能到账了吗？", "ask_compensation"),
        ("帮我查上个月账单", "query_account"),
        ("顺便看看积分能换什么", "ask_promotion"),
        ("Where is my package?", "track_logistics"),
        ("I want to cancel my order", "cancel_order"),
    ],
)
def test_detect_names_the_right_action(raw: dict[str, Any], text: str, action: str) -> None:
    assert parse_table(raw).detect(text)[0].action == action


def test_ascii_cues_match_whole_words_only(raw: dict[str, Any]) -> None:
    assert parse_table(raw).detect("my accountant is wholesale") == []


def test_user_written_travel_table_loads() -> None:
    table = load_table(TRAVEL)
    assert table.name == "travel"
    assert table.resolve("dining", "find_hotel") == Rule("deepen", "lodging")
    assert table.detect("这家餐馆的周边有哪些景点")[0].action in {"find_restaurant", "find_sight"}


def test_is_legal_follows_the_table(raw: dict[str, Any]) -> None:
    table = parse_table(raw)
    assert table.is_legal("logistics", "cancellation", "deepen", "cancel_order")
    assert not table.is_legal("account", "promotion", "deepen", "ask_promotion")
    assert table.is_legal("account", "promotion", "new_task", "ask_promotion")
    assert table.is_legal("account", "general", "drift", None)
    assert not table.is_legal("account", "refund", "stay", "query_account")
    assert not table.is_legal("account", "refund", "bogus", "query_account")


def _broken(raw: dict[str, Any], path: list[str], value: Any) -> dict[str, Any]:
    doc = deepcopy(raw)
    node = doc
    for key in path[:-1]:
        node = node[key]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (["stages"], _DELETE, "missing `stages`"),
        (["actions"], _DELETE, "missing `actions`"),
        (["stages"], {}, "non-empty mapping"),
        (["actions"], [], "non-empty mapping"),
        (["stages", "idle"], {"label": "x"}, "reserved"),
        (["actions", "cancel_order"], "cancel", "must be a mapping"),
        (["actions", "cancel_order", "starts"], "nowhere", "unknown stage"),
        (["actions", "cancel_order", "starts"], _DELETE, "missing `starts`"),
        (["fallback_stage"], "nowhere", "fallback_stage"),
        (["default"], "deepen", "default must be"),
        (["transitions", "nowhere"], {}, "unknown stage"),
        (["transitions", "logistics"], ["stay"], "must be a mapping"),
        (["transitions", "logistics", "fly"], "stay", "unknown action"),
        (["transitions", "logistics", "cancel_order"], "teleport", "unknown mode"),
        (["transitions", "logistics", "cancel_order"], 3, "must be a mode"),
        (["transitions", "logistics", "cancel_order"], {"to": "refund", "mode": "jump"}, "unknown mode"),
        (["transitions", "logistics", "cancel_order"], {"to": "nowhere", "mode": "deepen"}, "unknown stage"),
        (["transitions", "logistics", "cancel_order"], {"mode": "deepen"}, "missing `to`"),
    ],
)
def test_invalid_tables_raise_transition_table_error(
    raw: dict[str, Any], path: list[str], value: Any, message: str
) -> None:
    with pytest.raises(TransitionTableError, match=message):
        parse_table(_broken(raw, path, value))


def test_a_document_that_is_not_a_mapping_is_rejected() -> None:
    with pytest.raises(TransitionTableError, match="must be a mapping"):
        parse_table(["stages"])


def test_dict_entry_with_mode_stay_or_new_task_is_accepted(raw: dict[str, Any]) -> None:
    doc = _broken(raw, ["transitions", "logistics", "cancel_order"], {"mode": "new_task"})
    assert parse_table(doc).resolve("logistics", "cancel_order") == Rule("new_task", "cancellation")


def test_missing_table_file_raises(tmp_path: Path) -> None:
    with pytest.raises(ResourceFileError, match="cannot read"):
        load_table(tmp_path / "absent.yaml")
