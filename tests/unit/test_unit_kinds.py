"""Customer-service unit types: complaints by family, repeats, third-party promises, resolutions,
requests; the severity and open status a unit gets from its type."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from schemas.events import ConversationEvent
from schemas.memory import MemoryUnit
from state.normalise.turn import NormaliseConfig, normalise_turn
from state.tagging.kinds import KIND_RANK, complaint_families, unit_kind
from state.tagging.lexicon import load_lexicon
from state.tagging.tagger import TagConfig, tag_turn
from state.units.assemble import units_from_turn

LEX = load_lexicon()
TS = datetime(2026, 11, 30, 9, tzinfo=UTC)


def _unit(text: str, role: str = "customer") -> MemoryUnit:
    ev = ConversationEvent(event_id="e", session_id="s", ts=TS, text=text, speaker_role=role)  # type: ignore[arg-type]
    _, turn = tag_turn(None, normalise_turn(ev, NormaliseConfig()), TagConfig(), LEX)
    (unit,) = units_from_turn(turn)
    return unit


@pytest.mark.parametrize(
    ("text", "role", "kind"),
    [
        ("快递晚了五天，里面的蛋糕都坏了，太让人生气了", "customer", "complaint"),
        ("上个月我在你们这买了一台华为Mate60，屏幕有一条绿线。", "customer", "complaint"),
        ("The blender arrived with a cracked jug.", "customer", "complaint"),
        ("I was charged twice again, this time for July.", "customer", "repeat_complaint"),
        ("耳机又坏了，这已经是第三次了", "customer", "repeat_complaint"),
        ("The app crashed on login. Again.", "customer", "repeat_complaint"),
        ("Maria from your sales team said she would send me a quote", "customer", "third_party_commitment"),
        ("你们的客服小刘说三天内会给我回电话", "customer", "third_party_commitment"),
        ("退款已经到账了，谢谢", "customer", "resolution_confirmation"),
        ("The replacement arrived and it works fine now.", "customer", "resolution_confirmation"),
        ("您反映的问题已经解决了，工单已关闭", "agent", "resolution_confirmation"),
        ("麻烦帮我把收货地址改成杭州", "customer", "action_request"),
        ("Could you resend the invoice to my new email?", "customer", "action_request"),
        ("您的包裹已经发出，预计周四送达", "agent", "status_update"),
        ("退款到账了吗？", "customer", "question"),
        ("很抱歉快递晚了两天", "agent", "statement"),
    ],
)
def test_customer_service_unit_types(text: str, role: str, kind: str) -> None:
    assert _unit(text, role).unit_type == kind


def test_a_defect_report_is_not_low_severity_and_stays_open() -> None:
    unit = _unit("屏幕有一条绿线。")
    assert unit.unit_type == "complaint"
    assert unit.severity != "low"
    assert unit.resolution_status == "pending"


def test_a_repeat_complaint_is_high_severity() -> None:
    assert _unit("I was charged twice again, this time for July.").severity == "high"


def test_complaint_families_are_named_among_the_cues() -> None:
    assert complaint_families("my parcel is late and the box was damaged", LEX) == (
        "complaint_damage",
        "complaint_lateness",
    )
    assert complaint_families("thanks, all good", LEX) == ()


def test_an_agent_does_not_complain() -> None:
    assert _unit("抱歉，您的快递延误了，蛋糕可能坏了", "agent").unit_type != "complaint"


def test_every_ranked_kind_is_a_unit_type() -> None:
    assert set(KIND_RANK) == set(MemoryUnit.model_fields["unit_type"].annotation.__args__)  # type: ignore[union-attr]
    assert unit_kind(["statement", "complaint", "resolution_confirmation"]) == "complaint"
