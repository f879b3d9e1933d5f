"""Decision tables: planning depth, delivery channel, promise strength, switches, hot reload."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemas.errors import ConfigurationError
from schemas.memory import EmotionLoad
from schemas.recall import ScoreComponents
from state.respond.decisions import (
    DecisionSwitches,
    complexity_score,
    decide,
    delivery_channel,
    promise_strength,
    soften,
)
from state.respond.tables import DECISIONS_FILE, TEXT_FILE, decision_tables, response_text
from tests.fakes.responder_factories import make_cue, make_request

TABLES = decision_tables().get()


@pytest.mark.parametrize(
    ("question", "score", "planning"),
    [
        ("订明天早上的高铁", 2, "direct"),  # one time entity
        ("订明天北京到上海的机票", 6, "direct"),  # three entities, no comparison
        ("对比国航和东航明天上午的票价，推荐最便宜的", 9, "plan"),  # 3 entities ×2 + 3
        ("对比国航和东航明天上午的票价，马上告诉我", 7, "plan"),  # 6 + 3 − 2
        ("马上帮我查一下", 0, "direct"),  # clamped at 0
        ("Compare Air China and China Eastern flights to Shanghai tomorrow", 10, "plan"),  # 4×2+3 → clamped 10
    ],
)
def test_planning_depth_from_the_complexity_score(question: str, score: int, planning: str) -> None:
    decisions = decide(make_request(question), TABLES, DecisionSwitches())
    assert decisions.complexity_score == score
    assert decisions.planning == planning


@given(st.text(max_size=80))
def test_complexity_score_stays_in_range(text: str) -> None:
    assert 0 <= complexity_score(text, TABLES.planning) <= TABLES.planning.max_score


@pytest.mark.parametrize(
    ("preference", "query", "channel"),
    [
        ("app", "支付成功了吗", "app_popup"),
        ("sms", "我的快递到哪了", "sms_short_link"),
        ("wechat", "优惠券什么时候过期", "wechat_card"),
        ("email", "你好", "email"),
        (None, "你好", "app_inbox"),
        ("carrier-pigeon", "你好", "app_inbox"),  # unknown preference → default row
    ],
)
def test_delivery_channel_from_preference_and_urgency(preference: str | None, query: str, channel: str) -> None:
    decisions = decide(make_request(query, preferred_channel=preference), TABLES, DecisionSwitches())
    assert decisions.channel == channel


def test_cue_urgency_raises_the_delivery_urgency() -> None:
    cue = make_cue(emotion=EmotionLoad(certainty=0.9, urgency=0.95))
    decisions = decide(make_request("你好", cue, preferred_channel="sms"), TABLES, DecisionSwitches())
    assert decisions.urgency == "realtime"
    assert decisions.channel == delivery_channel("sms", "realtime", TABLES.delivery) == "sms"


def test_low_certainty_and_high_urgency_hedge_the_promise() -> None:
    shaky = make_cue(text="客服说下周二肯定能给到", emotion=EmotionLoad(certainty=0.3, urgency=0.2))
    urgent = make_cue(
        "mem-2", text="客户说周三就要用，很急", unit_type="complaint", emotion=EmotionLoad(certainty=0.9, urgency=0.9)
    )
    assert promise_strength((shaky, urgent), "low", TABLES.promise) == "hedged"
    assert promise_strength((shaky,), "low", TABLES.promise) == "neutral"  # uncertain but not urgent
    assert promise_strength((shaky,), "high", TABLES.promise) == "hedged"  # the query is urgent


def test_certain_strong_commitments_are_firm() -> None:
    firm = make_cue(components=ScoreComponents(commitment_strength=1.0), emotion=EmotionLoad(certainty=0.95))
    assert promise_strength((firm,), "low", TABLES.promise) == "firm"
    no_emotion = make_cue(components=ScoreComponents(commitment_strength=1.0), emotion=None)
    assert promise_strength((no_emotion,), "low", TABLES.promise) == "neutral"


@pytest.mark.parametrize(
    ("firm", "hedged"),
    [
        ("下周二肯定能给到", "下周二预计可提供"),
        ("我们保证明天发货", "我们争取明天发货"),
        ("It will definitely arrive on Tuesday", "It is expected to arrive on Tuesday"),
        ("We GUARANTEE delivery", "We expect delivery"),
    ],
)
def test_soften(firm: str, hedged: str) -> None:
    assert soften(firm, TABLES.promise) == hedged


def test_switches_override_every_decision_and_are_recorded() -> None:
    switches = DecisionSwitches(route="template", planning="plan", promise="hedged", channel="sms")
    decisions = decide(make_request("你好"), TABLES, switches)
    assert (decisions.route, decisions.planning, decisions.promise, decisions.channel) == (
        "template",
        "plan",
        "hedged",
        "sms",
    )
    assert decisions.overrides == (
        "route: llm→template",
        "planning: direct→plan",
        "channel: app_inbox→sms",
        "promise: neutral→hedged",
    )


def test_llm_disabled_turns_llm_routes_into_the_template_but_keeps_the_calculator() -> None:
    off = DecisionSwitches(llm_enabled=False)
    assert decide(make_request("你好"), TABLES, off).route == "template"
    assert decide(make_request("月薪15000房贷8000每月能存多少"), TABLES, off).route == "calculator"


def test_calculator_switch_without_numbers_is_ignored_and_says_so() -> None:
    decisions = decide(make_request("你好"), TABLES, DecisionSwitches(route="calculator"))
    assert decisions.route == "llm"
    assert decisions.overrides == ("route: calculator switch ignored (nothing to compute)",)


def test_switch_that_agrees_with_the_table_is_not_an_override() -> None:
    decisions = decide(make_request("你好"), TABLES, DecisionSwitches(planning="direct", route="llm"))
    assert decisions.overrides == ()


def _bump_mtime(path: Path) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def test_tables_hot_reload_and_keep_the_last_good_table(tmp_path: Path) -> None:
    path = tmp_path / "decisions.yaml"
    shutil.copy(DECISIONS_FILE, path)
    tables = decision_tables(path)
    assert tables.get().planning.threshold == 7
    path.write_text(path.read_text(encoding="utf-8").replace("threshold: 7", "threshold: 5"), encoding="utf-8")
    _bump_mtime(path)
    assert tables.get().planning.threshold == 5
    assert decide(make_request("订明天北京到上海的机票"), tables.get(), DecisionSwitches()).planning == "plan"
    path.write_text("planning: [broken", encoding="utf-8")
    _bump_mtime(path)
    assert tables.get().planning.threshold == 5  # a broken edit keeps serving the previous table
    path.unlink()
    assert tables.get().planning.threshold == 5  # so does a vanished file


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda s: s.replace("threshold: 7", "threshold: seven"), "threshold"),
        (lambda s: s.replace("'\\d{1,2}:\\d{2}(?::\\d{2})?'", "'(unclosed'"), "bad regular expression"),
        (lambda s: s.replace('"x": "*"', '"x": "**"'), "symbols must map"),
        (lambda s: s.replace("    mean: [", '    power: ["幂"]\n    mean: ['), "unknown operations"),
        (
            lambda s: s.replace(
                "email:  {realtime: sms, high: app_popup, medium: email, low: email}", "email:  {realtime: sms}"
            ),
            "lacks",
        ),
        (lambda s: s.replace("default_preference: app", "default_preference: fax"), "no matrix row"),
        (lambda s: "planning: [broken", "not YAML"),
    ],
)
def test_a_broken_table_at_start_is_a_configuration_error(tmp_path: Path, edit, message: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "decisions.yaml"
    path.write_text(edit(DECISIONS_FILE.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(ConfigurationError, match=message):
        decision_tables(path)


def test_missing_table_file_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot load"):
        decision_tables(tmp_path / "nope.yaml")


def test_reflection_wording_needs_every_error_pattern(tmp_path: Path) -> None:
    path = tmp_path / "text.yaml"
    path.write_text(
        TEXT_FILE.read_text(encoding="utf-8").replace("    fact_mismatch:", "    other_thing:"), encoding="utf-8"
    )
    with pytest.raises(ConfigurationError, match="fact_mismatch"):
        response_text(path)
