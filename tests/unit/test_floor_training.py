"""The learned floor's training helpers: the regularised logistic fit and the AUC."""

from __future__ import annotations

import numpy as np
import pytest

from evals.floor_training import auc, logistic


def test_auc_counts_pairs_and_ties_half() -> None:
    assert auc([True, False], [0.9, 0.1]) == 1.0
    assert auc([True, False], [0.1, 0.9]) == 0.0
    assert auc([True, True, False], [0.5, 0.7, 0.5]) == 0.75
    assert np.isnan(auc([True], [0.3]))


def test_logistic_separates_and_shrinks_with_a_smaller_c() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 2))
    y = (x[:, 0] + 0.3 * rng.normal(size=200) > 0).astype(np.float64)
    strong, _ = logistic(x, y, 10.0)
    weak, _ = logistic(x, y, 0.01)
    assert strong[0] > 2.0
    assert abs(strong[1]) < 1.0
    assert 0.0 < weak[0] < strong[0]


def test_logistic_balances_the_classes() -> None:
    x = np.zeros((10, 1))
    y = np.array([1.0] * 8 + [0.0] * 2)
    _, intercept = logistic(x, y, 1.0)
    assert intercept == pytest.approx(0.0, abs=1e-6)  # balanced weights: no prior for the larger class
