"""Trainable dual-head tagger models (docs/design.md#tagging): intent (6 classes) and emotion load (4 dims).

Two kinds, both behind `state.tagging.tagger.IntentHead`:
* `EmbeddingHead` (default): small heads (one hidden layer, then an intent softmax and an emotion
  sigmoid) on frozen sentence embeddings, by default the fast static model. Trained with torch,
  exported to a JSON weights file and run with numpy, so the hot path needs no torch.
* `TransformerHead`: a transformers encoder fine-tuned end to end with the two heads, for users
  who have a pretrained encoder on disk (HF_HUB_OFFLINE=1; nothing is downloaded).

Training data is JSONL, one labelled text a line: `{"text", "intent"?, "stress"?, "certainty"?,
"urgency"?, "cooperation"?}`; a missing label is masked out of the loss. `recallflow train-tagger`
is the command line; training lives in `sinks/models/tagger_train.py`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from schemas.errors import ConfigurationError, ModelError
from sinks.models.embedders import load_embedder
from sinks.models.weights_file import read_weights
from state.core.embedding import Embedder
from state.tagging.lexicon import CLASSES, EMOTIONS

DEFAULT_HEAD = Path(__file__).resolve().parent / "resources" / "tagger_head.json"
TRANSFORMER_MARKER = "recallflow_tagger.json"
Vector = npt.NDArray[np.float64]


def _softmax(z: Vector) -> Vector:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=1, keepdims=True), dtype=np.float64)


def _sigmoid(z: Vector) -> Vector:
    return np.asarray(1.0 / (1.0 + np.exp(-z)), dtype=np.float64)


class EmbeddingHead:
    """Dual head on frozen sentence embeddings, run with numpy from a JSON weights file."""

    def __init__(self, weights: dict[str, Any], *, source: str = "") -> None:
        try:
            self.embedder_kind = str(weights["embedder"])
            self.embedder_model = weights.get("embedder_model")
            self._w1 = np.asarray(weights["w1"], dtype=np.float64)
            self._b1 = np.asarray(weights["b1"], dtype=np.float64)
            self._wi = np.asarray(weights["w_intent"], dtype=np.float64)
            self._bi = np.asarray(weights["b_intent"], dtype=np.float64)
            self._we = np.asarray(weights["w_emotion"], dtype=np.float64)
            self._be = np.asarray(weights["b_emotion"], dtype=np.float64)
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigurationError(f"tagger head {source or '<dict>'} is not a valid weights file: {exc!r}") from exc
        if tuple(weights.get("classes", CLASSES)) != CLASSES or self._wi.shape[1] != len(CLASSES):
            raise ConfigurationError(f"tagger head {source}: intent classes must be {list(CLASSES)}")
        self.name = f"embedding-head:{Path(source).name or 'memory'}:{self.embedder_kind}"
        self.trained_on = str(weights.get("trained_on", ""))
        self._embedder = load_embedder(self.embedder_kind, self.embedder_model)
        if self._embedder.dim != self._w1.shape[0]:
            raise ConfigurationError(
                f"tagger head {source}: trained on {self._w1.shape[0]}-dim vectors, embedder gives {self._embedder.dim}"
            )

    @property
    def embedder_name(self) -> str:
        return self._embedder.name

    def bind(self, embedder: Embedder) -> None:
        """Read vectors through `embedder` (e.g. the store's cached one) when it is the same model."""
        if embedder.name != self._embedder.name or embedder.dim != self._embedder.dim:
            raise ConfigurationError(f"{self.name} was trained on {self._embedder.name}, not {embedder.name}")
        self._embedder = embedder

    def forward(self, vectors: npt.NDArray[np.floating]) -> tuple[Vector, Vector]:
        hidden = np.maximum(0.0, np.asarray(vectors, dtype=np.float64) @ self._w1 + self._b1)
        return _softmax(hidden @ self._wi + self._bi), _sigmoid(hidden @ self._we + self._be)

    def predict(self, texts: Sequence[str], contexts: Sequence[str | None]) -> tuple[Vector, Vector]:
        if not texts:
            return np.zeros((0, len(CLASSES))), np.zeros((0, len(EMOTIONS)))
        return self.forward(self._embedder.passage(list(texts)))


class TransformerHead:
    """A fine-tuned transformers encoder with the two heads (torch at inference)."""

    def __init__(self, folder: Path) -> None:
        try:
            import torch
            from transformers import AutoModel, AutoTokenizer
        except ImportError as exc:
            raise ConfigurationError("a transformer tagger needs torch and transformers") from exc
        meta = json.loads((folder / TRANSFORMER_MARKER).read_text(encoding="utf-8"))
        try:
            self._tokenizer: Any = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
            self._encoder: Any = AutoModel.from_pretrained(str(folder), local_files_only=True)
        except (OSError, ValueError) as exc:
            raise ConfigurationError(f"cannot load fine-tuned tagger from {folder}: {exc}") from exc
        heads = torch.load(folder / "heads.pt", map_location="cpu", weights_only=True)
        hidden = int(self._encoder.config.hidden_size)
        self._intent = torch.nn.Linear(hidden, len(CLASSES))
        self._emotion = torch.nn.Linear(hidden, len(EMOTIONS))
        self._intent.load_state_dict(heads["intent"])
        self._emotion.load_state_dict(heads["emotion"])
        self._encoder.eval()
        self._max_length = int(meta.get("max_length", 128))
        self._torch = torch
        self.name = f"transformer-head:{folder.name}"

    def predict(self, texts: Sequence[str], contexts: Sequence[str | None]) -> tuple[Vector, Vector]:
        if not texts:
            return np.zeros((0, len(CLASSES))), np.zeros((0, len(EMOTIONS)))
        torch = self._torch
        try:
            with torch.no_grad():
                batch = self._tokenizer(
                    list(texts), padding=True, truncation=True, max_length=self._max_length, return_tensors="pt"
                )
                pooled = self._encoder(**batch).last_hidden_state[:, 0]
                intent = torch.softmax(self._intent(pooled), dim=-1).numpy().astype(np.float64)
                emotion = torch.sigmoid(self._emotion(pooled)).numpy().astype(np.float64)
        except RuntimeError as exc:
            raise ModelError(f"{self.name} failed on {len(texts)} texts: {exc}") from exc
        return intent, emotion


def load_head(path: Path) -> EmbeddingHead | TransformerHead:
    """A trained head: a JSON weights file (embedding head) or a fine-tuned model folder."""
    if path.is_dir():
        if not (path / TRANSFORMER_MARKER).exists():
            raise ConfigurationError(f"{path} is not a fine-tuned tagger folder (no {TRANSFORMER_MARKER})")
        return TransformerHead(path)
    weights = read_weights(path, "tagger head")
    return EmbeddingHead(weights, source=str(path))


def default_head() -> EmbeddingHead | None:
    """The shipped head (trained only on the project's own examples), or None if none ships.

    A fresh instance each call: a flow may bind it to its own cached embedder."""
    return load_head(DEFAULT_HEAD) if DEFAULT_HEAD.exists() else None  # type: ignore[return-value]
