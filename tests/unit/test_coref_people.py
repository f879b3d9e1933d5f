"""Chinese staff named in an agent's frames (state.coref.people), through the resolver."""

from __future__ import annotations

from state.coref.people import full_name_of, zh_people
from tests.coref_support import LEX, last_entity


def test_a_full_name_before_a_title_is_the_person_without_the_title() -> None:
    said = "下午门诊是王立新主任，上午是孙悦副主任医师。"
    assert [n.entity for n in zh_people(said, LEX, [])] == ["王立新", "孙悦"]


def test_a_name_after_a_role_word_and_is_is_a_person() -> None:
    assert [n.entity for n in zh_people("您好，这次的配送员是黄建军。", LEX, [])] == ["黄建军"]
    assert [n.entity for n in zh_people("到店后由美容师小周给它修剪。", LEX, [])] == ["小周"]


def test_names_opening_the_clauses_of_an_announced_list_are_people() -> None:
    said = "有两位老师可选：张晓东主要教口语，李文主要教写作。"
    assert [n.entity for n in zh_people(said, LEX, [])] == ["张晓东", "李文"]


def test_a_common_word_before_a_title_is_no_person() -> None:
    assert zh_people("上午是金牌教练带课。", LEX, []) == []


def test_a_pronoun_binds_the_person_named_in_a_role_frame_not_the_shop() -> None:
    said = "您好，这里是永达丰田4S店，服务顾问是林佳佳。"
    assert last_entity("想约个保养", said, "到了直接找她就行吗") == "林佳佳"


def test_a_surname_and_title_stands_for_the_full_name_said_before() -> None:
    assert full_name_of("项主任", ["陈博", "项文静"], LEX) == "项文静"
    assert full_name_of("王师傅", ["项文静"], LEX) is None
    said = "周三上午是赵明华主任出诊。"
    assert last_entity("想挂个号", said, "我去年找赵主任看过，她那边的病历能调出来吗") == "赵明华"


def test_a_verb_before_a_title_is_no_person() -> None:
    assert last_entity("配件到了再约师傅上门。", "他几点来") is None


def test_a_time_word_and_a_verb_before_a_title_are_no_name() -> None:
    said = "心内科周二有专家张抒扬，周四有副主任医师王欣。"
    assert [n.entity for n in zh_people(said, LEX, [])] == ["张抒扬", "王欣"]


def test_a_full_name_and_title_after_a_possessive_is_the_person() -> None:
    said = "我让运维组的郑海峰工程师今晚联系您。"
    assert [n.entity for n in zh_people(said, LEX, [])] == ["郑海峰"]


def test_a_name_after_a_role_word_may_end_at_a_space_and_read_as_a_place() -> None:
    said = "抄表员马建国 11 月 30 日现场抄的表。"
    assert [n.entity for n in zh_people(said, LEX, [])] == ["马建国"]


def test_an_owner_word_and_is_name_a_person_but_a_title_inside_a_name_does_not() -> None:
    assert [n.entity for n in zh_people("楼上的业主是黄志强。", LEX, [])] == ["黄志强"]
    assert zh_people("我去年找项主任看过。", LEX, []) == []


def test_a_surname_and_a_one_character_title_read_as_one_word_is_no_person() -> None:
    assert last_entity("楼上一直在装修", "已经通知楼上暂停卫生间施工。", "他什么时候能停") is None


def test_a_name_after_a_team_and_a_possessive_is_a_person_but_a_plan_is_not() -> None:
    assert [n.entity for n in zh_people("我通知机房的郑凯去处理。", LEX, [])] == ["郑凯"]
    assert [n.entity for n in zh_people("我让桌面组的方思雨下午过去。", LEX, [])] == ["方思雨"]
    assert zh_people("财务部的方案下周出。", LEX, []) == []


def test_a_full_name_and_title_right_after_a_department_is_the_person() -> None:
    said = "小儿眼科周立新主任周三有号。"
    assert [n.entity for n in zh_people(said, LEX, [])] == ["周立新"]
    assert last_entity("想挂个号", said, "周主任的号多少钱") == "周立新"


def test_a_name_after_a_cleaner_auntie_and_is_is_a_person() -> None:
    assert [n.entity for n in zh_people("保洁阿姨是刘桂芳。", LEX, [])] == ["刘桂芳"]
