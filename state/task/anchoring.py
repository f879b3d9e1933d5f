"""Goal anchoring (docs/design.md#task-state-machine): is this turn still about the goal?

cosine(turn, goal) ≥ `continue_at` → continue; ≥ `clarify_at` → ask to clarify; below →
drift. The cut-offs depend on the embedding model (`state/task/resources/anchor_thresholds.yaml`,
keyed by `Embedder.name`); settings may override them. Pure functions only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

Band = Literal["continue", "clarify", "drift"]


@dataclass(frozen=True, slots=True)
class Thresholds:
    continue_at: float
    clarify_at: float

    def band(self, similarity: float) -> Band:
        """The band a similarity falls in.

        >>> Thresholds(0.72, 0.45).band(0.5)
        'clarify'
        """
        if similarity >= self.continue_at:
            return "continue"
        if similarity >= self.clarify_at:
            return "clarify"
        return "drift"


@dataclass(frozen=True)
class ThresholdTable:
    default: Thresholds
    models: dict[str, Thresholds]

    def for_model(self, name: str) -> Thresholds:
        return self.models.get(name, self.default)


def _pair(raw: Any, where: str) -> Thresholds:
    hi, lo = float(raw["continue"]), float(raw["clarify"])
    if not -1.0 <= lo <= hi <= 1.0:
        raise ValueError(f"anchor thresholds {where}: need -1 ≤ clarify ≤ continue ≤ 1, got {lo}, {hi}")
    return Thresholds(hi, lo)


def parse_thresholds(raw: Any) -> ThresholdTable:
    """Validate the thresholds document (clarify ≤ continue, both in [-1, 1]).

    >>> parse_thresholds({"default": {"continue": 0.72, "clarify": 0.45}}).for_model("x")
    Thresholds(continue_at=0.72, clarify_at=0.45)
    """
    models = {str(k): _pair(v, str(k)) for k, v in (raw.get("models") or {}).items()}
    return ThresholdTable(_pair(raw["default"], "default"), models)


def cosine(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Cosine similarity (0.0 when either vector is zero).

    >>> round(cosine([1.0, 0.0], [1.0, 1.0]), 4)
    0.7071
    """
    va = np.asarray(a, dtype=np.float64)
    vb = np.asarray(b, dtype=np.float64)
    na, nb = float(np.linalg.norm(va)), float(np.linalg.norm(vb))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.dot(va, vb) / (na * nb))
