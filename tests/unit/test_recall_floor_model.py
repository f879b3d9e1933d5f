"""The learned abstain decision: its model file, its features, and the switch back to the rule floor."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
import yaml

from flows.recall import RecallService
from schemas.errors import ConfigurationError
from sinks.models.embedders import load_embedder
from sinks.store.qdrant_edge import QdrantEdgeStore
from state.core.hotfile import HotFile
from state.recall.config import tables_file
from state.recall.floor_model import (
    DEFAULT_FLOOR,
    FEATURES,
    FloorInputs,
    FloorModel,
    floor_features,
    load_floor,
    parse_floor,
)
from state.recall.trigger import response_request
from tests.recall_support import T0, ask, fill_store, unit

NOW = T0 + timedelta(days=7)
EMB = load_embedder("static")


def _doc(**over: object) -> dict[str, object]:
    n = len(FEATURES)
    doc: dict[str, object] = {
        "use": "learned",
        "features": list(FEATURES),
        "mean": [0.0] * n,
        "scale": [1.0] * n,
        "coef": [0.0] * n,
        "intercept": 0.0,
        "threshold": 0.5,
    }
    return doc | over


def _inputs(picked: list[int], relevance: list[float], **over: object) -> FloorInputs:
    n = 3
    zeros = np.zeros(n)
    fields: dict[str, object] = dict(
        picked=picked,
        floor_relevance=relevance,
        floor=0.4,
        absolute=np.array([0.9, 0.5, 0.1]),
        semantic=np.array([0.8, 0.3, 0.2]),
        lexical=np.array([0.6, 0.0, 0.0]),
        grounded=zeros,
        owned=zeros,
        time_match=zeros,
        entity=zeros,
        eligible=np.array([True, True, False]),
        coverage=1.0,
        held=2,
        missing=0,
        identifier_missing=False,
        sibling=False,
        cjk=True,
    )
    return FloorInputs(**(fields | over))  # type: ignore[arg-type]


def test_the_shipped_model_file_loads_and_names_every_feature() -> None:
    model = load_floor(DEFAULT_FLOOR)
    assert model.features == FEATURES
    assert model.use in ("learned", "rules")
    assert model.coef.shape == model.mean.shape == model.scale.shape == (len(FEATURES),)


@pytest.mark.parametrize(
    "over",
    [
        {"use": "maybe"},
        {"features": list(FEATURES)[:-1]},
        {"coef": [0.0]},
        {"scale": [0.0] * len(FEATURES)},
        {"threshold": 1.0},
        {"intercept": "high"},
    ],
)
def test_a_malformed_model_file_fails_at_start(over: dict[str, object]) -> None:
    with pytest.raises(ConfigurationError):
        parse_floor(_doc(**over))


def test_features_read_the_picks_and_the_rule_floor() -> None:
    x = dict(zip(FEATURES, floor_features(_inputs([0, 1], [0.6, 0.2])), strict=True))
    assert x["floor_margin"] == pytest.approx(0.2)
    assert x["rule_answers"] == 1.0
    assert x["top_absolute"] == 0.9
    assert x["top_lexical"] == 0.6
    assert x["semantic_gap"] == pytest.approx(0.5)  # the ineligible third candidate does not count
    assert x["held_share"] == 1.0
    assert x["cjk"] == 1.0
    below = dict(zip(FEATURES, floor_features(_inputs([1], [0.3])), strict=True))
    assert below["rule_answers"] == 0.0
    assert below["floor_margin"] == pytest.approx(-0.1)
    empty = dict(zip(FEATURES, floor_features(_inputs([], [])), strict=True))
    assert empty["rule_answers"] == 0.0
    assert empty["floor_margin"] == pytest.approx(-0.4)
    assert empty["top_absolute"] == 0.0


def test_a_decision_is_a_deterministic_function_of_the_features() -> None:
    coef = [0.0] * len(FEATURES)
    coef[FEATURES.index("floor_margin")] = 4.0
    model = parse_floor(_doc(coef=coef))
    x = floor_features(_inputs([0], [0.6]))
    assert model.probability(x) == model.probability(x.copy()) == pytest.approx(1 / (1 + np.exp(-0.8)))
    assert model.answers(x)
    assert not model.answers(floor_features(_inputs([1], [0.2])))
    assert parse_floor(_doc(intercept=-1e6)).probability(x) == 0.0  # no overflow


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QdrantEdgeStore]:
    s = fill_store(tmp_path_factory.mktemp("store"), EMB, [unit("客服态度很差，我要投诉", n=1, unit_type="complaint")])
    yield s
    s.close()


def _floor(tmp_path: Path, **over: object) -> HotFile[FloorModel]:
    path = tmp_path / "floor.yaml"
    path.write_text(yaml.safe_dump(_doc(**over)), encoding="utf-8")
    return HotFile((path,), load_floor)


def test_the_rules_switch_ignores_the_model_and_learned_lets_it_decide(store: QdrantEdgeStore, tmp_path: Path) -> None:
    question = ask("客服态度又这么差", at=NOW)
    silent = {"intercept": -50.0}  # a model that abstains on everything
    default = RecallService(store, EMB, tables_file()).recall(question)
    rules = RecallService(store, EMB, tables_file(), floor=_floor(tmp_path, use="rules", **silent)).recall(question)
    learned = RecallService(store, EMB, tables_file(), floor=_floor(tmp_path, **silent))
    assert default.cues
    assert [c.text for c in rules.cues] == [c.text for c in default.cues]
    assert learned.recall(question).cues == ()
    case = learned.floor_case(question)
    assert case.rule_answers
    assert case.offered
    assert case.features.shape == (len(FEATURES),)


def test_an_abstained_recall_shows_its_picks_as_weak_cues_the_responder_never_gets(
    store: QdrantEdgeStore, tmp_path: Path
) -> None:
    question = ask("客服态度又这么差", at=NOW)
    silent = RecallService(store, EMB, tables_file(), floor=_floor(tmp_path, intercept=-50.0)).recall(question)
    assert silent.cues == ()
    assert [c.text for c in silent.weak_cues] == ["客服态度很差，我要投诉"]
    assert all(c.weak and c.explanation.startswith("weak: ") for c in silent.weak_cues)
    assert silent.explanation.startswith("no cue: the best relevance ")
    assert response_request(question, silent).cues == ()
    answered = RecallService(store, EMB, tables_file()).recall(question)
    assert answered.cues
    assert answered.weak_cues == ()
    assert not any(c.weak for c in answered.cues)
