"""The unit-type head: trained weights read with numpy, blended with the rules (their decisive cues
win, the head decides the rest when sure), wired so it reads the store's vector."""

from __future__ import annotations

import json
import pickle
from collections.abc import Sequence
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from flows.settings import Settings, TaggingSettings
from flows.tagging_stage import unit_type_head
from operators.unit_emotion import UnitEmotionConfig, _UnitEmotionLogic
from schemas.errors import ConfigurationError
from schemas.events import ConversationEvent
from sinks.models.unit_type_model import DEFAULT_TYPE_HEAD, UnitTypeHead, load_type_head, role_features
from sinks.models.unit_type_train import (
    DEFAULT_EXAMPLES,
    dialogue_examples,
    fit_softmax,
    read_type_examples,
    training_examples,
)
from state.normalise.turn import NormaliseConfig, Turn, normalise_turn
from state.tagging.lexicon import load_lexicon
from state.tagging.tagger import TagConfig, tag_turn
from state.units.assemble import units_from_turn
from state.units.unit_type import HEAD_CUE, TypeBlend, type_units

LEX = load_lexicon()
TS = datetime(2026, 1, 1, 8, tzinfo=UTC)
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def tagged(text: str, role: str = "customer") -> Turn:
    ev = ConversationEvent(event_id="e1", session_id="s", ts=TS, text=text, speaker=role, speaker_role=role)  # type: ignore[arg-type]
    return tag_turn(None, normalise_turn(ev, NormaliseConfig()), TagConfig(), LEX)[1]


class FixedHead:
    """A head that gives every unit the same probabilities, and counts its calls."""

    def __init__(self, classes: Sequence[str], row: Sequence[float]) -> None:
        self.classes = tuple(classes)
        self._row = np.asarray(row, dtype=np.float64)
        self.seen: list[tuple[list[str], list[str]]] = []

    def predict(self, texts: Sequence[str], roles: Sequence[str]) -> np.ndarray:
        self.seen.append((list(texts), list(roles)))
        return np.tile(self._row, (len(texts), 1))


class NamedEmbedder:
    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim, self.calls = name, dim, 0

    def passage(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        rng = np.random.default_rng(len(texts))
        rows = rng.normal(size=(len(texts), self.dim))
        return np.asarray(rows / np.linalg.norm(rows, axis=1, keepdims=True))

    query = passage


def test_head_decides_a_unit_the_rules_left_a_plain_statement() -> None:
    turn = tagged("昨天晚上十一点左右，我在睡觉。")
    assert [t.kind for t in turn.tags] == ["statement"] * len(turn.tags)
    head = FixedHead(["complaint", "statement"], [0.95, 0.05])
    typed = type_units(turn, head)
    assert typed.unit_kinds == ("complaint",)
    assert units_from_turn(typed)[0].unit_type == "complaint"
    assert HEAD_CUE in typed.tags[0].cues
    assert head.seen == [(["昨天晚上十一点左右，我在睡觉。"], ["customer"])]


def test_rules_decisive_cue_wins_over_a_sure_head() -> None:
    turn = tagged("快递晚了五天，里面的蛋糕都坏了")
    assert units_from_turn(turn)[0].unit_type == "complaint"
    typed = type_units(turn, FixedHead(["smalltalk", "complaint"], [0.99, 0.01]))
    assert typed.unit_kinds == ("complaint",)
    assert not any(HEAD_CUE in t.cues for t in typed.tags)


def test_head_below_the_margin_keeps_the_rules_type() -> None:
    turn = tagged("昨天晚上十一点左右，我在睡觉。")
    head = FixedHead(["complaint", "statement"], [0.6, 0.4])
    assert type_units(turn, head).unit_kinds == ("statement",)
    assert type_units(turn, head, TypeBlend(min_margin=0.1, complaint_margin=0.1)).unit_kinds == ("complaint",)


def test_an_agent_unit_takes_no_complaint_from_the_head() -> None:
    turn = tagged("昨天晚上十一点左右，系统做了升级。", "agent")
    head = FixedHead(["complaint", "resolution_confirmation", "status_update", "statement"], [0.5, 0.45, 0.049, 0.001])
    assert type_units(turn, head, TypeBlend(min_margin=0.01)).unit_kinds == ("status_update",)
    assert type_units(turn, head, TypeBlend(min_margin=0.1)).unit_kinds == ("statement",)


@pytest.mark.parametrize(
    ("text", "role", "kind"),
    [
        ("我查到了，您的包裹是昨天下午签收的。", "agent", "statement"),  # a lookup read back
        ("The line is expected to be back by 6 pm.", "agent", "status_update"),  # a forecast
        ("Could you tell me the booking reference?", "agent", "question"),  # asking to be told
        ("A refund, please.", "customer", "action_request"),  # a bare ask
    ],
)
def test_the_rules_new_cues_are_decisive(text: str, role: str, kind: str) -> None:
    turn = tagged(text, role)
    others = [k for k in ("smalltalk", "refusal") if k != kind]
    typed = type_units(turn, FixedHead([*others, kind], [0.98, 0.01, 0.01]))
    assert typed.unit_kinds == (kind,)


def test_a_customer_complaint_without_a_cue_needs_a_smaller_margin() -> None:
    turn = tagged("昨天晚上十一点左右，我在睡觉。")
    head = FixedHead(["complaint", "repeat_complaint", "statement"], [0.45, 0.3, 0.25])
    assert type_units(turn, head).unit_kinds == ("complaint",)  # 0.75 reported against 0.25
    agent = tagged("昨天晚上十一点左右，系统做了升级。", "agent")
    assert type_units(agent, head).unit_kinds != ("complaint",)
    assert type_units(turn, head, TypeBlend(complaint_margin=0.6)).unit_kinds == ("statement",)


def test_a_resolution_from_the_head_can_need_a_wider_margin() -> None:
    turn = tagged("The CSV export cuts off after 10,000 rows.")
    head = FixedHead(["resolution_confirmation", "statement"], [0.88, 0.12])
    assert type_units(turn, head).unit_kinds == ("resolution_confirmation",)  # 0.76 ≥ 0.7
    assert type_units(turn, head, TypeBlend(resolution_margin=0.9)).unit_kinds == ("statement",)
    sure = FixedHead(["resolution_confirmation", "statement"], [0.96, 0.04])
    assert type_units(turn, sure, TypeBlend(resolution_margin=0.9)).unit_kinds == ("resolution_confirmation",)


def test_the_head_gives_no_clarification_the_rules_did_not_read() -> None:
    turn = tagged("Do you have the receipt from the first visit?", "agent")
    head = FixedHead(["clarification", "question", "statement"], [0.9, 0.05, 0.05])
    assert type_units(turn, head).unit_kinds != ("clarification",)


def test_no_head_leaves_the_turn_alone() -> None:
    turn = tagged("好的。")
    assert type_units(turn, None) is turn


def test_operator_types_units_after_their_emotion() -> None:
    head = FixedHead(["complaint", "statement"], [0.95, 0.05])
    logic = _UnitEmotionLogic(None, UnitEmotionConfig(weight=0.0), lambda: LEX, None, lambda: TS, head)
    (out,), _ = logic.on_item(tagged("昨天晚上十一点左右，我在睡觉。"))
    assert out.unit_kinds == ("complaint",)
    assert out.unit_emotion


def test_shipped_head_reads_vectors_through_the_bound_embedder() -> None:
    head = load_type_head(DEFAULT_TYPE_HEAD)
    store = NamedEmbedder(head.embedder_name, head.dim)
    head.bind(store)
    probs = head.predict(["the parcel never arrived", "好的，谢谢"], ["customer", "agent"])
    assert probs.shape == (2, len(head.classes))
    assert store.calls == 1
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    with pytest.raises(ConfigurationError):
        head.bind(NamedEmbedder("another-model", head.dim))
    with pytest.raises(ValueError, match="roles"):
        head.predict(["a"], [])


def test_bad_weights_file_is_a_configuration_error(tmp_path: Path) -> None:
    bad = tmp_path / "head.json"
    bad.write_text(json.dumps({"classes": ["complaint"], "w": [[0.0]]}), encoding="utf-8")
    with pytest.raises(ConfigurationError, match="not a valid weights file"):
        load_type_head(bad)
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="not JSON"):
        load_type_head(bad)
    weights = json.loads(DEFAULT_TYPE_HEAD.read_text(encoding="utf-8"))
    weights["b"] = weights["b"][:-1]
    with pytest.raises(ConfigurationError, match="classes"):
        UnitTypeHead(weights)


def test_flow_uses_the_head_only_on_the_model_it_was_trained_on() -> None:
    head = load_type_head(DEFAULT_TYPE_HEAD)
    same = NamedEmbedder(head.embedder_name, head.dim)
    bound = unit_type_head(Settings(), same)
    assert bound is not None
    bound.predict(["x"], ["customer"])
    assert same.calls == 1  # through the store's embedder, not one of its own
    assert unit_type_head(Settings(), NamedEmbedder("tokenlearn-static-model/model2vec", 64)) is None
    assert unit_type_head(Settings(tagging=TaggingSettings(type_head="none")), same) is None


def test_training_separates_classes_and_rejects_unknown_types(tmp_path: Path) -> None:
    x = np.hstack([np.eye(3), role_features(["customer", "agent", "customer"])])
    w, b = fit_softmax(x, np.array([0, 1, 2]), 3, steps=300)
    assert (x @ w + b).argmax(axis=1).tolist() == [0, 1, 2]
    bad = tmp_path / "ex.jsonl"
    bad.write_text('{"text": "hi", "role": "customer", "unit_type": "gossip"}\n', encoding="utf-8")
    with pytest.raises(ConfigurationError, match="unknown unit type"):
        read_type_examples(bad)


def test_training_examples_share_no_sentence_with_the_evaluation_sets() -> None:
    def key(text: str) -> str:
        return text.strip(" .。!！?？").casefold()

    train = {key(e.text) for e in read_type_examples(DEFAULT_EXAMPLES)}
    assert len(train) > 350
    for gold in sorted(FIXTURES.glob("cs_unit_types*.jsonl")):
        for line in gold.read_text(encoding="utf-8").splitlines():
            turns = json.loads(line)["turns"]
            assert not train & {key(t[1]) for t in turns}, gold.name


def test_a_turn_snapshotted_before_unit_kinds_existed_restores() -> None:
    turn = type_units(tagged("昨天晚上十一点左右，我在睡觉。"), FixedHead(["complaint", "statement"], [0.95, 0.05]))
    restored = pickle.loads(pickle.dumps(turn))
    assert restored == turn
    old_state = [getattr(turn, f.name) for f in fields(Turn)][:-1]  # the fields a turn had before unit_kinds
    old = object.__new__(Turn)
    old.__setstate__(old_state)
    assert old.unit_kinds == ()
    assert old.task == turn.task
    assert old.unit_emotion == turn.unit_emotion


def test_training_data_is_built_from_the_dialogue_files(tmp_path: Path) -> None:
    gold = FIXTURES / "cs_unit_types_third.jsonl"
    turns = dialogue_examples(gold)
    first = json.loads(gold.read_text(encoding="utf-8").splitlines()[0])["turns"][0]
    assert (turns[0].role, turns[0].text, turns[0].unit_type) == (first[0], first[1], first[2])
    both = training_examples(DEFAULT_EXAMPLES, [gold])
    assert len(both) == len(read_type_examples(DEFAULT_EXAMPLES)) + len(turns)
    bad = tmp_path / "d.jsonl"
    bad.write_text('{"turns": [["customer", "hi", "gossip"]]}\n', encoding="utf-8")
    with pytest.raises(ConfigurationError, match="unknown unit type"):
        dialogue_examples(bad)
    bad.write_text('{"turns": [["customer", "hi"]]}\n', encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"d\.jsonl:1"):
        dialogue_examples(bad)
    with pytest.raises(ConfigurationError, match="cannot read"):
        dialogue_examples(tmp_path / "missing.jsonl")


def test_class_weighting_is_a_choice() -> None:
    x = np.hstack([np.array([[1.0, 0.0], [0.9, 0.1], [0.8, 0.2], [0.0, 1.0]]), role_features(["customer"] * 4)])
    y = np.array([0, 0, 0, 1])
    for balance in (0.0, 0.5, 1.0):
        w, b = fit_softmax(x, y, 2, steps=300, balance=balance)
        assert (x @ w + b).argmax(axis=1).tolist() == [0, 0, 0, 1]


@pytest.mark.parametrize("text", ["这是老板亲自交代的。", "My manager asked for this."])
def test_who_asked_for_it_stays_a_statement_whatever_the_head_says(text: str) -> None:
    # the end of the demo's compensation question: the head, reading the whole turn, leans to a
    # reported promise there ("上次说要给我补偿")
    head = FixedHead(["third_party_commitment", "statement", "question"], [0.9, 0.05, 0.05])
    assert type_units(tagged(text), head).unit_kinds == ("statement",)
