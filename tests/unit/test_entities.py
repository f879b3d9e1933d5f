"""Progressive entity extraction: strong identifiers first, names, weak references bound later."""

from __future__ import annotations

import pytest

from schemas.session import CriticalEntity
from state.core.datafiles import packaged, read_data
from state.task.entities import EntityConfig, extract_turn_entities, find_weak_refs, parse_entity_config
from state.task.memory import merge_entities


@pytest.fixture(scope="module")
def cfg() -> EntityConfig:
    return parse_entity_config(read_data(packaged("entity_patterns.yaml")))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("订单号：DD20261130001", [("order_id", "DD20261130001")]),
        ("Can you check order 88123?", [("order_id", "88123")]),
        ("快递单号SF1234567890还没更新", [("tracking_number", "SF1234567890")]),
        ("运单号是 YT1234567890123", [("tracking_number", "YT1234567890123")]),
        ("我的手机号13812345678", [("phone", "13812345678")]),
        ("客服电话010-67389898", [("phone", "010-67389898")]),
        ("退我199.5元", [("amount", "199.5元")]),
        ("补偿五十元", [("amount", "五十元")]),
        ("refund $25.99 please", [("amount", "$25.99")]),
        ("型号 BX-BLUE-01 的盒子", [("sku", "BX-BLUE-01")]),
        ("发到 amy@example.com", [("email", "amy@example.com")]),
    ],
)
def test_strong_identifiers(cfg: EntityConfig, text: str, expected: list[tuple[str, str]]) -> None:
    got = extract_turn_entities(text, "t", [], cfg).strong
    assert [(e.kind, e.value) for e in got if e.kind != "name"] == expected
    assert all(e.strength == "strong" and e.bound for e in got)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("推荐您去人均消费68元的讲礼驴肉馆用餐。", ["讲礼驴肉馆"]),
        ("为您推荐维也纳3好酒店(北京南站洋桥店)。", ["维也纳3好酒店(北京南站洋桥店)"]),
        ("周边餐馆有小吊梨汤(畅春园店)、白家大院和花家怡园。", ["小吊梨汤(畅春园店)", "白家大院", "花家怡园"]),
        ("为您推荐长城脚下的公社，门票120元", ["长城脚下的公社"]),
        ("Let's meet at the Hilton Garden Inn tomorrow", ["Hilton Garden Inn"]),
        ("这家店不错", []),
    ],
)
def test_names(cfg: EntityConfig, text: str, names: list[str]) -> None:
    got = extract_turn_entities(text, "t", [], cfg).strong
    assert [e.value for e in got if e.kind == "name"] == names


def test_weak_reference_binds_to_the_known_order(cfg: EntityConfig) -> None:
    first = extract_turn_entities("帮我查一下订单DD20261130001的物流", "t1", [], cfg)
    then = extract_turn_entities("顺便帮我取消这个订单", "t2", list(first.strong), cfg)
    (ref,) = then.weak
    assert (ref.kind, ref.value, ref.mention, ref.strength, ref.bound) == (
        "order_id",
        "DD20261130001",
        "这个订单",
        "weak",
        True,
    )


def test_modifier_picks_the_blue_box_not_the_latest(cfg: EntityConfig) -> None:
    known = list(extract_turn_entities("买了两个盒子：蓝色的SKU BX-BLUE-01，红色的SKU BX-RED-02", "t1", [], cfg).strong)
    assert [e.value for e in known] == ["BX-BLUE-01", "BX-RED-02"]
    (ref,) = extract_turn_entities("那个蓝色的盒子还没到", "t2", known, cfg).weak
    assert (ref.value, ref.mention) == ("BX-BLUE-01", "那个蓝色的盒子")
    (en,) = extract_turn_entities("the blue one is broken", "t3", known, cfg).weak
    assert en.value == "BX-BLUE-01"


def test_unmatched_modifier_stays_unbound_and_binds_later(cfg: EntityConfig) -> None:
    red = list(extract_turn_entities("红色的SKU BX-RED-02", "t1", [], cfg).strong)
    (ref,) = extract_turn_entities("那个蓝色的盒子呢", "t2", red, cfg).weak
    assert not ref.bound
    assert ref.value == "那个蓝色的盒子"
    state = merge_entities(tuple(red), (), (ref,), cfg, 64)
    blue = extract_turn_entities("蓝色的是SKU BX-BLUE-01", "t3", list(state), cfg).strong
    merged = merge_entities(state, blue, (), cfg, 64)
    bound = [e for e in merged if e.mention == "那个蓝色的盒子"]
    assert [(e.value, e.bound, e.turn_id) for e in bound] == [("BX-BLUE-01", True, "t2")]


def test_type_beats_recency_for_weak_references(cfg: EntityConfig) -> None:
    known = [
        CriticalEntity(kind="order_id", value="DD1", turn_id="t1"),
        CriticalEntity(kind="phone", value="13812345678", turn_id="t2"),
    ]
    (ref,) = extract_turn_entities("这个订单呢", "t3", known, cfg).weak
    assert ref.value == "DD1"


def test_weak_refs_are_found_in_both_languages(cfg: EntityConfig) -> None:
    refs = find_weak_refs("这家餐馆的地址？ And that package?", cfg)
    assert [(r.mention, r.head) for r in refs] == [("这家餐馆", "餐馆"), ("that package", "package")]


def test_merge_dedups_caps_and_keeps_recency(cfg: EntityConfig) -> None:
    a = CriticalEntity(kind="order_id", value="A", turn_id="t1")
    b = CriticalEntity(kind="order_id", value="B", turn_id="t2")
    pending = CriticalEntity(
        kind="sku", value="那个盒子", turn_id="t0", strength="weak", bound=False, mention="那个盒子"
    )
    merged = merge_entities((pending, a, b), (a,), (), cfg, 64)
    assert [e.value for e in merged] == ["那个盒子", "B", "A"]
    capped = merge_entities((pending, a, b), (), (), cfg, 2)
    assert [e.value for e in capped] == ["A", "B"]  # the unbound weak reference goes first
