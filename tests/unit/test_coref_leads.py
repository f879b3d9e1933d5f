"""Bridging by the kind word a name was introduced with (state.coref.leads), alone and through the resolver."""

from __future__ import annotations

from state.coref.leads import Lead, bridges, lead_words
from tests.coref_support import last_entity


def test_a_kind_tied_by_shi_is_kept_with_the_name() -> None:
    text = "书桌上两台机器：打印机是惠普M232dw，扫描仪是爱普生DS-530"
    at = text.index("爱普生")
    assert lead_words(text, (at, len(text)), identifier=False) == Lead(("扫描仪",), True)


def test_words_before_a_name_that_no_shi_ties_are_not_a_kind() -> None:
    text = "推荐您去全聚德吃烤鸭"
    at = text.index("全聚德")
    assert lead_words(text, (at, at + 3), identifier=False) == Lead((), False)


def test_english_words_before_an_identifier_and_across_an_apposition() -> None:
    text = "There is a brake recall, campaign BR-7731."
    at = text.index("BR-7731")
    assert lead_words(text, (at, at + 7), identifier=True).words == ("recall", "campaign")


def test_a_bare_kind_needs_a_tie_and_one_character_needs_a_pointer() -> None:
    assert bridges("扫描仪卡纸了", [Lead(("扫描仪",), True)], []) == [((0, 3), 0)]
    assert bridges("扫描仪卡纸了", [Lead(("扫描仪",), False)], []) == []
    assert bridges("这单什么时候发货", [Lead(("运单号",), False)], []) == [((0, 2), 0)]
    assert bridges("单子呢", [Lead(("运单号",), False)], []) == []


def test_a_chinese_appliance_named_by_its_kind_picks_its_model() -> None:
    said = "书桌上两台机器：打印机是惠普M232dw，扫描仪是爱普生DS-530"
    assert last_entity(said, "扫描仪一直提示卡纸") == "爱普生DS-530"
    assert last_entity(said, "打印机倒是好的，它还能用") == "惠普M232dw"


def test_a_pointer_and_the_kind_of_an_identifier_picks_it() -> None:
    said = "已为您提交退款申请，退款编号RF-66120。维修工程师是张明。"
    assert last_entity(said, "这个编号在哪里能查进度") == "RF-66120"


def test_an_english_definite_noun_picks_the_identifier_said_after_it() -> None:
    said = "I filed warranty claim WC-40021 and opened support case SC-99183 for you."
    assert last_entity(said, "how long does the claim usually take?") == "WC-40021"
    assert last_entity(said, "can you add a note to that case?") == "SC-99183"


def test_a_phone_number_is_not_named_by_asking_for_a_phone() -> None:
    said = "推荐您去老舍茶馆，电话是83040617。"
    assert last_entity(said, "有电话么？") != "83040617"


def test_words_read_as_a_name_right_before_an_identifier_still_label_it() -> None:
    said = "Thanks. Refund reference RFD-20417-Q is on its way."
    assert last_entity(said, "how long until the refund reaches my card") == "RFD-20417-Q"


def test_a_name_said_before_a_colon_gives_the_next_name_no_kind() -> None:
    said = "Case SR-7781: Teams keeps freezing on my desktop."
    assert last_entity(said, "can you escalate this case?") == "SR-7781"


def test_a_hyphenated_code_read_as_a_model_still_keeps_its_kind() -> None:
    said = "There is an airbag recall on your car, campaign ABX-204."
    assert last_entity(said, "does the airbag campaign cost me anything") == "ABX-204"


def test_a_counted_item_is_no_kind() -> None:
    text = "寄了两个包裹，一个是圆通YT7788120，一个是韵达4312009981"
    at = text.index("圆通")
    assert lead_words(text, (at, at + 11), identifier=True).words == ()


def test_a_bare_label_takes_the_kind_of_the_clause_before_it() -> None:
    said = "已为您登记退货申请，单号TH-30318，退款流水号RF-88702。"
    assert last_entity(said, "这个退货申请什么时候审核") == "TH-30318"


def test_the_clause_before_a_bare_label_gives_the_kind() -> None:
    text = "已记录您的报修，编号BX-4410。"
    at = text.index("BX")
    assert lead_words(text, (at, at + 7), identifier=True).words == ("报修", "编号")
