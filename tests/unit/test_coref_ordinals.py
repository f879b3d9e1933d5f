"""Ordinals over items the agent labelled (第一笔…是, 第二笔是); 头一个 is the first (state.coref.heads)."""

from __future__ import annotations

from state.coref.heads import enumeration
from tests.coref_support import last_entity


def test_items_labelled_by_an_ordinal_and_shi_are_listed() -> None:
    said = "有两笔退款：第一笔收款方是杭州乐途旅行社，第二笔是腾讯视频年卡"
    assert enumeration(said) == ["杭州乐途旅行社", "腾讯视频年卡"]


def test_tou_yi_ge_is_the_first_of_the_labelled_items() -> None:
    said = "有两笔退款：第一笔收款方是杭州乐途旅行社，第二笔是腾讯视频年卡"
    assert last_entity("帮我查下退款", said, "头一个什么时候到账") == "杭州乐途旅行社"
    assert last_entity("帮我查下退款", said, "第二个能不能加急") == "腾讯视频年卡"


def test_na_wei_asks_for_a_person_not_the_place_said_before() -> None:
    said = "骨科门诊在仁济医院东院三楼，今天坐诊的是陈立伟主任"
    assert last_entity("我想看膝盖", said, "那位下午还在吗") == "陈立伟"


def test_a_typed_ordinal_counts_the_people_listed_not_a_list_inside_one_clause() -> None:
    said = "目前有两位教练可约：王磊主要带减脂，陈静主要带增肌和康复训练。"
    assert last_entity("想约私教", said, "后面那位是不是更合适") == "陈静"


def test_a_thing_said_as_the_second_of_its_kind_pairs_with_the_one_before() -> None:
    first = "hi, Teams keeps freezing on my Dell laptop, ticket INC0051122"
    second = "For the headset I've opened a second ticket, INC0051187."
    assert last_entity(first, "ok", second, "can you close the first one then?") == "INC0051122"
    assert last_entity(first, "ok", second, "and the other one, who has it?") == "INC0051122"


def test_an_adverb_first_gives_no_rank() -> None:
    first = "hi, Outlook keeps asking for my password, ticket INC0051122"
    fix = "Let's fix Outlook first: can you remove the account and add it back?"
    second = "For the key I've opened a second ticket, INC0051187."
    assert last_entity(first, fix, "done", second, "can you close the first one then?") == "INC0051122"


def test_a_price_said_with_de_before_a_listed_item_is_no_part_of_it() -> None:
    assert enumeration("目前有沃派59元套餐和39元的腾讯王卡，都比较实惠") == ["沃派59元套餐", "腾讯王卡"]


def test_the_other_noun_is_the_one_of_the_pair_not_spoken_of_since() -> None:
    said = "hi, I have a Chase Sapphire Preferred and a Chase Freedom Unlimited, and there's a charge"
    turns = (said, "the Freedom one. $89.99 from a shop", "Done, dispute number 48820-DSP.")
    assert last_entity(*turns, "does the other card get a new number too?") == "Chase Sapphire Preferred"


def test_an_untyped_ordinal_ranks_the_people_an_agent_listed() -> None:
    said = "您好，心内科下周二有专家张抒扬，周四有副主任医师王欣。"
    assert last_entity("想给我妈挂心内科的号", said, "头一个挂号费多少") == "张抒扬"


def test_a_new_number_pairs_with_the_record_of_its_kind_before_it() -> None:
    first = "已为您登记工单INC0051122，分配给运维组。"
    second = "需要另开，新单号INC0051187。"
    assert (
        last_entity("电脑蓝屏", first, "显示器也闪，要另开单吗", second, "那前一个单子修完记得通知我") == "INC0051122"
    )


def test_an_ordinal_counts_the_options_offered_not_the_one_said_before_them() -> None:
    own = "I'd like to move my visit with Dr. Ann Cole on Friday."
    offered = "Dr. Cole is away that week. Dr. Paul Reid has Monday at 9, and Dr. Mei Tan has Tuesday at 3."
    assert last_entity(own, offered, "Is the second doctor in the same building?") == "Dr. Mei Tan"


def test_a_bare_bi_pointer_takes_a_payment_record_over_a_product() -> None:
    said = ("我们用的是飞书企业版，续费时扣了两次", "请提供订单号。", "FS-PAY-1021和FS-PAY-1022，后面那个是多扣的")
    assert last_entity(*said, "核实了，第二笔是重复扣款。", "这笔钱什么时候退？") == "FS-PAY-1022"
