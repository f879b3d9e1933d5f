"""Validity by what a memory is: a promise keeps its deadline as a time; asking "now" is not a volatile fact."""

from __future__ import annotations

from datetime import timedelta

from schemas.memory import TimeExpression
from state.validity.rules import ValidityData
from tests.recall_support import T0, unit

DATA = ValidityData()


def _before(hours: float, form: str) -> TimeExpression:
    return TimeExpression(
        original_form=form, start=T0, end=T0 + timedelta(hours=hours), granularity="hour", span=(0, 5), parser="test"
    )


def test_a_promise_does_not_expire_at_its_deadline() -> None:
    times = (_before(20, "明天中午前"),)
    promise = unit("我们会安排明天中午前重新送到您家", n=1, speaker_role="agent", commitment_strength=0.7, times=times)
    notice = unit("仓库明天中午前暂停发货", n=2, speaker_role="agent", times=times)
    assert DATA.tag(promise).validity.effective_to is None
    assert DATA.tag(notice).validity.effective_to is not None


def test_asking_about_now_does_not_expire_but_a_reported_outage_does() -> None:
    asked = unit("上次说要给我补偿，现在能到账了吗？", n=1, unit_type="question")
    outage = unit("东莞仓目前停电，发货会延迟吗", n=2, unit_type="question")
    assert DATA.tag(asked).validity.effective_to is None
    assert DATA.tag(outage).validity.validity_type == "transient"


def test_a_report_of_something_done_today_does_not_expire_with_the_day() -> None:
    done = unit("Quick update: the refund for order 20418 was processed today", n=1, speaker_role="agent")
    assert DATA.tag(done).validity.effective_to is None
    zh = unit("今天已经给您退款了，请注意查收", n=2, speaker_role="agent")
    assert DATA.tag(zh).validity.effective_to is None
    state = unit("今天系统正在升级", n=3, speaker_role="agent")  # no event: a state of today
    assert DATA.tag(state).validity.effective_to is not None
    stock = unit("今天已经断货了", n=4, speaker_role="agent")  # a volatile fact beside the done word
    assert DATA.tag(stock).validity.effective_to is not None
