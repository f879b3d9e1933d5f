"""The trained unit-type head (docs/unit-types-and-role-emotion.md#the-trained-head): a softmax
regression over the unit types, read from the unit's own passage vector (standardised with the
training examples' mean and spread) and the speaker's role.

Input: unit texts and their speakers' roles. Output: one row of unit-type probabilities per text
(`classes` order). The weights are a JSON file (`resources/unit_type_head.json`), trained by
`make unit-type-head` only on the project's own writing (the sentences of
`resources/unit_type_examples.jsonl` and the turns of its labelled sets under `tests/fixtures/`)
and run with numpy. Bound to the store's cached embedder
(`bind`), the vector it reads is the one the store embeds anyway: no second embedding call.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from schemas.errors import ConfigurationError
from sinks.models.embedders import load_embedder
from sinks.models.weights_file import read_weights
from state.core.embedding import Embedder

DEFAULT_TYPE_HEAD = Path(__file__).resolve().parent / "resources" / "unit_type_head.json"
ROLES = ("customer", "agent", "third_party")  # one-hot after the vector; any other role: all zeros
Vector = npt.NDArray[np.float64]


def role_features(roles: Sequence[str]) -> Vector:
    """One-hot rows of the speakers' roles (`ROLES` order).

    >>> role_features(["agent", "user"]).tolist()
    [[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    """
    out = np.zeros((len(roles), len(ROLES)))
    for i, role in enumerate(roles):
        if role in ROLES:
            out[i, ROLES.index(role)] = 1.0
    return out


def softmax_rows(z: Vector) -> Vector:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=1, keepdims=True), dtype=np.float64)


class UnitTypeHead:
    """Softmax regression on [passage vector, role one-hot], run with numpy from a JSON weights file."""

    def __init__(self, weights: dict[str, Any], *, source: str = "") -> None:
        try:
            self.classes: tuple[str, ...] = tuple(str(c) for c in weights["classes"])
            self.embedder_kind = str(weights["embedder"])
            self.embedder_model = weights.get("embedder_model")
            self.embedder_name = str(weights["embedder_name"])
            self._w = np.asarray(weights["w"], dtype=np.float64)
            self._mean = np.asarray(weights["mean"], dtype=np.float64)
            self._scale = np.asarray(weights["scale"], dtype=np.float64)
            self._b = np.asarray(weights["b"], dtype=np.float64)
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigurationError(
                f"unit-type head {source or '<dict>'} is not a valid weights file: {exc!r}"
            ) from exc
        shapes_ok = self._mean.shape == self._scale.shape == (self._w.shape[0] - len(ROLES),)
        if not shapes_ok or self._w.shape[1] != len(self.classes) or self._b.shape != (len(self.classes),):
            raise ConfigurationError(f"unit-type head {source}: weights do not match its {len(self.classes)} classes")
        self.name = f"unit-type-head:{Path(source).name or 'memory'}:{self.embedder_kind}"
        self.trained_on = str(weights.get("trained_on", ""))
        self.dim = self._w.shape[0] - len(ROLES)
        self._embedder: Embedder | None = None  # bound, or loaded on first use

    def bind(self, embedder: Embedder) -> None:
        """Read vectors through `embedder` (the store's cached one); it must be the model trained on."""
        if embedder.name != self.embedder_name or embedder.dim != self.dim:
            raise ConfigurationError(f"{self.name} was trained on {self.embedder_name}, not {embedder.name}")
        self._embedder = embedder

    def _reader(self) -> Embedder:
        if self._embedder is not None:
            return self._embedder
        embedder = load_embedder(self.embedder_kind, self.embedder_model)
        self.bind(embedder)
        return embedder

    def forward(self, vectors: npt.NDArray[np.floating], roles: Sequence[str]) -> Vector:
        standard = (np.asarray(vectors, dtype=np.float64) - self._mean) / self._scale
        x = np.hstack([standard, role_features(roles)])
        return softmax_rows(x @ self._w + self._b)

    def predict(self, texts: Sequence[str], roles: Sequence[str]) -> Vector:
        if len(texts) != len(roles):
            raise ValueError(f"{len(texts)} texts but {len(roles)} roles")
        if not texts:
            return np.zeros((0, len(self.classes)))
        return self.forward(self._reader().passage(list(texts)), roles)


def load_type_head(path: Path) -> UnitTypeHead:
    weights = read_weights(path, "unit-type head")
    return UnitTypeHead(weights, source=str(path))


def default_type_head() -> UnitTypeHead | None:
    """The shipped head (trained only on the project's own examples), or None if none ships.
    A fresh instance each call: a flow may bind it to its own cached embedder."""
    return load_type_head(DEFAULT_TYPE_HEAD) if DEFAULT_TYPE_HEAD.exists() else None
