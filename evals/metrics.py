"""Small metric helpers with no dependency beyond numpy: per-class F1 and AUROC."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt


def f1_table(gold: Sequence[str], pred: Sequence[str]) -> dict[str, object]:
    """Per-class precision/recall/F1 over the gold classes, and their unweighted mean.

    >>> f1_table(["a", "a", "b"], ["a", "b", "b"])["macro"]
    0.6666666666666666
    """
    classes = sorted(set(gold))
    per: dict[str, dict[str, float]] = {}
    for c in classes:
        tp = sum(1 for g, p in zip(gold, pred, strict=True) if g == c and p == c)
        fp = sum(1 for g, p in zip(gold, pred, strict=True) if g != c and p == c)
        fn = sum(1 for g, p in zip(gold, pred, strict=True) if g == c and p != c)
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per[c] = {"precision": precision, "recall": recall, "f1": f1, "support": tp + fn}
    macro = float(np.mean([v["f1"] for v in per.values()])) if per else 0.0
    return {"macro": macro, "per_class": per}


def auroc(y: npt.NDArray[np.bool_], score: npt.NDArray[np.floating]) -> float:
    """Area under the ROC curve (Mann–Whitney, ties averaged).

    >>> auroc(np.array([False, True, False, True]), np.array([0.1, 0.9, 0.4, 0.4]))
    0.875
    """
    y = np.asarray(y, dtype=bool)
    s = np.asarray(score, dtype=np.float64)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s), dtype=np.float64)
    sorted_s = s[order]
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j + 2) / 2.0
        i = j + 1
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))
