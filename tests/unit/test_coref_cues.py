"""References told apart by a word said beside their antecedent (state.coref.cues), through the resolver."""

from __future__ import annotations

from tests.coref_support import last_entity


def test_the_word_said_before_a_listed_identifier_picks_it() -> None:
    said = "I have a home policy HO-5528810 and an auto policy AU-3390127 with you."
    assert last_entity(said, "What happens to the home one?") == "HO-5528810"
    assert last_entity(said, "What happens to the auto one?") == "AU-3390127"


def test_a_chinese_word_before_the_pointer_picks_what_it_was_said_with() -> None:
    said = "有两个快递一直没到，SF1122334455和中通的78812345690"
    assert last_entity(said, "中通那个咋在杭州卡了三天了") == "78812345690"


def test_a_predicate_binds_the_name_that_opens_its_clause_not_a_place_after_it() -> None:
    said = "My flight UA 882 to Tokyo was cancelled an hour ago."
    assert last_entity(said, "Will the cancelled flight be refunded?") == "UA 882"


def test_a_chinese_cue_the_tagger_splits_still_binds_and_makes_the_pointer_a_reference() -> None:
    said = "我有两个快递没到，一个圆通的YT8830001122，一个极兔的JT0098812233"
    assert last_entity(said, "极兔那个我没收到取件码啊") == "JT0098812233"


def test_a_cue_before_de_and_the_pointer_is_read_without_de() -> None:
    said = "两个包裹：SF1029384756已签收，SF5647382910滞留在转运中心"
    assert last_entity(said, "滞留的那个里面是药") == "SF5647382910"


def test_a_kind_said_before_jiao_tells_named_pets_apart() -> None:
    said = "我家两只狗，柯基叫豆包，柴犬叫可乐，想约洗澡"
    assert last_entity(said, "柴犬那只比较怕水") == "可乐"
    assert last_entity(said, "柯基那只要剪指甲") == "豆包"


def test_a_cue_before_an_apposed_label_binds_the_name_after_it() -> None:
    said = "There's Rhythm Ride on Saturdays with Kai Mercer, and a newer Sunday class, Power Cycle 45."
    assert last_entity("any spin classes?", said, "is the Sunday one easier?") == "Power Cycle 45"


def test_an_untyped_cue_binds_a_named_one_typed_a_person_when_nothing_else_has_it() -> None:
    said = "I'd like to book a bath for my two pets, a beagle named Rocco and a tabby named Mimi."
    assert (
        last_entity(said, "We have Friday at 10 am, booking PB-5521.", "The beagle hates water, is that ok?") == "Rocco"
    )
