from hypothesis import given, settings
from hypothesis import strategies as st

from state.recall.config import load_tables
from state.recall.specifics import coverage, specific_terms

GENERAL = load_tables().general_terms


def _texts(question: str) -> tuple[str, ...]:
    return tuple(t.text for t in specific_terms(question, GENERAL))


def test_nouns_and_identifiers_are_named_general_words_and_times_are_not() -> None:
    assert _texts("Has the refund for order 55987 gone through yet?") == ("refund", "55987")
    assert _texts("Any news on my problem?") == ()
    assert _texts("What did I cancel last Monday?") == ()
    assert _texts("洗衣机那个师傅今天会来吗？") == ("洗衣机",)
    assert "年费" in _texts("这张卡的年费是多少？能免吗")
    assert "时候" not in _texts("体检报告什么时候能出")


def test_another_order_number_is_not_covered() -> None:
    terms = specific_terms("Has the refund for order 55987 gone through yet?", GENERAL)
    c = coverage(terms, ["Refund of $19.99 for order 55102 is approved."], 0.5, 0.3)
    assert c.held == ("refund",)
    assert c.missing == ("55987",)
    assert c.factor == 0.3


def test_the_same_order_number_is_covered() -> None:
    terms = specific_terms("Has the refund for order 55102 gone through yet?", GENERAL)
    c = coverage(terms, ["Refund of $19.99 for order 55102 is approved."], 0.5, 0.3)
    assert c.missing == ()
    assert c.factor == 1.0


def test_a_thing_never_discussed_in_the_same_area_lowers_the_factor() -> None:
    terms = specific_terms("这张卡的年费是多少？能免吗", GENERAL)
    c = coverage(terms, ["我的信用卡额度太低了，能不能提到五万", "已通过，当前额度5万元。"], 0.5, 0.3)
    assert "年费" in c.missing
    assert c.factor < 1.0


def test_chinese_term_held_by_half_of_its_bigrams() -> None:
    terms = specific_terms("20250611088 那张发票重开了吗", GENERAL)
    c = coverage(terms, ["20250611088 的发票已经为您重新开具"], 0.5, 0.3)
    assert c.factor == 1.0


def test_a_term_in_another_script_than_the_memories_is_not_judged() -> None:
    terms = specific_terms("screen repair 要付多少钱来着？", GENERAL)
    c = coverage(terms, ["我的 iPhone 屏幕碎了", "可以，AppleCare 意外损坏每次收 29 美元服务费。"], 0.5, 0.3)
    assert c.factor == 1.0
    assert c.missing == ()


def test_a_question_naming_nothing_specific_is_unaffected() -> None:
    assert coverage(specific_terms("我的维修进度怎么样了？", GENERAL), ["电视修好了"], 0.5, 0.3).factor == 1.0
    assert coverage((), ["anything"], 0.5, 0.3).factor == 1.0
    assert coverage(specific_terms("Where is my refund?", GENERAL), [], 0.5, 0.3).factor == 1.0


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=40), st.lists(st.text(max_size=60), max_size=4))
def test_factor_stays_between_the_floors_and_one(question: str, texts: list[str]) -> None:
    c = coverage(specific_terms(question, GENERAL), texts, 0.5, 0.3)
    assert 0.3 <= c.factor <= 1.0
    assert set(c.held).isdisjoint(c.missing)


def test_what_a_wh_word_asks_for_is_not_a_named_thing() -> None:
    assert _texts("Which song motivates Caroline to be courageous?") == ("Caroline",)
    assert _texts("What musical artists/bands has Melanie seen?") == ("Melanie",)
    assert "pot" not in _texts("What kind of pot did Mel and her kids make with clay?")
    assert _texts("which room was it again?") == ()
    assert "颜色" not in _texts("你们发的是什么颜色的")


def test_how_much_before_a_clause_asks_for_an_amount_not_for_its_nouns() -> None:
    assert _texts("remind me how much the Enterprise tier costs per seat?")[:2] == ("Enterprise", "tier")
    assert _texts("How many items are in my order?") == ()  # "how many items": what is counted is asked for


def test_a_part_and_a_person_by_sex_are_general_words() -> None:
    # "the part the plumber lady told me to get swapped out" against "Rosa … said the anode rod … needs replacing"
    assert _texts("what was the part the plumber lady told me to get swapped out?") == ("plumber",)


def test_a_year_or_a_count_is_no_identifier_but_a_code_is() -> None:
    assert "2023" not in _texts("How many times has Melanie gone to the beach in 2023?")
    assert [t.identifier for t in specific_terms("INC-40417 有结果了吗", GENERAL) if t.text == "40417"] == [True]
    assert [t.identifier for t in specific_terms("SF1409928831 现在到哪了", GENERAL)] == [True]


def test_people_by_kin_or_role_and_the_memories_speakers_are_not_judged() -> None:
    assert "师傅" not in _texts("洗衣机那个师傅今天会来吗？")
    terms = specific_terms("What book is Jon currently reading?", GENERAL)
    c = coverage(terms, ["I'm halfway through a novel right now."], 0.5, 0.3, frozenset({"jon", "gina"}))
    assert c.factor == 1.0
    terms = specific_terms("How long have Mel and her husband been married?", GENERAL)
    assert coverage(terms, ["We got married five years ago."], 0.5, 0.3, frozenset({"melanie"})).factor == 1.0


def test_how_a_matter_ended_names_no_end() -> None:
    assert _texts("how did the password thing get fixed in the end?") == ("password",)
    assert _texts("what happened with the June one in the end?") == ("June",)


def test_terms_in_the_other_script_are_judged_once_the_memories_hold_one_of_them() -> None:
    terms = specific_terms("Kindle Unlimited 的 subscription 我要怎么取消", GENERAL)
    c = coverage(terms, ["我的 Kindle 屏幕上有一条竖线", "已提交换新 新机三天内寄出"], 0.5, 0.3)
    assert c.held == ("Kindle",)
    assert set(c.missing) == {"Unlimited", "subscription"}
    assert c.factor < 1.0


def test_a_four_digit_number_a_record_noun_names_is_an_identifier() -> None:
    terms = specific_terms("7731那个订单到哪了", GENERAL)
    assert [(t.text, t.identifier) for t in terms] == [("7731", True)]
    c = coverage(terms, ["可以的，已为您把7719改到本周六配送"], 0.5, 0.3)
    assert c.missing == ("7731",)
    assert c.factor == 0.3


def _head(question: str) -> str | None:
    return next((t.text for t in specific_terms(question, GENERAL) if t.head), None)


def test_the_head_of_a_chinese_question_is_its_last_noun() -> None:
    assert _head("杭州那边的民宿能改日期吗") == "民宿"
    assert _head("这台 MacBook 的 keyboard 坏了能修吗") == "keyboard"
    assert _head("扫地机器人换滤网多少钱") == "滤网"


def test_the_head_of_an_english_question_ends_its_first_run_of_nouns() -> None:
    assert _head("Did the delivery fee refund for my sofa come through?") == "refund"
    assert _head("When will the gym membership fee be charged?") == "fee"
    assert _head("Is the battery on my Kindle covered?") == "battery"


def test_an_identifier_is_never_the_head() -> None:
    assert _head("SF2233445566 到哪了") is None
    assert _head("Where is parcel QX48812?") is None


def test_a_held_frame_of_a_missing_head_counts_for_nothing_zh() -> None:
    # the kettle was discussed, its filter never: the kettle only frames what is asked
    terms = specific_terms("电热水壶的滤网在哪买", GENERAL)
    c = coverage(terms, ["电热水壶烧水有异响，已为您登记换新。"], 0.5, 0.3)
    assert c.held == ("电热水壶",)
    assert c.missing == ("滤网",)
    assert c.factor == 0.5


def test_a_held_frame_of_a_missing_head_counts_for_nothing_en() -> None:
    # the trip to Lisbon was discussed, its travel insurance never
    terms = specific_terms("Is travel insurance included with my Lisbon trip?", GENERAL)
    c = coverage(terms, ["Your Lisbon trip is booked for 12 May, hotel included."], 0.5, 0.3)
    assert "Lisbon" in c.held
    assert "insurance" in c.missing
    assert c.factor == 0.5


def test_a_held_head_with_a_missing_frame_keeps_its_share() -> None:
    # the refund was discussed; the question frames it with a word the memory lacks
    terms = specific_terms("Has the refund for the blender come through?", GENERAL)
    c = coverage(terms, ["Your refund of $40 was issued today."], 0.5, 0.3)
    assert c.held == ("refund",)
    assert c.missing == ("blender",)
    assert c.factor == 0.75


def test_a_held_head_in_chinese_keeps_its_share() -> None:
    terms = specific_terms("上海那家店的发票开了吗", GENERAL)
    c = coverage(terms, ["您的发票已开好，发到邮箱了。"], 0.5, 0.3)
    assert "发票" in c.held
    assert c.factor > 0.5


def test_all_held_is_full_cover_whatever_the_head() -> None:
    terms = specific_terms("AirPods 的电池还能换吗", GENERAL)
    c = coverage(terms, ["AirPods 电池鼓包了，已为您安排换电池。"], 0.5, 0.3)
    assert c.missing == ()
    assert c.factor == 1.0


def test_a_compound_jieba_cuts_apart_is_joined_back() -> None:
    # "年费" after "要不要": jieba cuts the compound into single characters
    assert "年费" in _texts("这个会员要不要年费")
    assert _head("这个会员要不要年费") == "年费"
    assert "我爸" not in _texts("我爸的复查约在哪天")  # a pronoun before a one-character noun stays apart
