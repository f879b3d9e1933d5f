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


@pytest.mark.parametrize(
    ("text", "role", "kind"),
    [
        # a problem said to be gone names the problem, and is no complaint
        ("The dripping under the fridge has stopped.", "customer", "resolution_confirmation"),
        ("热水器不漏水了，谢谢师傅。", "customer", "resolution_confirmation"),
        # plain customer resolutions
        ("The deposit has been refunded, thanks.", "customer", "resolution_confirmation"),
        ("发票可以下载了。", "customer", "resolution_confirmation"),
        ("The website is fast again today.", "customer", "resolution_confirmation"),
        # a complaint said as a contrast ("but … still"), or without a family word
        ("I cancelled the plan last week but the app still shows it as active.", "customer", "complaint"),
        ("我已经退订了，怎么这个月还在扣费？", "customer", "complaint"),
        ("桌子送来的时候桌面就变形了。", "customer", "complaint"),
        # a yes/no question that only mentions a charge or a delay asks, it does not complain
        ("Will the delivery fee be refunded as well?", "customer", "question"),
        # asking whether something can be done is a request, not a refusal
        ("运费能不能退给我？", "customer", "action_request"),
        ("Could you waive the fee this once?", "customer", "action_request"),
        ("Can the technician come on Saturday instead?", "customer", "action_request"),
        ("A refund, please.", "customer", "action_request"),
        # asking to be told something is a question, also when an agent asks it
        ("Could you tell me the booking reference?", "agent", "question"),
        # an agent reading back a lookup, a policy, a forecast, a future of someone else's
        ("我查到了，您的包裹是昨天下午签收的。", "agent", "statement"),
        ("I can see the order was placed on the 3rd.", "agent", "statement"),
        ("退款一般三到五个工作日到账。", "agent", "statement"),
        ("The line is expected to be back by 6 pm.", "agent", "status_update"),
        ("The technician will call you before he arrives.", "agent", "commitment"),
        ("师傅明天上午会上门取件。", "agent", "commitment"),
        ("Your cancellation is confirmed, the card is blocked.", "agent", "status_update"),
        ("您的申请正在审核中。", "agent", "status_update"),
        # an agent declining without the word "refund"
        ("I'm afraid the warranty doesn't cover water damage.", "agent", "refusal"),
        # a customer taking something on, and a customer's "sure" before a fact
        ("Okay, I'll send the photos tonight.", "customer", "commitment"),
        ("Sure, my account number is 4471.", "customer", "statement"),
        # a complaint whose expectation was broken ("even though", "明明")
        ("I was charged a late fee even though I paid on the 1st.", "customer", "complaint"),
        ("我明明取消了订单，你们还是发货了。", "customer", "complaint"),
        # the same said before, asked back
        ("I've emailed your billing team three times already.", "customer", "repeat_complaint"),
        ("你们又让我重新填一遍？", "customer", "repeat_complaint"),
        # a request the customer states bare, or asks as "how will you make up for it"
        ("直接退款吧。", "customer", "action_request"),
        ("那这件事你们打算怎么补偿？", "customer", "action_request"),
        ("Then can the courier leave it with my neighbour?", "customer", "action_request"),
        # a customer's yes/no question is no request
        ("Do I need to keep the receipt?", "customer", "question"),
        # an agent's option, an agent's done step, a state now in force
        ("我们马上给您补发，您也可以选择直接退款。", "agent", "commitment"),
        ("这边已经给您备注了加急。", "agent", "status_update"),
        ("The two extra seats are now active.", "agent", "status_update"),
        ("We're rebuilding the search index at the moment.", "agent", "status_update"),
        # what came back, what shows now; a second faulty one
        ("我的积分都找回来了。", "customer", "resolution_confirmation"),
        ("I can see the credit on my statement now.", "customer", "resolution_confirmation"),
        ("这是第三次收到坏的了。", "customer", "repeat_complaint"),
        ("我们的政策是三十天内可以换货。", "agent", "statement"),
        # a problem that has not come back since; a promise reported broken
        ("The technician came and the heating hasn't failed since.", "customer", "resolution_confirmation"),
        ("The courier said he would ring the bell, but he didn't.", "customer", "complaint"),
        ("客服说会给我回电话，结果也没打。", "customer", "complaint"),
        # a date that does not suit is no defect; a wh question with 请 is a question
        ("Monday doesn't work for me, could you come on Tuesday?", "customer", "action_request"),
        ("请问您的设备是什么型号？", "agent", "question"),
        ("Sorry, Saturday is fully booked.", "agent", "refusal"),
        ("I've reset your password and sent a link to your email.", "agent", "status_update"),
        # an exasperated ask; a bare ask "if possible"; an offer asked; a decline with "only"
        ("So how am I supposed to work without internet?", "customer", "complaint"),
        ("A window seat, if possible.", "customer", "action_request"),
        ("Shall I send a new code?", "agent", "question"),
        ("Refunds are only given in store, I'm afraid.", "agent", "refusal"),
        ("Can you also tell me how long it takes?", "customer", "question"),
        ("这两天网速快多了。", "customer", "resolution_confirmation"),
        ("我已经反映过一次了，根本没用。", "customer", "repeat_complaint"),
        ("路由器老是自己重启。", "customer", "complaint"),
        ("能不能把我的宽带升到500兆？", "customer", "action_request"),
        ("合约期内套餐不能变更。", "agent", "refusal"),
        ("这个问题不是第一次了，去年也是这样。", "customer", "repeat_complaint"),
        # read off the fifth set's misses, in new sentences
        ("I'm sorry, we're not able to extend the voucher.", "agent", "refusal"),
        ("这个我们没有权限处理。", "agent", "refusal"),
        ("I can confirm the refund is on its way.", "agent", "status_update"),
        ("You're right, we should have told you sooner.", "agent", "statement"),
        ("The tap works properly now.", "customer", "resolution_confirmation"),
        ("Why hasn't anyone called me back?", "customer", "complaint"),
        ("We booked a sea-view room and they switched us to a garden room.", "customer", "complaint"),
        ("师傅说好今天来，也没提前通知就不来了。", "customer", "complaint"),
        ("They promised a callback last time too and nothing happened.", "customer", "repeat_complaint"),
        ("Your deposit will be returned within five working days.", "agent", "commitment"),
        ("上门费由我们承担。", "agent", "commitment"),
        ("已经给您改到周五上午了。", "agent", "status_update"),
        ("I've moved your appointment to Friday at ten.", "agent", "status_update"),
        ("那就要蓝色的。", "customer", "action_request"),
        ("OK, the later slot then.", "customer", "action_request"),
        ("周六上午送过来行吗？", "customer", "action_request"),
    ],
)
def test_customer_service_unit_types_beyond_cue_words(text: str, role: str, kind: str) -> None:
    assert _unit(text, role).unit_type == kind


def test_a_repetition_words_apart_makes_a_repeat_complaint() -> None:
    assert _unit("上次你们的售后也说会上门，结果一直没人来。").unit_type == "repeat_complaint"


def test_a_question_after_a_clarification_in_one_turn_closes_it() -> None:
    assert _unit("您的意思是只有外箱破了，里面的东西没问题，是吗？", "agent").unit_type == "clarification"


def test_a_request_asked_stays_a_request_whatever_the_head_says() -> None:
    from state.units.unit_type import type_units

    ev = ConversationEvent(
        event_id="e", session_id="s", ts=TS, text="Okay, and can you email me the receipt?", speaker_role="customer"
    )
    _, turn = tag_turn(None, normalise_turn(ev, NormaliseConfig()), TagConfig(), LEX)

    class SureQuestion:
        classes = ("question", "action_request")

        def predict(self, texts, roles):  # type: ignore[no-untyped-def]
            import numpy as np

            return np.tile([0.99, 0.01], (len(texts), 1))

    assert type_units(turn, SureQuestion()).unit_kinds == ("action_request",)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # the Nth call or the Nth repair is a repeated contact, with no complaint word of its own
        ("这已经是我第四次来电问这个订单了。", "repeat_complaint"),
        ("热水器上周修过，这都是第二次修了。", "repeat_complaint"),
        ("I'm writing about the router again, the light is still blinking red.", "repeat_complaint"),
        ("That's twice now the courier has skipped my street.", "repeat_complaint"),
        # a thing coming apart, a new scratch, a strange smell, an unreasonable demand
        ("The sole of the left boot is coming apart after a week.", "complaint"),
        ("The lid keeps popping off in the dishwasher.", "complaint"),
        ("When the sofa arrived it had a scratch on the arm.", "complaint"),
        ("冰箱里有一股怪味，清洗过也没用。", "complaint"),
        ("让老人自己跑三趟来补材料，太不合理了。", "complaint"),
    ],
)
def test_repeated_contacts_and_plain_problem_reports(text: str, kind: str) -> None:
    assert _unit(text).unit_type == kind


def test_a_smell_that_is_gone_is_no_complaint() -> None:
    assert _unit("换了新滤网，屋里没有怪味了，谢谢。").unit_type != "complaint"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # no power to do it, or "we can't" + a plain verb: the business declines
        ("这个我们客服没有这个权限，需要财务审批。", "refusal"),
        ("We can't send a driver out on a Sunday.", "refusal"),
        # an agent sending someone, or acting now, or promising with 一定: a commitment
        ("我让工程师明天带备件过去。", "commitment"),
        ("我现在就联系仓库核对库存。", "commitment"),
        ("周五前一定给您回复。", "commitment"),
        # a contraction before a state ("it's still pending", "it's on back order") is a status
        ("It's still pending with the bank.", "status_update"),
        ("The spare hinge is still on back order.", "status_update"),
    ],
)
def test_agent_declines_and_promises(text: str, kind: str) -> None:
    assert _unit(text, "agent").unit_type == kind


def _turn_kind(text: str, role: str) -> str:
    """The most salient type of a turn's units (the rules alone, no head)."""
    ev = ConversationEvent(event_id="e", session_id="s", ts=TS, text=text, speaker_role=role)  # type: ignore[arg-type]
    _, turn = tag_turn(None, normalise_turn(ev, NormaliseConfig()), TagConfig(), LEX)
    return unit_kind([u.unit_type for u in units_from_turn(turn)])


@pytest.mark.parametrize(
    ("text", "role", "kind"),
    [
        # a wish opening a sentence is courtesy, and so are the plain remarks beside it
        ("祝您和家人周末出游愉快，天气预报说会放晴。", "agent", "smalltalk"),
        ("豆豆今天表现很乖，祝它早日康复。", "agent", "smalltalk"),
        ("提前祝贵公司开业大吉。", "agent", "smalltalk"),
        ("Enjoy the concert, and the parking opens at six.", "agent", "smalltalk"),
        ("Have a lovely trip, the ferry will be calm this time of year.", "agent", "smalltalk"),
        ("Give Max a pat from the team, he was very patient today.", "agent", "smalltalk"),
        ("Hope the party goes well, we've invited forty friends.", "customer", "smalltalk"),
        # a wish does not soften a complaint or a request in the same turn
        ("祝你们生意兴隆，可是我的洗衣机还是漏水。", "customer", "complaint"),
        # an offer asked back is a question, offer and all
        ("我帮您改到下周二上午，您看方便吗？", "agent", "question"),
        ("I can switch you to the annual plan today. Shall I go ahead?", "agent", "question"),
        # asking whether the business pays is a question, not a request
        ("Will you cover the cost of the taxi?", "customer", "question"),
        # a request asked as a question names what to add, cut, waive or bring
        ("这个月的网费能不能减一点？", "customer", "action_request"),
        ("能先给我们病房再加一床被子吗？", "customer", "action_request"),
        ("Could she also look at the back tyre?", "customer", "action_request"),
        # why didn't you …: a reproach, not a question for information
        ("发错颜色为什么不先问我一声？", "customer", "complaint"),
        # a reported promise: "says she'll", a doctor, 答复
        ("Priya says she'll send the revised quote this afternoon.", "agent", "third_party_commitment"),
        ("王医生说他明天上午可以加一个号。", "agent", "third_party_commitment"),
        ("物流那边答复周五前送到。", "agent", "third_party_commitment"),
        # declining: I'm afraid we can't …, 只能…不能…, 没办法答应
        ("I'm afraid we can't reinstate the old tariff.", "agent", "refusal"),
        ("电子发票只能按订单开，不能合并开具。", "agent", "refusal"),
        ("退押金要店长签字，我这边没办法直接同意。", "agent", "refusal"),
        # a problem that is gone or a thing that works again
        ("The scanner isn't jamming anymore.", "customer", "resolution_confirmation"),
        ("The sofa came on Tuesday and the cushions are the right way round.", "customer", "resolution_confirmation"),
        ("窗帘调好了，这次尺寸都对了。", "customer", "resolution_confirmation"),
        # a state that is still wrong, a count short, a service stopped, dizziness
        ("The heater still isn't switched on and it's been a week.", "customer", "complaint"),
        ("订了五十份便当，一数只有四十二份。", "customer", "complaint"),
        ("我们小区的暖气昨天晚上就停了。", "customer", "complaint"),
        ("新配的隐形眼镜戴上以后头晕。", "customer", "complaint"),
        ("昨天已经跟物业说过一次了，今天还是没人来修。", "customer", "repeat_complaint"),
        ("上周问你们还是这句话，说在排队。", "customer", "repeat_complaint"),
        # a customer's own plan, a photo sent
        ("那我先下周一过去看看再说。", "customer", "commitment"),
        ("截图发了，您看一下。", "customer", "status_update"),
        # 会 inside a noun (年会, 会员) is no promise; something once done is no progress
        ("您之前开通过这个会员。", "agent", "statement"),
    ],
)
def test_wishes_offers_reported_promises_and_refusals(text: str, role: str, kind: str) -> None:
    assert _turn_kind(text, role) == kind


@pytest.mark.parametrize(
    ("text", "role", "kind"),
    [
        # an agent closing the ticket or the order is the issue closed
        ("好的，这张工单我这边就给您结案了。", "agent", "resolution_confirmation"),
        ("这单维修我就给您关闭了，祝您用得顺手。", "agent", "resolution_confirmation"),
        ("Glad it's working. I'll close out the repair ticket now.", "agent", "resolution_confirmation"),
        ("I'll close the ticket once the refund lands.", "agent", "commitment"),
        # a promise quoted from someone else is theirs, also when it follows in the next clause
        ("我刚问了仓库，他说车子在高速上，一个小时内一定到。", "agent", "third_party_commitment"),
        ("质检部主任说周三之前能出报告。", "agent", "third_party_commitment"),
        (
            "Our dispatcher says Priya can be there by four, and she'll text you first.",
            "agent",
            "third_party_commitment",
        ),
        ("我会在明天中午前给您回电。", "agent", "commitment"),
        # who asked for or decided something is a statement
        ("这是老板亲自交代的。", "customer", "statement"),
        ("领导要求的，我也没办法。", "customer", "statement"),
        ("My manager asked for this.", "customer", "statement"),
        ("That change was requested by your account admin.", "agent", "statement"),
    ],
)
def test_closed_tickets_quoted_promises_and_who_asked(text: str, role: str, kind: str) -> None:
    assert _unit(text, role).unit_type == kind


@pytest.mark.parametrize(
    ("text", "role", "kind"),
    [
        # what an agent's lookup found is read back, a statement; a process under way stays a status
        ("查到了，物流那边签收成功，我们这边的退款回调失败了。", "agent", "statement"),
        ("我核了一下记录，那张卡上周就注销了。", "agent", "statement"),
        ("I've checked the schedule and there's no booking under that name.", "agent", "statement"),
        ("查到了，您的换货申请在仓库那边审核中。", "agent", "status_update"),
        ("看到了，差价已经给您退回原卡了。", "agent", "status_update"),
        # an agent closing a feedback or a job
        ("好的，那这条反馈我就给您关闭了。", "agent", "resolution_confirmation"),
        ("那我把维修单和配送单都关掉了。", "agent", "resolution_confirmation"),
        ("Great, I'll close this one out.", "agent", "resolution_confirmation"),
        (
            "The crew confirmed the sofa was picked up. I'm closing the job on our side.",
            "agent",
            "resolution_confirmation",
        ),
        # an earlier contact named is a repeat complaint
        ("上周我就打过你们电话，到现在还是没人来。", "customer", "repeat_complaint"),
        ("前天我就找过客服了，说当天给我回电，结果啥也没有。", "customer", "repeat_complaint"),
        ("The heater is out. This is my second call today.", "customer", "repeat_complaint"),
        ("I emailed your support team about it last week too and heard nothing.", "customer", "repeat_complaint"),
        # a promise reported broken with 结果
        ("店员说会帮我们留座位，结果到了根本没有位置。", "customer", "complaint"),
    ],
)
def test_lookups_closings_earlier_contacts_and_broken_promises(text: str, role: str, kind: str) -> None:
    assert _turn_kind(text, role) == kind
