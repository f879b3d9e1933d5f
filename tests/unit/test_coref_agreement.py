"""Gender agreement of personal pronouns (state.coref.agreement), through the resolver."""

from __future__ import annotations

from state.coref.agreement import pronoun_gender, title_gender
from tests.coref_support import last_entity


def test_genders_of_pronouns_and_titles() -> None:
    assert (pronoun_gender("Him"), pronoun_gender("她"), pronoun_gender("他"), pronoun_gender("it")) == (
        "m",
        "f",
        None,
        None,
    )
    assert (title_gender("Ms. Alvarez"), title_gender("Mr. Chen"), title_gender("王女士"), title_gender("Dr. Kim")) == (
        "f",
        "m",
        "f",
        None,
    )


def test_a_pronoun_skips_a_person_of_the_other_gender_and_continues_its_own() -> None:
    said = (
        "I need to cancel my appointment with Dr. Patel on Thursday.",
        "Sure. Would you like to reschedule with her, or see Dr. Okafor, who has openings this week?",
    )
    assert last_entity(*said, "When is she next available?") == "Dr. Patel"
    assert last_entity(*said, "Does he take Aetna?") == "Dr. Okafor"


def test_a_common_given_name_tells_the_gender_of_two_staff_offered() -> None:
    said = "I can book you tomorrow with technician Marcus Reyes, or Friday with Julia Brandt."
    assert last_entity("my car makes a noise", said, "tomorrow works, what time can he take it?") == "Marcus Reyes"
    assert last_entity("my car makes a noise", said, "friday is better, is she experienced?") == "Julia Brandt"


def test_a_capitalised_name_after_a_role_word_is_a_person() -> None:
    said = "can my mentor Daniel Cho still see my work on the paused course"
    assert last_entity("I want to pause the IBM course", said, "ok pls tell him I'll be back") == "Daniel Cho"


def test_a_capitalised_given_name_is_a_person_whatever_type_word_is_near() -> None:
    said = "Hi, I'm Marcus with card services. Which card is the charge on?"
    assert last_entity("a charge I don't recognize", said, "can he call me back later?") == "Marcus"


def test_a_single_given_name_tells_the_gender() -> None:
    assert title_gender("Grace", {"grace": "f"}) == "f"


def test_a_pronoun_whose_clause_speaks_of_flying_binds_the_flight() -> None:
    said = "携程订的南航CZ3101，广州飞北京，订单号1128847731234"
    hotel = "查到了，您这个订单里还有一晚北京国贸大酒店。另外南航刚通知这趟航班取消了。"
    assert last_entity(said, hotel, "啊？那它能免费改签吗") == "CZ3101"


def test_a_woman_introduced_with_she_is_called_is_she_later_not_the_doctor() -> None:
    doctor = "可以约内科的韩立军医生，周三上午有号。"
    booked = "好的，已为周桂芳预约周三上午韩立军医生的号。"
    said = (doctor, "那就约他吧，她叫周桂芳", booked, "她要空腹去吗？")
    assert last_entity("想给我妈挂个号", *said) == "周桂芳"


def test_a_person_said_as_the_former_one_is_not_who_a_pronoun_means_next() -> None:
    said = "现在是唐雅婷老师带这个班，之前的吴老师已经调走了。"
    assert last_entity("钢琴班现在谁带？", said, "她一般什么时候有空？") == "唐雅婷"
    said = "Your new advisor is Priya Shah; your previous advisor Tom Reed has moved teams."
    assert last_entity("Who handles my account now?", said, "Can I call her today?") == "Priya Shah"
