"""Coreference on the CrossWOZ dev referring turns (reads ../shared/data/dev; skipped where it is absent)."""

from __future__ import annotations

import pytest

from evals.coref_crosswoz import DEFAULT, evaluate


@pytest.mark.skipif(not DEFAULT.exists(), reason=f"CrossWOZ dev data not found at {DEFAULT} (set RECALLFLOW_DEV_DATA)")
def test_crosswoz_accuracy_does_not_regress() -> None:
    right, total = evaluate(DEFAULT)
    assert total == 1479
    assert right / total >= 0.74  # measured 0.759; `python -m evals.coref_crosswoz` prints the figure
