"""Which candidate a reference takes: the kind its words ask for (这单 a record), checked in dialogues."""

from __future__ import annotations

from state.coref.anaphora import RECORD, classifier_type
from state.coref.window import compatibility, no_referent
from tests.coref_support import LEX, last_entity


def test_the_order_classifier_asks_for_a_record() -> None:
    assert classifier_type("这单") == RECORD
    assert classifier_type("原来那单") == RECORD
    assert classifier_type("那个") is None
    assert compatibility(RECORD, ("order",), LEX) == 2
    assert compatibility(RECORD, ("identifier",), LEX) == 2
    assert compatibility(RECORD, ("product",), LEX) == 0
    assert compatibility(RECORD, (), LEX) == 0


def test_this_order_takes_the_order_not_the_product_said_after_it() -> None:
    bought = "订单号 MD-4471902，我买的美的电饭煲一直没发货。"
    agent = "查到了，美的电饭煲今天发出，明天送到。"
    assert last_entity(bought, agent, "好的，这单送到以后还能退吗？") == "MD-4471902"


def test_the_original_order_is_the_first_record_said() -> None:
    first = "我的订单 RC-3310021 想改个时间。"
    agent = "原时间没法改，已为您新建订单 RC-3310087。"
    assert last_entity(first, agent, "那原来那单会自动取消吗？") == "RC-3310021"


def test_a_floor_or_a_bare_title_is_no_referent() -> None:
    assert all(no_referent(said) for said in ("3rd", "五楼", "Mr."))
    assert not any(no_referent(said) for said in ("Dr. Grant", "B207", "4B"))


def test_that_one_skips_the_floor_said_after_the_printer() -> None:
    asked = "My printer keeps jamming."
    agent = "You can print to the Ricoh MP C3004 on the 2nd floor meanwhile."
    assert last_entity(asked, agent, "Is that one set up for colour?") == "Ricoh MP C3004"


def test_a_title_right_after_a_name_is_no_reference_to_someone_before() -> None:
    own = "我约了周五复查，主治医生是孙丽华。"
    agent = "康复科有两位医生：郑涛医生和白晓雯医生。"
    asked = "白医生哪天有空？"
    answer = "白晓雯医生周二上午有空。"
    assert last_entity(own, agent, asked, answer, "那就周二，她看运动损伤吗") == "白晓雯"
