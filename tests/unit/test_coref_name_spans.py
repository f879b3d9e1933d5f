"""Where a Chinese person's name and title start, and 有点 read as no list opener (state.coref.mentions, names)."""

from __future__ import annotations

from state.coref.lexicon import load_coref_lexicon
from state.coref.mentions import extract_mentions
from tests.coref_support import last_entity

LEX = load_coref_lexicon().get()


def _names(text: str) -> list[str]:
    return [m.entity for m in extract_mentions(text, LEX)]


def test_a_full_name_before_a_title_is_the_person_without_the_title() -> None:
    assert "王建华" in _names("已安排王建华师傅上门，请保持电话畅通")
    assert "国师傅" not in _names("已安排王建华师傅上门，请保持电话畅通")


def test_a_surname_and_a_title_alone_stay_together() -> None:
    assert "刘师傅" in _names("快递员刘师傅说下午送到")


def test_you_dian_is_a_bit_not_a_list_opener() -> None:
    names = _names("这个名字我有点耳熟，好像以前用过")
    assert not any(n.startswith("点") for n in names)


def test_a_name_opened_by_a_word_in_capitals_is_kept_whole() -> None:
    names = _names("You were billed $12.00 by NETFLIX INTERNATIONAL and $80.10 by ACME TOOLS INC yesterday.")
    assert "NETFLIX INTERNATIONAL" in names
    assert "ACME TOOLS INC" in names
    assert "Machine Learning Specialization" not in _names("I joined the AWS Machine Learning Specialization")
    assert "AWS Machine Learning Specialization" in _names("I joined the AWS Machine Learning Specialization")


def test_an_acronym_alone_is_no_name() -> None:
    assert "VPN" not in _names("my laptop drops the VPN every hour")


def test_a_noun_before_a_number_labels_the_number_not_the_brand() -> None:
    names = _names("DHL tracking 4471920355 shows delivered but the box is not here")
    assert "DHL tracking" not in names


def test_a_latin_name_ends_where_a_copula_joins_it_to_a_clause() -> None:
    assert "Prime卡" in _names("我有两张卡，Prime卡是信用卡，另一张是储蓄卡")


def test_a_counted_stay_before_a_hotel_is_no_part_of_its_name() -> None:
    assert "杭州西湖国宾馆" in _names("订单里还有两晚杭州西湖国宾馆。")


def test_a_copula_and_a_type_suffix_are_no_name() -> None:
    assert _names("他说是店里漏装的") == []


def test_a_capital_and_hyphen_before_a_name_belong_to_it() -> None:
    assert "T-Mobile Go5G Plus" in _names("hey, I'm on T-Mobile Go5G Plus and my bill jumped")


def test_a_word_in_capitals_after_a_count_and_before_a_noun_is_a_product_line() -> None:
    names = _names("在宜家买了一个BILLY书架和一张LACK茶几，约了今天安装")
    assert "BILLY书架" in names
    assert "LACK茶几" in names


def test_a_time_in_brackets_is_no_branch_of_a_name() -> None:
    found = extract_mentions("可以改到 CZ3301（09:15起飞）或者 CZ3305（13:40起飞）。", LEX)
    assert [n.entity for n in found] == ["CZ3301", "CZ3305"]
    assert [n.entity for n in extract_mentions("推荐您去东来顺(前门大街店)用餐。", LEX)] == ["东来顺(前门大街店)"]


def test_a_surname_that_ends_a_word_before_a_title_is_no_person() -> None:
    assert "周主任" not in _names("要是下周主任有空，就约他吧。")
    assert _names("我上次约的是周主任。") == ["周主任"]


def test_a_version_after_an_open_name_belongs_to_it() -> None:
    assert "SecureLink 4.1" in _names("您装的客户端是 SecureLink 4.1 吗？")


def test_a_model_year_before_an_english_make_and_model_belongs_to_it() -> None:
    assert "2020 Toyota RAV-4" in _names("I have a 2020 Toyota RAV-4 booked for Monday.")


def test_a_chinese_product_word_before_a_latin_brand_is_its_kind() -> None:
    found = extract_mentions("还有投影仪Epson EB-530也连不上。", LEX)
    assert [(n.entity, "投影仪" in n.kinds) for n in found if "EB-530" in n.entity] == [("Epson EB-530", True)]


def test_words_in_capitals_joined_by_hyphens_are_a_name_and_can_be_picked_by_rank() -> None:
    said = "Ticket INC0552 is open. Are you on STAFF-WIFI or VISITOR-WIFI?"
    assert [n.entity for n in extract_mentions(said, LEX)] == ["INC0552", "STAFF-WIFI", "VISITOR-WIFI"]
    assert last_entity("The Wi-Fi keeps dropping", said, "The second one") == "VISITOR-WIFI"


def test_an_edition_of_a_product_is_one_name_from_after_the_verb_before_it() -> None:
    assert _names("我们一直在用金山WPS专业版，下月到期。") == ["金山WPS专业版"]
    assert "续订标准版" not in _names("续订标准版是每年 300 元；升级到金山WPS企业版是每年 500 元。")
    assert "金山WPS企业版" in _names("续订标准版是每年 300 元；升级到金山WPS企业版是每年 500 元。")
