"""Training of the dual-head tagger (torch): `recallflow train-tagger DATA.jsonl`.

* `train_embedding_head`: small heads on frozen sentence embeddings (default; exported as JSON
  weights that `sinks.models.tagger_model.EmbeddingHead` runs with numpy).
* `train_transformer`: fine-tunes a transformers encoder (a local path: a pretrained model the
  user has, or any config) together with the two heads; saved as a folder `TransformerHead` loads.

Both are deterministic for a given seed. Missing labels are masked out of the loss, so a file may
label only intent, only emotion, or both.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from schemas.errors import ConfigurationError
from sinks.models.tagger_model import TRANSFORMER_MARKER
from state.tagging.lexicon import CLASSES, EMOTIONS


@dataclass(frozen=True, slots=True)
class Example:
    text: str
    intent: int  # index into CLASSES, -1 when unlabelled
    emotion: tuple[float, ...]  # 4 values, NaN when unlabelled


def read_examples(path: Path) -> list[Example]:
    """Labelled JSONL → examples; a bad line raises ConfigurationError naming the line."""
    out: list[Example] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigurationError(f"cannot read training data {path}: {exc}") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            text = str(rec["text"])
            intent = rec.get("intent")
            if intent is not None and intent not in CLASSES:
                raise ValueError(f"unknown intent {intent!r}")
            emotion = tuple(float(rec[d]) if rec.get(d) is not None else math.nan for d in EMOTIONS)
            if any(not 0.0 <= v <= 1.0 for v in emotion if not math.isnan(v)):
                raise ValueError("emotion values must lie in 0–1")
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise ConfigurationError(f"{path}:{number}: {exc}") from exc
        out.append(Example(text, CLASSES.index(intent) if intent else -1, emotion))
    if not out:
        raise ConfigurationError(f"{path}: no examples")
    return out


def _targets(examples: Sequence[Example]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    return (
        np.array([e.intent for e in examples], dtype=np.int64),
        np.array([e.emotion for e in examples], dtype=np.float32),
    )


def fit_dual_head(
    x: npt.NDArray[np.floating],
    intent: npt.NDArray[np.int64],
    emotion: npt.NDArray[np.floating],
    *,
    hidden: int = 64,
    epochs: int = 300,
    lr: float = 0.01,
    weight_decay: float = 1e-3,
    seed: int = 0,
) -> dict[str, Any]:
    """Full-batch Adam on (frozen) vectors; returns the weights as lists, ready for JSON."""
    import torch

    torch.manual_seed(seed)
    xt = torch.as_tensor(np.asarray(x, dtype=np.float32))
    yi = torch.as_tensor(intent)
    ye = torch.as_tensor(np.asarray(emotion, dtype=np.float32))
    layer = torch.nn.Linear(xt.shape[1], hidden)
    head_i = torch.nn.Linear(hidden, len(CLASSES))
    head_e = torch.nn.Linear(hidden, len(EMOTIONS))
    params = [*layer.parameters(), *head_i.parameters(), *head_e.parameters()]
    opt = torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
    has_i = yi >= 0
    has_e = ~torch.isnan(ye)
    # Balance the intent classes so a rare class (refuse, clarify) is not drowned out.
    counts = torch.bincount(yi[has_i], minlength=len(CLASSES)).float()
    class_w = torch.where(counts > 0, counts.sum() / (len(CLASSES) * counts.clamp(min=1)), torch.zeros_like(counts))
    for _ in range(epochs):
        opt.zero_grad()
        h = torch.relu(layer(xt))
        loss = torch.zeros(())
        if bool(has_i.any()):
            loss = loss + torch.nn.functional.cross_entropy(head_i(h)[has_i], yi[has_i], weight=class_w)
        if bool(has_e.any()):
            pred = torch.sigmoid(head_e(h))
            loss = loss + ((pred - torch.nan_to_num(ye)) ** 2)[has_e].mean() * 4.0
        loss.backward()  # type: ignore[no-untyped-call]
        opt.step()

    def rows(t: Any) -> Any:
        # Five significant digits: the file stays small and the outputs change by < 1e-4.
        return np.vectorize(lambda v: float(f"{v:.5g}"))(t.detach().numpy()).tolist()

    return {
        "classes": list(CLASSES),
        "emotions": list(EMOTIONS),
        "w1": rows(layer.weight.T),
        "b1": rows(layer.bias),
        "w_intent": rows(head_i.weight.T),
        "b_intent": rows(head_i.bias),
        "w_emotion": rows(head_e.weight.T),
        "b_emotion": rows(head_e.bias),
    }


def train_embedding_head(
    examples: Sequence[Example], *, embedder_kind: str = "static", embedder_model: str | None = None, **fit: Any
) -> dict[str, Any]:
    """Embed the examples with the (frozen) embedder and fit the two heads."""
    from sinks.models.embedders import load_embedder

    embedder = load_embedder(embedder_kind, embedder_model)
    x = embedder.passage([e.text for e in examples])
    intent, emotion = _targets(examples)
    weights = fit_dual_head(x, intent, emotion, **fit)
    weights.update(embedder=embedder_kind, embedder_model=embedder_model, n_examples=len(examples))
    return weights


def train_transformer(
    examples: Sequence[Example],
    encoder: Path,
    out: Path,
    *,
    epochs: int = 3,
    lr: float = 2e-5,
    batch_size: int = 16,
    max_length: int = 128,
    warmup_ratio: float = 0.1,
    seed: int = 0,
) -> Path:
    """Fine-tune `encoder` (a local folder with config, weights and tokenizer) with both heads."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.manual_seed(seed)
    try:
        tokenizer: Any = AutoTokenizer.from_pretrained(str(encoder), local_files_only=True)
        model: Any = AutoModel.from_pretrained(str(encoder), local_files_only=True)
    except (OSError, ValueError) as exc:
        raise ConfigurationError(f"cannot load encoder {encoder} offline: {exc}") from exc
    hidden = int(model.config.hidden_size)
    head_i = torch.nn.Linear(hidden, len(CLASSES))
    head_e = torch.nn.Linear(hidden, len(EMOTIONS))
    params = [*model.parameters(), *head_i.parameters(), *head_e.parameters()]
    opt = torch.optim.AdamW(params, lr=lr)
    steps = max(1, epochs * math.ceil(len(examples) / batch_size))
    warmup = max(1, int(steps * warmup_ratio))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, (steps - s) / steps))
    intent_all, emotion_all = _targets(examples)
    order = np.random.default_rng(seed)
    model.train()
    for _ in range(epochs):
        idx = order.permutation(len(examples))
        for start in range(0, len(idx), batch_size):
            batch = idx[start : start + batch_size]
            enc = tokenizer(
                [examples[i].text for i in batch],
                padding=True,
                truncation=True,
                max_length=max_length,
                return_tensors="pt",
            )
            pooled = model(**enc).last_hidden_state[:, 0]
            yi = torch.as_tensor(intent_all[batch])
            ye = torch.as_tensor(emotion_all[batch])
            loss = torch.zeros(())
            if bool((yi >= 0).any()):
                loss = loss + torch.nn.functional.cross_entropy(head_i(pooled)[yi >= 0], yi[yi >= 0])
            mask = ~torch.isnan(ye)
            if bool(mask.any()):
                loss = loss + ((torch.sigmoid(head_e(pooled)) - torch.nan_to_num(ye)) ** 2)[mask].mean()
            opt.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            opt.step()
            sched.step()
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    torch.save({"intent": head_i.state_dict(), "emotion": head_e.state_dict()}, out / "heads.pt")
    meta = {"classes": list(CLASSES), "emotions": list(EMOTIONS), "max_length": max_length, "n_examples": len(examples)}
    (out / TRANSFORMER_MARKER).write_text(json.dumps(meta), encoding="utf-8")
    return out
