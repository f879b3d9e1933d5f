"""The first write-time filters in the running flow: coreference, terms, authority, times."""

from __future__ import annotations

from typing import Any

from tests.flows.support import turn


def test_coreference_anchors_reach_the_memory_unit(run: Any) -> None:
    out = run(
        [
            turn("s1", 0, "推荐您去人均消费68元的讲礼驴肉馆用餐。", speaker_role="agent"),
            turn("s1", 1, "这家餐馆的地址在哪？"),
        ]
    )
    unit = out.by_turn()["s1-t1"]
    anchor = unit.coref[0]
    assert (anchor.mention, anchor.resolved_entity, anchor.antecedent_turn_id) == ("这家餐馆", "讲礼驴肉馆", "s1-t0")
    assert anchor.context_window == "推荐您去人均消费68元的讲礼驴肉馆用餐。"
    start, end = anchor.antecedent_span
    assert anchor.context_window[start:end] == "讲礼驴肉馆"


def test_sessions_do_not_share_mentions(run: Any) -> None:
    out = run([turn("a", 0, "推荐您去讲礼驴肉馆用餐。"), turn("b", 1, "这家餐馆的地址在哪？")])
    assert out.by_turn()["b-t1"].coref[0].resolved_entity is None


def test_session_end_discards_the_window(run: Any) -> None:
    out = run(
        [
            turn("s", 0, "推荐您去讲礼驴肉馆用餐。"),
            {"kind": "session_end", "event_id": "s-end", "session_id": "s", "ts": "2026-03-04T10:16:00+00:00"},
            turn("s", 5, "这家餐馆的地址在哪？"),
        ]
    )
    assert out.by_turn()["s-t5"].coref[0].resolved_entity is None


def test_terms_authority_and_entropy_shortcut_reach_the_unit(run: Any) -> None:
    out = run(
        [
            turn("s", 0, "TCP握手超时。"),
            turn("s", 1, "请务必在5月20日前完成，这是老板亲自交代的"),
        ]
    )
    units = out.by_turn()
    assert units["s-t0"].terms == ("TCP", "握手", "超时")
    assert units["s-t0"].entropy == 0.1
    assert not units["s-t0"].priority_flag
    assert units["s-t1"].priority_flag
    assert units["s-t1"].entropy >= 0.5


def test_spec_example_environment_anchor(run: Any) -> None:
    out = run([turn("s", 0, "请在测试环境验证后再同步到生产环境。")])
    anchors = out.by_turn()["s-t0"].coref
    assert [a.core_referent for a in anchors] == ["测试环境", "生产环境"]
    assert all(a.core_referent != "环境" for a in anchors)


def test_cross_modal_times_keep_their_original_form(run: Any) -> None:
    out = run(
        [
            turn("s", 0, "明天下午三点开会", modality="asr", asr={"confidence": 0.9, "start_ms": 0, "end_ms": 1800}),
            turn("s", 1, "会议时间改为周四"),
        ]
    )
    units = out.by_turn()
    asr_time, text_time = units["s-t0"].times[0], units["s-t1"].times[0]
    assert (asr_time.original_form, asr_time.start.isoformat()) == ("明天下午三点", "2026-03-05T15:00:00+00:00")
    assert (text_time.original_form, text_time.start.isoformat()) == ("周四", "2026-03-05T00:00:00+00:00")
