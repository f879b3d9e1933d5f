"""Resolution over time from a user's timeline: settled, reopened, overdue; and its lexicon."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from schemas.errors import ConfigurationError
from schemas.memory import TimeExpression
from state.recall.resolution import (
    asks_earlier,
    asks_latest,
    asks_open,
    asks_outcome,
    asks_status,
    asks_still_waiting,
    is_confirmation,
    issue_views,
    load_resolution,
)
from tests.recall_support import T0, unit

LEX = load_resolution()


def _views(units: list[Any], at_days: float = 10) -> dict[str, Any]:
    payloads = [u.model_dump(mode="json") for u in units]
    return issue_views([u.memory_id for u in units], payloads, T0 + timedelta(days=at_days), LEX)


def _deadline(hours: float) -> TimeExpression:
    at = T0 + timedelta(hours=hours)
    return TimeExpression(original_form="两天内", start=T0, end=at, granularity="day", span=(0, 3), parser="test")


def test_a_later_confirmation_in_another_session_settles_the_complaint() -> None:
    complaint = unit("My card was charged twice for the July order", n=1, unit_type="complaint", session="s1")
    thanks = unit("Great, I see the refund now. Thanks!", n=2, session="s2", ts=T0 + timedelta(days=2))
    views = _views([complaint, thanks])
    assert views[complaint.memory_id].status == "resolved"
    assert views[complaint.memory_id].settled_by == thanks.memory_id
    assert views[complaint.memory_id].resolved_at == pytest.approx((T0 + timedelta(days=2)).timestamp())


def test_the_confirmation_settles_the_issue_it_shares_words_with() -> None:
    june = unit("double charge on the June order", n=1, unit_type="complaint", session="s1")
    screen = unit("the screen flickers", n=2, unit_type="complaint", session="s2", ts=T0 + timedelta(days=1))
    thanks = unit("got the refund for the double charge, all good now", n=3, session="s3", ts=T0 + timedelta(days=2))
    views = _views([june, screen, thanks])
    assert views[june.memory_id].status == "resolved"
    assert views[screen.memory_id].status == "pending"


def test_a_new_report_of_the_same_problem_reopens_it() -> None:
    first = unit("快递员把包裹扔在门口", n=1, unit_type="complaint", session="s1")
    fixed = unit("问题解决了，谢谢", n=2, session="s1", ts=T0 + timedelta(hours=1))
    again = unit("快递员又把包裹扔在门口", n=3, unit_type="complaint", session="s2", ts=T0 + timedelta(days=3))
    views = _views([first, fixed, again])
    assert views[first.memory_id].status == "pending"
    assert views[first.memory_id].reopened
    assert views[again.memory_id].status == "pending"


def test_a_promise_past_its_deadline_is_overdue_until_confirmed() -> None:
    promise = unit(
        "我们会给您补偿五十元优惠券，两天内发到您的账户",
        n=1,
        speaker_role="agent",
        commitment_strength=0.7,
        times=(_deadline(48),),
    )
    assert _views([promise], at_days=1)[promise.memory_id].overdue is False
    assert _views([promise], at_days=3)[promise.memory_id].overdue is True
    kept = unit("优惠券已经收到了", n=2, session="s2", ts=T0 + timedelta(days=1))
    view = _views([promise, kept], at_days=3)[promise.memory_id]
    assert (view.status, view.overdue) == ("resolved", False)


def test_an_agents_done_settles_the_open_request_of_its_session() -> None:
    ask = unit("帮我预约下周三下午的保洁服务", n=1, unit_type="action_request")
    done = unit("已为您预约6月4日下午2点的保洁。", n=2, speaker_role="agent")
    assert _views([ask, done])[ask.memory_id].status == "resolved"


def _promise(text: str, n: int, session: str, **fields: Any) -> Any:
    role = {"speaker_role": "agent", "unit_type": "commitment", "commitment_strength": 0.7}
    return unit(text, n=n, session=session, **role, **fields)


def _agent(text: str, n: int, session: str, days: float = 0, **fields: Any) -> Any:
    return unit(text, n=n, session=session, speaker_role="agent", ts=T0 + timedelta(days=days, minutes=n), **fields)


def test_an_agents_report_in_a_later_session_keeps_the_promise_it_answers() -> None:
    ask = unit("你们家有没有皇家的幼猫粮 2kg那种", n=1, session="s1", unit_type="action_request")
    promise = _promise("这个暂时断货了，下周到货，到了我第一时间通知您，帮您留两袋", 2, "s1")
    other = _promise("猫砂盆的新盖子明天发出", 3, "s1b", ts=T0 + timedelta(days=1))
    report = _agent("刘先生您好，皇家幼猫粮今天到货了，已经给您单独留了两袋放前台", 4, "s2", days=6)
    views = _views([ask, promise, other, report])
    assert views[promise.memory_id].status == "resolved"
    assert views[promise.memory_id].settled_by == report.memory_id
    assert views[ask.memory_id].status == "resolved"  # the thread of the promise's session goes with it
    assert views[other.memory_id].status == "pending"  # it shares no word with the report
    assert report.memory_id not in views  # a report that kept a promise is no open promise itself


def test_a_report_can_settle_an_issue_when_no_promise_matches() -> None:
    complaint = unit("The blender cracked the first time I used it, order 20418", n=1, unit_type="complaint")
    report = _agent("Quick update: the refund for order 20418 was processed today", 2, "s2", days=5)
    assert _views([complaint, report])[complaint.memory_id].settled_by == report.memory_id


def test_a_step_on_the_way_a_future_or_the_same_session_keeps_nothing() -> None:
    promise = _promise("I'll ask the depot whether they can keep the envelope longer", 1, "s1")
    for text in (
        "I've escalated the depot envelope question to our team",  # a step on the way
        "Once the depot agrees I'll have it fixed",  # still to come
        "Has the depot replaced the envelope?",  # a question
    ):
        report = _agent(text, 2, "s2", days=2)
        assert _views([promise, report])[promise.memory_id].status == "pending", text
    same = _agent("已经加急了，师傅上门前会先给您打电话", 3, "s1", unit_type="commitment")
    views = _views([promise, same])
    assert views[same.memory_id].promise  # it kept nothing, so it stays a promise of its own


def test_which_end_of_a_thread_the_question_wants() -> None:
    assert asks_latest("靠窗那个要求 餐厅那边答应了没?", LEX)
    assert asks_latest("did you guys actually pause my plan while I was away?", LEX)
    assert not asks_latest("手机卡的问题解决了吗", LEX)  # a status question keeps its reading of what is open
    assert asks_open("手机卡的问题解决了吗", LEX)
    assert asks_earlier("what did you tell me to do last time his belly flared up?", LEX)
    assert not asks_earlier("上次说好的补偿到现在还没收到", LEX)


def test_what_the_question_asks_for() -> None:
    assert asks_still_waiting("Nobody called me about the technician", LEX)
    assert asks_status("Any update on my problem?", LEX)
    assert not asks_status("你们周末几点关门", LEX)


def test_a_broken_lexicon_is_a_configuration_error(tmp_path: Path) -> None:
    bad = tmp_path / "r.yaml"
    bad.write_text("confirmations: [a]\n", encoding="utf-8")
    with pytest.raises(ConfigurationError):
        load_resolution(bad)
    bad.write_text("- not a mapping\n", encoding="utf-8")
    with pytest.raises(ConfigurationError):
        load_resolution(bad)
    with pytest.raises(ConfigurationError):
        load_resolution(tmp_path / "missing.yaml")


def test_a_confirmation_typed_as_a_complaint_is_no_open_issue_of_its_own() -> None:
    leak = unit("洗衣机漏水了", n=1, unit_type="complaint", session="s1")
    fixed = unit(
        "师傅修好了，不漏了",
        n=2,
        unit_type="complaint",
        resolution_status="pending",
        session="s2",
        ts=T0 + timedelta(days=2),
    )
    views = _views([leak, fixed])
    assert views[leak.memory_id].status == "resolved"
    assert views[fixed.memory_id].status == "none"


def test_more_ways_of_asking_how_a_matter_stands() -> None:
    assert asks_status("Is my broken device issue sorted yet?", LEX)
    assert asks_status("Any news on my problem?", LEX)
    assert asks_still_waiting("It's been a week and the jacket money still isn't back!", LEX)


def test_open_and_outcome_questions_are_told_apart() -> None:
    for text in (
        "which of my tickets is still open?",
        "is the fee thing still pending?",
        "那个还没处理好的退款呢",
        "多扣的钱还有一笔没退吧",
        "手机卡的问题解决了吗",
    ):
        assert asks_open(text, LEX), text
        assert not asks_outcome(text, LEX), text
    for text in (
        "what happened with the June one in the end?",
        "how did the password thing get fixed in the end?",
        "冰箱那个后来怎么样了",
        "did you ever end up sending the right charger?",
    ):
        assert asks_outcome(text, LEX), text
        assert not asks_open(text, LEX), text


def test_confirmations_match_whole_words_and_implicit_ones_count() -> None:
    assert is_confirmation("ok that worked, export runs fine now", LEX)
    assert is_confirmation("第三章视频能看了", LEX)
    assert is_confirmation("上次修的打印机现在用着挺好的", LEX)
    assert not is_confirmation("The charger is the EU plug, I'm in the UK.", LEX)
    assert not is_confirmation("第三章视频能看了吗", LEX)  # it asks


def test_the_settling_turn_is_named_for_each_settled_issue() -> None:
    gas = unit("燃气费这个月多扣了两百", n=1, unit_type="complaint", session="s1")
    power = unit("电费也多扣了一百五", n=2, unit_type="complaint", session="s2", ts=T0 + timedelta(days=1))
    back = unit("燃气那两百已经退回来了", n=3, session="s3", ts=T0 + timedelta(days=2))
    views = _views([gas, power, back])
    assert (views[gas.memory_id].status, views[gas.memory_id].settled_by) == ("resolved", back.memory_id)
    assert views[power.memory_id].status == "pending"


def test_a_negated_confirmation_settles_nothing() -> None:
    router = unit("路由器修了以后又断网了", n=1, unit_type="complaint", session="s1")
    still = unit("还是不能用了，也没有信号了", n=2, session="s2", ts=T0 + timedelta(days=1))
    views = _views([router, still])
    assert not is_confirmation(still.source_text, LEX)
    assert views[router.memory_id].status == "pending"
    assert is_confirmation("不能用了好几天，今天终于能用了", LEX)  # the later, plain one counts


def test_nobody_turning_up_is_still_waiting() -> None:
    assert asks_still_waiting("人到现在都没来拿", LEX)
    assert asks_still_waiting("nobody showed up today", LEX)
    assert asks_still_waiting("the engineer never turned up", LEX)
    assert not asks_still_waiting("the parcel showed up, thanks", LEX)


def test_a_visit_confirmed_or_a_report_withdrawn_settles_and_more_status_phrasings_are_read() -> None:
    confirmations = (
        "拿到了，谢谢",
        "师傅来过了，加了氟，现在凉快了",
        "never mind on 40112, neighbour had it",
        "found it ty",
    )
    for text in confirmations:
        assert is_confirmation(text, LEX), text
    for text in ("还是没拿到", "I still haven't found it", "师傅还没来过"):
        assert not is_confirmation(text, LEX), text
    assert asks_status("那个登不上的问题 它现在有人在跟吗", LEX)
    assert asks_status("我那两个工单 还有哪个没弄完的", LEX)
    assert asks_still_waiting("did the thing Kevin mentioned ever happen? haven't seen anything", LEX)
    assert asks_outcome("did the thing Kevin mentioned ever happen?", LEX)


def test_a_done_phrase_followed_by_a_step_on_the_way_keeps_nothing() -> None:
    complaint = unit("电费多扣了一百五", n=1, unit_type="complaint")
    step = _agent("已为您提交电费核查", 2, "s2", days=2)
    assert _views([complaint, step])[complaint.memory_id].status == "pending"
    done = _agent("电费那笔已帮您关闭重复扣款并申请退回", 3, "s3", days=2)
    assert _views([complaint, done])[complaint.memory_id].status == "resolved"
