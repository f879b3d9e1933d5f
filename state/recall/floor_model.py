"""A learned abstain decision: answer or stay silent, read from what one recall already computed.

Input: `FloorInputs`, the numbers the recall service holds once it has ranked the candidates and
read the coverage of the picks (absolute relevance, calibrated cosine, BM25 share, the grounded and
owned parts, the coverage factor, siblings, the rule floor's own verdict …). Output: the feature
vector (`floor_features`, named by `FEATURES`) and, with a `FloorModel` (a standardised logistic
regression read from `resources/recall_floor.yaml`), the probability that something stored answers
the question and the decision to answer. State: none; the model file is hot-reloaded by the caller.

Why: the rule floor (a calibrated relevance floor scaled by the question's coverage and its
siblings) is exact on the conversations it was tuned on and weak on new ones. A small regularised
model over the same signals is the alternative measured by `evals.floor_training`; the file's
`use` key says which one decides (`rules` keeps the floor alone).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import yaml

from schemas.errors import ConfigurationError
from state.core.hotfile import HotFile
from state.recall.scoring import PoolScores
from state.recall.specifics import Coverage

F = npt.NDArray[np.float64]

DEFAULT_FLOOR = Path(__file__).resolve().parent / "resources" / "recall_floor.yaml"

FEATURES: tuple[str, ...] = (
    "floor_margin",  # the rule floor's reading of the best pick minus the floor
    "rule_answers",  # 1 when the rule floor lets the picks through
    "top_absolute",  # absolute relevance of the first pick
    "top_semantic",  # calibrated cosine of the first pick (0-1)
    "semantic_gap",  # calibrated cosine: the nearest eligible candidate minus the second
    "top_lexical",  # best BM25 share among the picks
    "grounded",  # best grounded part among the picks (identifier, named period, referent)
    "owned",  # best owned part among the picks (the user's own open matter)
    "coverage",  # the coverage factor of the picks (siblings included)
    "held_share",  # share of the judged specific terms the picks hold (1 when none is judged)
    "missing",  # number of judged terms the picks lack
    "identifier_missing",  # 1 when a missing term is an identifier
    "sibling",  # 1 when the picks hold a sibling of a missing term
    "time_match",  # best named-period match among the picks
    "entity",  # best identifier match among the picks
    "cjk",  # the question has Chinese characters
)
# Left out on purpose: the size of the user's pool. In the written scenarios the nothing-relevant
# ones have shorter histories, so it predicts the label there and says nothing about production.


@dataclass(frozen=True, slots=True)
class FloorInputs:
    """What the floor decision reads of one recall (arrays over the candidate pool, `picked` indices into it)."""

    picked: Sequence[int]
    floor_relevance: Sequence[float]  # per pick, what the rule floor reads
    floor: float
    absolute: F
    semantic: F
    lexical: F
    grounded: F
    owned: F
    time_match: F
    entity: F
    eligible: npt.NDArray[np.bool_]
    coverage: float
    held: int
    missing: int
    identifier_missing: bool
    sibling: bool
    cjk: bool


def floor_inputs(
    scores: PoolScores,
    picked: Sequence[int],
    floor_relevance: Sequence[float],
    floor: float,
    covered: Coverage,
    cjk: bool,
) -> FloorInputs:
    """The inputs of one recall's floor from its scores, the picks the floor judges, what the rule floor
    reads of each (`floor_relevance`) and their coverage."""
    return FloorInputs(
        picked=picked,
        floor_relevance=floor_relevance,
        floor=floor,
        absolute=scores.absolute,
        semantic=scores.semantic,
        lexical=scores.lexical,
        grounded=scores.grounded,
        owned=scores.owned,
        time_match=scores.time_match,
        entity=scores.entity,
        eligible=scores.eligible,
        coverage=covered.factor,
        held=len(covered.held),
        missing=len(covered.missing),
        identifier_missing=any(c.isdigit() for t in covered.missing for c in t),
        sibling=bool(covered.siblings),
        cjk=cjk,
    )


def floor_features(x: FloorInputs) -> F:
    """The feature vector in `FEATURES` order (`floor_margin` is minus the floor when nothing is picked)."""
    picked = list(x.picked)
    eligible = np.flatnonzero(x.eligible)
    sem = np.sort(x.semantic[eligible])[::-1] if eligible.size else np.zeros(0)
    gap = float(sem[0] - sem[1]) if sem.size > 1 else float(sem[0]) if sem.size else 0.0
    judged = x.held + x.missing

    def best(a: F) -> float:
        return float(max(a[i] for i in picked)) if picked else 0.0

    margin = max(x.floor_relevance) - x.floor if picked else -x.floor
    values = {
        "floor_margin": margin,
        "rule_answers": float(bool(picked) and margin >= 0),
        "top_absolute": float(x.absolute[picked[0]]) if picked else 0.0,
        "top_semantic": float(x.semantic[picked[0]]) if picked else 0.0,
        "semantic_gap": gap,
        "top_lexical": best(x.lexical),
        "grounded": best(x.grounded),
        "owned": best(x.owned),
        "coverage": x.coverage,
        "held_share": x.held / judged if judged else 1.0,
        "missing": float(x.missing),
        "identifier_missing": float(x.identifier_missing),
        "sibling": float(x.sibling),
        "time_match": best(x.time_match),
        "entity": best(x.entity),
        "cjk": float(x.cjk),
    }
    return np.array([values[name] for name in FEATURES], dtype=np.float64)


@dataclass(frozen=True, slots=True)
class FloorModel:
    """A standardised logistic regression: p(answer) = σ(b + Σ wᵢ (xᵢ − μᵢ) / σᵢ); answer when p ≥ threshold.
    `use` is `learned` (the model decides) or `rules` (the rule floor alone, the model unused)."""

    use: str
    features: tuple[str, ...]
    mean: F
    scale: F
    coef: F
    intercept: float
    threshold: float

    @property
    def learned(self) -> bool:
        return self.use == "learned"

    def probability(self, features: F) -> float:
        z = self.intercept + float(np.dot(self.coef, (features - self.mean) / self.scale))
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def answers(self, features: F) -> bool:
        return self.probability(features) >= self.threshold


def parse_floor(doc: Mapping[str, Any]) -> FloorModel:
    """A `FloorModel` from the parsed file; a malformed one raises `ConfigurationError`."""
    use = doc.get("use")
    if use not in ("learned", "rules"):
        raise ConfigurationError("recall floor: 'use' must be 'learned' or 'rules'")
    names = doc.get("features")
    if not isinstance(names, list) or tuple(names) != FEATURES:
        raise ConfigurationError(f"recall floor: 'features' must be exactly {list(FEATURES)} (retrain the model)")

    def vector(key: str) -> F:
        value = doc.get(key)
        if not isinstance(value, list) or len(value) != len(FEATURES):
            raise ConfigurationError(f"recall floor: '{key}' needs {len(FEATURES)} numbers")
        try:
            return np.array([float(v) for v in value], dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ConfigurationError(f"recall floor: '{key}' needs numbers") from exc

    scale = vector("scale")
    if (scale <= 0).any():
        raise ConfigurationError("recall floor: every 'scale' must be positive")
    try:
        intercept, threshold = float(doc["intercept"]), float(doc["threshold"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigurationError("recall floor: 'intercept' and 'threshold' are required numbers") from exc
    if not 0.0 < threshold < 1.0:
        raise ConfigurationError("recall floor: 'threshold' must lie in (0, 1)")
    return FloorModel(str(use), FEATURES, vector("mean"), scale, vector("coef"), intercept, threshold)


def load_floor(path: Path = DEFAULT_FLOOR) -> FloorModel:
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigurationError(f"cannot read recall floor {path}: {exc}") from exc
    if not isinstance(doc, Mapping):
        raise ConfigurationError(f"recall floor {path} is not a mapping")
    return parse_floor(doc)


def floor_file(path: Path = DEFAULT_FLOOR, *, check_every_s: float = 0.0) -> HotFile[FloorModel]:
    """The current `FloorModel`, re-read when the file changes."""
    return HotFile((path,), load_floor, check_every_s=check_every_s)
