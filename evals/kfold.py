"""Upper reference: dual heads trained by k-fold cross-validation on each dev set itself.

Not shipped and never used by the flow (the dev data may not be redistributed or trained on for
shipping). For each intent set: the set's turns are embedded, a head is trained on k−1 folds and
predicts the held-out fold; reported alone and blended with the lexicon (log-linear, 0.5). For
each stress set: the same with negative sentiment as the stress target (AUROC).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evals.embed_cache import CachedEmbedder
from evals.metrics import auroc, f1_table
from state.tagging.lexicon import CLASSES

INTENT_SETS = ("dailydialog", "xdailydialog", "cped")
STRESS_SETS = ("meld", "cped")


def _folds(n: int, k: int, seed: int = 0) -> list[np.ndarray]:
    order = np.random.default_rng(seed).permutation(n)
    return [order[i::k] for i in range(k)]


def _forward(weights: dict[str, Any], x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w = {k: np.asarray(v, dtype=np.float64) for k, v in weights.items() if k.startswith(("w", "b"))}
    h = np.maximum(0.0, x @ w["w1"] + w["b1"])
    z = h @ w["w_intent"] + w["b_intent"]
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True), 1.0 / (1.0 + np.exp(-(h @ w["w_emotion"] + w["b_emotion"])))


def kfold_reports(cache: dict[str, Any], folds: int, embedder_kind: str) -> list[dict[str, object]]:
    from evals.tagger import GOLD_SKIP, PRED_MAP
    from sinks.models.embedders import load_embedder
    from sinks.models.tagger_train import fit_dual_head

    embedder = CachedEmbedder(load_embedder(embedder_kind))
    out: list[dict[str, object]] = []
    for name, (rows, preds) in cache.items():
        x = embedder.passage([r.text for r in rows]).astype(np.float64)
        if name in INTENT_SETS:
            skip = GOLD_SKIP.get(name, set())
            keep = np.array([r.labels.get("intent") not in skip and r.labels.get("intent") is not None for r in rows])
            gold = [r.labels["intent"] for r, k in zip(rows, keep, strict=True) if k]
            y = np.array([CLASSES.index(g) for g in gold])
            xk = x[keep]
            lex = np.array([p for p, k in zip(preds.probs, keep, strict=True) if k])
            head_p = np.zeros((len(y), len(CLASSES)))
            for test in _folds(len(y), folds):
                train = np.setdiff1d(np.arange(len(y)), test)
                w = fit_dual_head(xk[train], y[train], np.full((len(train), 4), np.nan, np.float32), epochs=200)
                head_p[test] = _forward(w, xk[test])[0]
            blend = np.log(head_p + 1e-9) * 0.5 + np.log(lex + 1e-9) * 0.5
            mapping = PRED_MAP.get(name, {})
            for label, probs in (("kfold head", head_p), ("kfold head + lexicon", blend)):
                pred = [mapping.get(CLASSES[i], CLASSES[i]) for i in probs.argmax(axis=1)]
                table = f1_table(gold, pred)
                out.append(
                    {
                        "set": name,
                        "metric": f"intent_macro_f1 ({label}, {embedder_kind})",
                        "macro_f1": table["macro"],
                        "per_class": table["per_class"],
                    }
                )
        if name in STRESS_SETS:
            y = np.array([r.labels.get("sentiment") == "negative" for r in rows])
            target = np.full((len(y), 4), np.nan, np.float32)
            target[:, 0] = y
            score = np.zeros(len(y))
            for test in _folds(len(y), folds):
                train = np.setdiff1d(np.arange(len(y)), test)
                w = fit_dual_head(x[train], np.full(len(train), -1), target[train], epochs=200)
                score[test] = _forward(w, x[test])[1][:, 0]
            lex = np.array(preds.stress)
            out.append({"set": name, "metric": f"stress_auroc (kfold head, {embedder_kind})", "auroc": auroc(y, score)})
            out.append(
                {
                    "set": name,
                    "metric": f"stress_auroc (kfold head + lexicon, {embedder_kind})",
                    "auroc": auroc(y, 0.5 * score + 0.5 * lex),
                }
            )
    embedder.save()
    return out
