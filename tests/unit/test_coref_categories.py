"""Category knowledge (state.coref.categories): a kind's noun finds a name of that kind."""

from __future__ import annotations

import pytest

from state.coref.categories import category_nouns
from state.coref.lexicon import LexiconError, parse_coref_lexicon
from tests.coref_support import LEX, last_entity


def test_a_product_line_word_gives_its_kind_nouns() -> None:
    assert "电脑" in category_nouns("ThinkPad X1 Carbon", LEX)
    assert "laptop" in category_nouns("ThinkPad X1 Carbon", LEX)
    assert "键盘" in category_nouns("Keychron K2", LEX)
    assert "wiki" in category_nouns("Confluence", LEX)
    assert category_nouns("Corp-5G", LEX) == ()


def test_ascii_brand_words_match_whole_words_only() -> None:
    assert category_nouns("Macbeth", LEX) == ()  # holds "Mac…" but is no MacBook


def test_a_category_noun_finds_the_name_of_its_kind_not_the_latest_one() -> None:
    assert last_entity("我买了一台ThinkPad X1，还有一个Keychron K2。", "好的。", "这台电脑开不了机") == "ThinkPad X1"


def test_a_category_noun_finds_its_kind_across_types() -> None:
    # 金蝶K3 is read as a product; the system it is still is found by 这个系统, not the database said after it
    assert (
        last_entity("我们用的金蝶K3登不上，提示数据库连接失败", "请问是所有人吗？", "都不行，这个系统明天要用")
        == "金蝶K3"
    )


def test_a_category_entry_without_nouns_is_an_error() -> None:
    with pytest.raises(LexiconError):
        parse_coref_lexicon(["categories: [{names: [MacBook]}]", "entities: []"])


def test_the_kind_word_of_a_one_reference_binds_the_name_of_that_kind() -> None:
    turns = (
        "My Jira account is locked, username tkim.",
        "Is Notion giving you trouble as well?",
        "Yes.",
        "Jira is fine now. But the wiki one still fails to load",
    )
    assert last_entity(*turns) == "Notion"


def test_an_alias_inside_a_hyphen_joined_code_is_no_mention() -> None:
    from state.coref.mentions import extract_mentions

    found = [(m.entity, m.source) for m in extract_mentions("是数据库服务器DB-SH-07磁盘满了", LEX)]
    assert ("DB-SH-07", "identifier") in found
    assert [e for e, _ in found if e == "数据库"] == ["数据库"]  # 数据库 once; DB inside the code is none


def test_the_noun_said_before_a_code_names_it() -> None:
    turns = ("刚发现主库服务器PG-BJ-01挂了，缓存集群也慢", "好的", "那台服务器什么时候能修好")
    assert last_entity(*turns) == "PG-BJ-01"


def test_account_endings_are_identifiers_each() -> None:
    turns = (
        "I hold two savings accounts with you, ending 1185 and 6620.",
        "Sure, I see both.",
        "Please close the first one.",
    )
    assert last_entity(*turns) == "1185"
    from state.coref.mentions import extract_mentions

    assert [m.entity for m in extract_mentions("信用卡尾号5531还款失败了", LEX) if m.source == "identifier"] == ["5531"]


def test_a_common_word_ending_holds_no_kind() -> None:
    assert category_nouns("照片", LEX) == ()  # 片 ends drug names and photos alike: no brand word


def test_a_bare_product_noun_is_no_reference_to_another_thing() -> None:
    turns = ("我的ThinkPad X1连不上家里的Wi-Fi，名字是Home-5G", "别的设备能连吗？", "手机可以，就这台电脑不行")
    assert last_entity(*turns) == "ThinkPad X1"
